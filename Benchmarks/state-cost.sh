#!/usr/bin/env bash
# What `--state` costs: paired runs of postback-verify over the same Apple-shaped corpus with and without a state
# (a fresh state each time), alternating A B A B so that the machine's drift moves both sides of a pair alike; prints
# each pair's wall-clock ratio and the median (see docs/state.md, "What it costs"). Settings, as environment
# variables:
#
#   N=20000 PAIRS=9 JOBS=2   corpus size, pairs, --jobs
#   STATE=                   the state to test: a file path (default: a fresh SQLite file in the work directory),
#                            or anything --state accepts; a file is deleted before each run so every run starts empty
#   RESET_STATE=             a command run before each --state run instead of deleting the file (for a state that
#                            is not a file)
#   BIN=path NO_BUILD=1 PACKAGE_DIR=.. BUILD_PATH=.. PYTHON=python3   as in common.sh
#   KEEP=1                   keep the work directory
set -euo pipefail

main() {
SCRIPT=state-cost.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
N="${N:-20000}"
PAIRS="${PAIRS:-9}"
JOBS="${JOBS:-2}"
KID="apple-cas-identifier/1"

now() { date +%s.%N; }

WORK="$(mktemp -d "${TMPDIR:-/tmp}/postback-verify-state-cost.XXXXXX")"
cleanup() { if [[ "${KEEP:-0}" == 1 ]]; then say "kept $WORK"; else rm -rf "$WORK"; fi; }
trap cleanup EXIT

release_binary

say "== corpus: $N distinct Apple-shaped postbacks"
"$PYTHON" "$HERE/make-corpus.py" --out "$WORK/corpus" -n "$N" --kid "$KID" --shape apple >&2
STATE="${STATE:-$WORK/state.sqlite}"
run=("$BIN" --quiet --format jsonl --jobs "$JOBS" --key "$KID=$WORK/corpus/key.pem")

reset_state() {
  if [[ -n "${RESET_STATE:-}" ]]; then sh -c "$RESET_STATE"; else rm -f "$STATE" "$STATE-wal" "$STATE-shm"; fi
}
timed() {  # prints the wall seconds of one run of "$@" (records to /dev/null; exit status 0 or 1 expected)
  local start end status=0
  start="$(now)"
  "$@" "$WORK/corpus/corpus.jsonl" > /dev/null || status=$?
  end="$(now)"
  ((status <= 1)) || die "run failed with status $status: $*"
  awk "BEGIN {print $end - $start}"
}

reset_state
timed "${run[@]}" --state "$STATE" > /dev/null   # warm-up: page cache, binary
load_before="$(cut -d ' ' -f 1-3 /proc/loadavg 2> /dev/null || echo unknown)"
ratios=() with=() without=()
for ((i = 1; i <= PAIRS; i++)); do
  reset_state
  a="$(timed "${run[@]}" --state "$STATE")"
  reset_state
  b="$(timed "${run[@]}")"
  with+=("$a"); without+=("$b")
  ratios+=("$(awk "BEGIN {printf \"%.4f\", $a / $b}")")
  say "   pair $i: --state $a s, without $b s, ratio ${ratios[-1]}"
done
ratio="$(printf '%s\n' "${ratios[@]}" | median)"
# Other work on the machine moves the wall-clock ratio by several per cent: quote the load with the figures.
load_after="$(cut -d ' ' -f 1-3 /proc/loadavg 2> /dev/null || echo unknown)"
say "== load average (1, 5, 15 min) before: $load_before; after: $load_after"
echo "| state | pairs | wall --state (median) | wall without (median) | median ratio | throughput kept |"
echo "|---|---|---|---|---|---|"
printf '| %s | %d | %.3f s | %.3f s | %.3f | %.1f %% |\n' "${STATE_LABEL:-SQLite file}" "$PAIRS" \
  "$(printf '%s\n' "${with[@]}" | median)" "$(printf '%s\n' "${without[@]}" | median)" "$ratio" \
  "$(awk "BEGIN {print 100 / $ratio}")"
}

main "$@"
