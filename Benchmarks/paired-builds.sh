#!/usr/bin/env bash
# Two builds of postback-verify on the same inputs, paired: the working tree's release build (A) against a base
# commit's (B), runs alternating A B A B so that the machine's drift moves both sides of a pair alike. For each
# configuration it prints every pair's CPU-time ratio A/B (user + system of the run, the figure other work on the
# machine moves least) and wall ratio, and their medians, under one header with the date, the machine and the load.
# An issue's "within 5 % of today (paired)" is the median CPU ratio at most 1.05.
#
#   Benchmarks/paired-builds.sh BASE_REV > Benchmarks/results/paired-builds.md
#
# Configurations (each over its own input, the same for A and B):
#   jobs1        20,000 distinct Apple-shaped postbacks, --jobs 1, no deduplication state
#   jobs2        the same, --jobs 2
#   mixed-day    a mixed day (about 10 % exact retries, 1 % forged), --jobs 2, deduplication in memory
#   state        the 20,000 distinct, --jobs 2, --state on a fresh SQLite file each run
#   schema       the 20,000 distinct, --jobs 1, no state, decoded with Fixtures/schema/example-schema.json
# Settings, as environment variables:
#   N=20000 PAIRS=11   corpus size and pairs per configuration
#   CONFIGS="jobs1 jobs2 mixed-day state schema"
#   BASE_BIN=path      a base binary built elsewhere (BASE_REV then only labels it)
#   BIN=path NO_BUILD=1 PACKAGE_DIR=.. BUILD_PATH=.. PYTHON=python3   the A side, as in common.sh
#   KEEP=1             keep the work directory
set -euo pipefail

main() {
SCRIPT=paired-builds.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
BASE_REV="${1:-}"
[[ -n "$BASE_REV" ]] || die "usage: paired-builds.sh BASE_REV (a commit to compare the working tree's build with)"
N="${N:-20000}"
PAIRS="${PAIRS:-11}"
CONFIGS="${CONFIGS:-jobs1 jobs2 mixed-day state schema}"
KID="apple-cas-identifier/1"

WORK="$(mktemp -d "${TMPDIR:-/tmp}/postback-verify-paired-builds.XXXXXX")"
cleanup() {
  if [[ -n "${BASE_TREE:-}" ]]; then git -C "$PACKAGE_DIR" worktree remove --force "$BASE_TREE" > /dev/null 2>&1 || true; fi
  if [[ "${KEEP:-0}" == 1 ]]; then say "kept $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT

release_binary
if [[ -z "${BASE_BIN:-}" ]]; then
  BASE_TREE="$WORK/base"
  git -C "$PACKAGE_DIR" worktree add --detach "$BASE_TREE" "$BASE_REV" >&2
  say "== swift build -c release of $BASE_REV"
  swift build -c release --product postback-verify --package-path "$BASE_TREE" \
    --scratch-path "$WORK/base-build" >&2
  BASE_BIN="$WORK/base-build/release/postback-verify"
fi
[[ -x "$BASE_BIN" ]] || die "no base executable at $BASE_BIN"
base_label="$(git -C "$PACKAGE_DIR" rev-parse --short "$BASE_REV" 2> /dev/null || echo "$BASE_REV")"
head_label="$(git -C "$PACKAGE_DIR" rev-parse --short HEAD)$(git -C "$PACKAGE_DIR" diff --quiet HEAD -- Sources Package.swift || echo '+changes')"

say "== corpora: $N distinct Apple-shaped postbacks, and a mixed day"
"$PYTHON" "$HERE/make-corpus.py" --out "$WORK/distinct" -n "$N" --kid "$KID" --shape apple >&2
"$PYTHON" "$HERE/make-corpus.py" --out "$WORK/mixed" -n "$N" --kid "$KID" --shape apple --mixed >&2

STATE="$WORK/state.sqlite"
# One run of binary $1 in configuration $2: prints "cpu wall" in seconds (records to /dev/null; status 0 or 1).
timed() {
  local bin="$1" config="$2" corpus="$WORK/distinct" args=(--jobs 2) status=0
  case "$config" in
    jobs1) args=(--jobs 1 --no-dedupe) ;;
    jobs2) args=(--jobs 2 --no-dedupe) ;;
    mixed-day) corpus="$WORK/mixed" ;;
    state) rm -f "$STATE" "$STATE-wal" "$STATE-shm"; args=(--jobs 2 --state "$STATE") ;;
    schema) args=(--jobs 1 --no-dedupe --schema "$PACKAGE_DIR/Fixtures/schema/example-schema.json") ;;
    *) die "unknown configuration $config" ;;
  esac
  local times="$WORK/times"
  /usr/bin/env python3 - "$times" "$bin" --quiet --format jsonl --key "$KID=$corpus/key.pem" "${args[@]}" \
    "$corpus/corpus.jsonl" <<'PY' || status=$?
import os, subprocess, sys, time
out, command = sys.argv[1], sys.argv[2:]
start = time.monotonic()
with open(os.devnull, "wb") as null:
    child = subprocess.Popen(command, stdout=null)
    _, status, usage = os.wait4(child.pid, 0)
wall = time.monotonic() - start
with open(out, "w") as f:
    f.write(f"{usage.ru_utime + usage.ru_stime:.6f} {wall:.6f}\n")
code = os.waitstatus_to_exitcode(status)
sys.exit(code if code >= 0 else 128 - code)
PY
  ((status <= 1)) || die "$bin ($config) exited with status $status"
  cat "$times"
}

load_before="$(cut -d ' ' -f 1-3 /proc/loadavg 2> /dev/null || echo unknown)"
started="$(date -u '+%Y-%m-%d %H:%M')"
rows=()
for config in $CONFIGS; do
  timed "$BIN" "$config" > /dev/null; timed "$BASE_BIN" "$config" > /dev/null   # warm-up: page cache, binaries
  cpu_ratios=() wall_ratios=() a_cpu=() b_cpu=()
  for ((i = 1; i <= PAIRS; i++)); do
    read -r ac aw < <(timed "$BIN" "$config")
    read -r bc bw < <(timed "$BASE_BIN" "$config")
    a_cpu+=("$ac"); b_cpu+=("$bc")
    cpu_ratios+=("$(calc '%.4f' "$ac / $bc")"); wall_ratios+=("$(calc '%.4f' "$aw / $bw")")
    say "   $config pair $i: cpu $ac / $bc s (${cpu_ratios[-1]}), wall $aw / $bw s (${wall_ratios[-1]})"
  done
  rows+=("$(printf '| %s | %d | %.3f / %.3f s | %.3f | %.3f | %s |' "$config" "$PAIRS" \
    "$(printf '%s\n' "${a_cpu[@]}" | median)" "$(printf '%s\n' "${b_cpu[@]}" | median)" \
    "$(printf '%s\n' "${cpu_ratios[@]}" | median)" "$(printf '%s\n' "${wall_ratios[@]}" | median)" \
    "$(printf '%s\n' "${cpu_ratios[@]}" | sort -g | xargs printf '%.3f ' | sed 's/ $//')")")
done
load_after="$(cut -d ' ' -f 1-3 /proc/loadavg 2> /dev/null || echo unknown)"

cpu_model="$(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo 2> /dev/null || echo unknown)"
memory="$(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo 2> /dev/null || echo unknown)"
echo "# postback-verify, two builds paired (Benchmarks/paired-builds.sh $BASE_REV), $started-$(date -u +%H:%M) UTC"
echo "machine:   $(nproc) cores, $cpu_model, $memory, $(uname -sr)"
echo "builds:    A = $head_label (the working tree), B = $base_label; swift build -c release"
echo "load:      $load_before before, $load_after after (1/5/15 min; the benchmark's own runs included)"
echo "settings:  N=$N, $PAIRS pairs per configuration, A then B in each pair, one warm-up run each"
echo
echo "| configuration | pairs | CPU A / B (medians) | median CPU ratio A/B | median wall ratio A/B | CPU ratios, sorted |"
echo "|---|---:|---|---:|---:|---|"
printf '%s\n' "${rows[@]}"
}

main "$@"
