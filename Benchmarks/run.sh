#!/usr/bin/env bash
# postback-verify benchmark: throughput vs `openssl speed ecdsap256`, peak memory, single-item latency.
# See Benchmarks/README.md for what each figure means. Every setting is an environment variable:
#
#   N=20000            items in the throughput corpus (all distinct, fresh key)
#   RUNS=5             timed runs per CLI configuration (medians are reported); WARMUP=1 untimed run first
#   JOBS_ALL=$(nproc)  --jobs for the "all cores" row, and `openssl speed -multi` count
#   OPENSSL_SECONDS=5  `openssl speed -seconds` (each run signs for S s, then verifies for S s)
#   OPENSSL_RUNS=3     openssl runs per configuration (median verify/s)
#   MEM_ITEMS=1000000  items in the --no-dedupe memory run
#   MEM_SIGN_ALL=1     sign all MEM_ITEMS distinct bodies (~45-50 s on 2 cores); 0: sign DEDUPE_DISTINCT and
#                      repeat them (faster to make, but exact repeats hit the CLI's verified-token cache, so
#                      the run does less work than on distinct input; the row says which corpus was used)
#   DEDUPE_DISTINCT=20000 DEDUPE_REPEAT=50   the dedupe-on memory run (cycled: 1..N, 1..N, ...)
#   MEM_JOBS=$JOBS_ALL --jobs for the memory runs
#   IDLE=0.2 IDLE_WAIT=120   before each timed run, wait (up to IDLE_WAIT s) until the machine is less than
#                      IDLE busy (fraction of all cores; IDLE=0: do not wait). "foreign load" columns show how
#                      busy the rest of the machine was during the runs (median); distrust rows where it is high
#   SINGLE_RUNS=50     runs of the single-item timing (measure.py, and hyperfine too if installed)
#   QUICK=1            small and fast: N=5000 RUNS=3 OPENSSL_SECONDS=2 OPENSSL_RUNS=1 PAIRS=3, no memory runs
#   PAIRS=7 PAIR_SECONDS=2   paired ratios: PAIRS times `openssl speed -seconds PAIR_SECONDS` then one CLI run,
#                      per --jobs configuration; the median of the per-pair ratios (0: leave out)
#   SHAPE=apple        the corpus's bytes: apple (Apple's serialisation and mix of postbacks) or plain (the old
#                      corpus); see make-corpus.py
#   KID=apple-cas-identifier/1   the kid the corpus is signed under (passed with --key)
#   SKIP_MIXED=1       leave out the "mixed day" pairs (all cores, ~10 % retries and ~1 % forged, dedupe on)
#   SKIP_OPENSSL=1 SKIP_THROUGHPUT=1 SKIP_MEM=1 SKIP_SINGLE=1   leave a part out
#   CALLGRIND=1        also profile one --jobs 1 run over CALLGRIND_N=2000 items with valgrind (slow)
#   PACKAGE_DIR=..     the package to build (default: the repository holding this script)
#   BUILD_PATH=$PACKAGE_DIR/.build   swift build --scratch-path (binary: $BUILD_PATH/release/postback-verify)
#   NO_BUILD=1         do not run `swift build` (use the binary already there); BIN=path overrides the binary
#   KEEP=1             keep the work directory (corpora, keys, outputs) and print its path
#   LABEL=text         printed in the header (e.g. "baseline, commit abc1234")
#   CALLGRIND_OUT=file where the callgrind profile goes (default: the work directory, removed unless KEEP=1)
#   CLI_ARGS=          more options for every CLI run over the throughput corpus (timed runs and pairs), e.g.
#                      "--schema $PWD/Fixtures/schema/example-schema.json" (absolute paths)
#   PYTHON=python3     Python 3.11 with the `cryptography` package
set -euo pipefail

# The whole script is one function, so bash has read all of it before it starts: editing this file while a
# long run is going cannot derail that run.
main() {

PACKAGE_GIVEN="${PACKAGE_DIR:+1}"
SCRIPT=run.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
NPROC="$(nproc)"
QUICK="${QUICK:-0}"
if [[ "$QUICK" == 1 ]]; then
  : "${N:=5000}" "${RUNS:=3}" "${OPENSSL_SECONDS:=2}" "${OPENSSL_RUNS:=1}" "${SKIP_MEM:=1}" "${SINGLE_RUNS:=20}" "${PAIRS:=3}"
fi
N="${N:-20000}"
RUNS="${RUNS:-5}"
WARMUP="${WARMUP:-1}"
JOBS_ALL="${JOBS_ALL:-$NPROC}"
OPENSSL_SECONDS="${OPENSSL_SECONDS:-5}"
OPENSSL_RUNS="${OPENSSL_RUNS:-3}"
MEM_ITEMS="${MEM_ITEMS:-1000000}"
MEM_SIGN_ALL="${MEM_SIGN_ALL:-1}"
DEDUPE_DISTINCT="${DEDUPE_DISTINCT:-20000}"
DEDUPE_REPEAT="${DEDUPE_REPEAT:-50}"
MEM_JOBS="${MEM_JOBS:-$JOBS_ALL}"
SINGLE_RUNS="${SINGLE_RUNS:-50}"
IDLE="${IDLE:-0.2}"
IDLE_WAIT="${IDLE_WAIT:-120}"
CALLGRIND="${CALLGRIND:-0}"
CALLGRIND_N="${CALLGRIND_N:-2000}"
SKIP_OPENSSL="${SKIP_OPENSSL:-0}"
SKIP_THROUGHPUT="${SKIP_THROUGHPUT:-0}"
PAIRS="${PAIRS:-7}"
PAIR_SECONDS="${PAIR_SECONDS:-2}"
SKIP_MEM="${SKIP_MEM:-0}"
SKIP_SINGLE="${SKIP_SINGLE:-0}"
KEEP="${KEEP:-0}"
KID="${KID:-apple-cas-identifier/1}"
SHAPE="${SHAPE:-apple}"
SKIP_MIXED="${SKIP_MIXED:-0}"
MEM_TARGET_NODEDUPE_MIB=64
MEM_TARGET_DEDUPE_MIB=96
SINGLE_TARGET_MS=20
RATIO_TARGET="3.5 (--jobs 1), 3.0 (all cores), 2.8 (mixed day)"

need() { command -v "$1" >/dev/null 2>&1 || die "$1 not found${2:+ ($2)}"; }

need "$PYTHON"
need awk
[[ "$SKIP_OPENSSL" == 1 ]] || need openssl
"$PYTHON" -c 'import cryptography' 2>/dev/null || die "$PYTHON lacks the cryptography package (pip install cryptography)"
[[ "$CALLGRIND" != 1 ]] || need valgrind "apt-get install -y valgrind"

WORK="$(mktemp -d "${TMPDIR:-/tmp}/postback-verify-bench.XXXXXX")"
cleanup() {
  if [[ "$KEEP" == 1 ]]; then say "kept work directory: $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ------------------------------------------------------------------------------------------------ build
BIN_GIVEN="${BIN:+1}"
release_binary

# ------------------------------------------------------------------------------------------------ helpers
make_corpus() {  # DIR ARGS... : a fresh key and corpus in DIR
  local dir="$1"; shift
  "$PYTHON" "$HERE/make-corpus.py" --out "$dir" --kid "$KID" --shape "$SHAPE" "$@"
}
measure() { "$PYTHON" "$HERE/measure.py" "$@"; }

IDLE_ARGS=()
[[ "$IDLE" == 0 ]] || IDLE_ARGS=(--wait-idle "$IDLE" --max-wait "$IDLE_WAIT")
pct() { calc '%.0f%%' "100*$1"; }

# "256 bits ecdsa (nistp256)   0.0000s   0.0001s  50352.0  16641.0": the last field is verify/s
verify_per_s() { awk '/nistp256/ && $NF ~ /^[0-9.]+$/ {v = $NF} END {if (v == "") exit 1; print v}' "$1"; }

OSSL_FOREIGN=""
openssl_verify_per_s() {  # [-multi K]: median verify/s over OPENSSL_RUNS runs (sets OSSL_FOREIGN)
  local i v vals=() foreign=() f
  for ((i = 0; i < OPENSSL_RUNS; i++)); do
    read -r _ _ _ _ _ _ _ f _ < <(measure --runs 1 "${IDLE_ARGS[@]}" --stdout "$WORK/openssl.txt" \
      --stderr "$WORK/openssl.err" -- \
      openssl speed "$@" -seconds "$OPENSSL_SECONDS" ecdsap256) || die "openssl speed $* failed"
    v="$(verify_per_s "$WORK/openssl.txt")" \
      || die "could not read verify/s from openssl speed $*"
    vals+=("$v")
    foreign+=("$f")
  done
  OSSL_FOREIGN="$(printf '%s\n' "${foreign[@]}" | median)"
  printf '%s\n' "${vals[@]}" | median
}

# Header -----------------------------------------------------------------------------------------------
COMMIT="$(git -C "$PACKAGE_DIR" rev-parse --short HEAD 2>/dev/null || echo unknown)"
if [[ "$COMMIT" != unknown ]] && [[ -n "$(git -C "$PACKAGE_DIR" status --porcelain -- Sources Package.swift 2>/dev/null)" ]]; then
  COMMIT="$COMMIT (+ uncommitted changes in Sources/)"
fi
echo "# postback-verify benchmark, $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "machine:   $(nproc) cores ($(grep -c '^processor' /proc/cpuinfo) logical), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -sr)"
echo "openssl:   $(openssl version 2>/dev/null || echo n/a)"
echo "swift:     $(swift --version 2>/dev/null | head -1 || echo n/a)"
[[ -z "${LABEL:-}" ]] || echo "label:     $LABEL"
if [[ -n "$BIN_GIVEN" && -z "$PACKAGE_GIVEN" ]]; then
  echo "binary:    $BIN ($("$BIN" --version 2>/dev/null | head -1)); BIN given, package not known"
else
  echo "binary:    $BIN ($("$BIN" --version 2>/dev/null | head -1)); package $PACKAGE_DIR at $COMMIT"
fi
echo "load:      $(cut -d' ' -f1-3 /proc/loadavg) (1/5/15 min, before the run; other work on the machine skews results)"
echo "settings:  N=$N RUNS=$RUNS (+$WARMUP warm-up) JOBS_ALL=$JOBS_ALL OPENSSL_SECONDS=$OPENSSL_SECONDS OPENSSL_RUNS=$OPENSSL_RUNS SHAPE=$SHAPE KID=$KID"
echo

# ------------------------------------------------------------------------------------------------ throughput
ROWS=()
row() { ROWS+=("$(printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s |' "$@")"); }

OSSL1="" OSSLN=""
if [[ "$SKIP_OPENSSL" != 1 ]]; then
  say "== openssl speed -seconds $OPENSSL_SECONDS ecdsap256 (x$OPENSSL_RUNS)"
  openssl_verify_per_s >"$WORK/v" && OSSL1="$(<"$WORK/v")"
  row "openssl speed ecdsap256 (verify)" "-" "-" "$(calc '%.0f' "$OSSL1")" "$(calc '%.1f' "1e6/$OSSL1")" "-" "-" \
    "1 (reference)" "$(pct "$OSSL_FOREIGN")"
  say "== openssl speed -multi $JOBS_ALL -seconds $OPENSSL_SECONDS ecdsap256 (x$OPENSSL_RUNS)"
  openssl_verify_per_s -multi "$JOBS_ALL" >"$WORK/v" && OSSLN="$(<"$WORK/v")"
  row "openssl speed -multi $JOBS_ALL ecdsap256 (verify)" "-" "-" "$(calc '%.0f' "$OSSLN")" "$(calc '%.1f' "1e6/$OSSLN")" \
    "-" "-" "1 (reference)" "$(pct "$OSSL_FOREIGN")"
fi

if [[ "$SKIP_THROUGHPUT" != 1 ]]; then
  say "== corpus: $N distinct signed postback bodies"
  make_corpus "$WORK/tp" -n "$N" >&2
  KEYARG=(--key "$KID=$WORK/tp/key.pem")
  # shellcheck disable=SC2206 # CLI_ARGS is split on spaces on purpose: options, none of them with spaces
  [[ -z "${CLI_ARGS:-}" ]] || KEYARG+=(${CLI_ARGS})
  # sanity: every item valid, one record per item (otherwise the timings would be meaningless)
  "$BIN" --quiet --format jsonl "${KEYARG[@]}" "$WORK/tp/corpus.jsonl" >"$WORK/tp/records.jsonl" \
    || die "the CLI did not accept every corpus item (exit $?); see $WORK/tp/records.jsonl (KEEP=1)"
  records="$(wc -l <"$WORK/tp/records.jsonl")"
  valid="$(grep -c '"verdict": *"valid"' "$WORK/tp/records.jsonl" || true)"
  [[ "$records" -eq "$N" && "$valid" -eq "$N" ]] || die "expected $N valid records, got $records records, $valid valid"
  rm -f "$WORK/tp/records.jsonl"

  for jobs in 1 "$JOBS_ALL"; do
    say "== postback-verify --jobs $jobs over $N items ($RUNS runs + $WARMUP warm-up)"
    read -r med _ _ cpu rss_max _ _ foreign _ < <(measure --runs "$RUNS" --warmup "$WARMUP" "${IDLE_ARGS[@]}" \
      --verbose -- "$BIN" --quiet --format jsonl "${KEYARG[@]}" --jobs "$jobs" "$WORK/tp/corpus.jsonl") \
      || die "measurement failed"
    if [[ "$jobs" == 1 ]]; then ref="$OSSL1"; else ref="$OSSLN"; fi
    ratio="-"
    [[ -z "$ref" ]] || ratio="$(calc '%.3f' "$N/$med/$ref")"
    row "postback-verify --jobs $jobs" "$N" "$(calc '%.3f' "$med")" "$(calc '%.0f' "$N/$med")" \
      "$(calc '%.1f' "1e6*$med/$N")" "$(calc '%.1f' "1e6*$cpu/$N")" "$(calc '%.1f' "$rss_max/1024")" "$ratio" \
      "$(pct "$foreign")"
    [[ "$jobs" != "$JOBS_ALL" ]] || break  # JOBS_ALL=1: one row only
  done
fi

# Paired ratios: this VM's speed drifts by 20-30 % within minutes (the same openssl command gave 11,800 and 16,700
# verify/s in one afternoon), so a ratio of figures taken minutes apart carries that drift. Here each CLI run
# directly follows an `openssl speed` run of the same width, and the ratio is taken per pair; the median of the
# pairs is the figure least moved by drift. The configurations take turns: round r runs one pair of each (--jobs 1,
# all cores, the mixed day), so a slow spell of the machine falls on all of them alike, not on whichever came last
# (the mixed day, which costs what the all-cores run costs per item, measured 15 % lower when it ran last).
PAIR_ROWS=()
PAIR_NAMES=()
declare -A PAIR_JOBS PAIR_LABEL PAIR_CORPUS PAIR_KEY PAIR_RATIOS PAIR_OSSL PAIR_CLI
# add_pair NAME JOBS LABEL CORPUS KEY: a configuration of the rounds (KEY: the --key argument, KID=PATH).
add_pair() {
  PAIR_NAMES+=("$1")
  PAIR_JOBS[$1]="$2" PAIR_LABEL[$1]="$3" PAIR_CORPUS[$1]="$4" PAIR_KEY[$1]="$5"
  PAIR_RATIOS[$1]="" PAIR_OSSL[$1]="" PAIR_CLI[$1]=""
}
# run_pair NAME ROUND: an `openssl speed` run of the configuration's width immediately followed by one CLI run with
# its --jobs over its corpus ($N lines; a non-zero exit is fine, the mixed day has invalid items).
run_pair() {
  local name="$1" round="$2" jobs="${PAIR_JOBS[$1]}" multi=() ossl start end ratio extra=()
  [[ "$jobs" == 1 ]] || multi=(-multi "$jobs")
  # shellcheck disable=SC2206 # CLI_ARGS is split on spaces on purpose, as above
  [[ "$name" == mixed || -z "${CLI_ARGS:-}" ]] || extra=(${CLI_ARGS})
  openssl speed "${multi[@]}" -seconds "$PAIR_SECONDS" ecdsap256 >"$WORK/pair.txt" 2>/dev/null \
    || die "openssl speed failed"
  ossl="$(verify_per_s "$WORK/pair.txt")" || die "could not read verify/s"
  start="$(date +%s.%N)"
  "$BIN" --quiet --format jsonl --key "${PAIR_KEY[$name]}" "${extra[@]}" --jobs "$jobs" "${PAIR_CORPUS[$name]}" \
    >/dev/null || true
  end="$(date +%s.%N)"
  ratio="$(calc '%.4f' "$N/($end-$start)/$ossl")"
  PAIR_RATIOS[$name]+="$ratio "
  PAIR_OSSL[$name]+="$ossl "
  PAIR_CLI[$name]+="$(calc '%.1f' "$N/($end-$start)") "
  say "   round $round, ${PAIR_LABEL[$name]}: openssl $ossl verify/s, CLI $(calc '%.0f' "$N/($end-$start)") items/s, ratio $ratio"
}
# values LIST: the space-separated figures of LIST, one a line.
values() { tr ' ' '\n' <<<"$1" | grep .; }
# pair_row NAME: the configuration's row: the medians of both sides, the median per-pair ratio, and its range.
pair_row() {
  local name="$1" sorted ossl cli
  sorted="$(values "${PAIR_RATIOS[$name]}" | sort -g)"
  ossl="$(values "${PAIR_OSSL[$name]}" | median)"
  cli="$(values "${PAIR_CLI[$name]}" | median)"
  PAIR_ROWS+=("| ${PAIR_LABEL[$name]} | $PAIRS | $(calc '%.0f' "$ossl") | $(calc '%.0f' "$cli") | $(calc '%.3f' "$cli/$ossl") | $(median <<<"$sorted" | xargs printf '%.3f') | $(head -1 <<<"$sorted" | xargs printf '%.3f') | $(tail -1 <<<"$sorted" | xargs printf '%.3f') |")
}

if [[ "$SKIP_THROUGHPUT" != 1 && "$SKIP_OPENSSL" != 1 && "$PAIRS" -gt 0 ]]; then
  add_pair jobs1 1 "postback-verify --jobs 1" "$WORK/tp/corpus.jsonl" "$KID=$WORK/tp/key.pem"
  [[ "$JOBS_ALL" == 1 ]] \
    || add_pair all "$JOBS_ALL" "postback-verify --jobs $JOBS_ALL" "$WORK/tp/corpus.jsonl" "$KID=$WORK/tp/key.pem"
  # A mixed day: all cores, dedupe on (the default), ~10 % exact retries (duplicates) and ~1 % forged items (exit
  # status 1 expected).
  if [[ "$SKIP_MIXED" != 1 ]]; then
    say "== corpus: mixed day, $N lines"
    make_corpus "$WORK/mx" -n "$N" --mixed >&2
    status=0
    "$BIN" --quiet --format jsonl --key "$KID=$WORK/mx/key.pem" "$WORK/mx/corpus.jsonl" >"$WORK/mx/records.jsonl" \
      || status=$?
    [[ "$status" -eq 1 ]] || die "mixed day: expected exit status 1 (duplicates and forgeries), got $status"
    records="$(wc -l <"$WORK/mx/records.jsonl")"
    [[ "$records" -eq "$N" ]] || die "mixed day: expected $N records, got $records"
    mixed_counts="$(grep -o '"code": *"[a-z-]*"' "$WORK/mx/records.jsonl" | sed 's/.*"\([a-z-]*\)"$/\1/' | sort \
      | uniq -c | awk '{printf "%s%s %s", sep, $1, $2; sep=", "}')"
    rm -f "$WORK/mx/records.jsonl"
    add_pair mixed "$JOBS_ALL" "mixed day ($mixed_counts), --jobs $JOBS_ALL" "$WORK/mx/corpus.jsonl" \
      "$KID=$WORK/mx/key.pem"
  fi
  say "== paired: $PAIRS rounds, each an openssl speed run then a postback-verify run per configuration (${PAIR_NAMES[*]})"
  for ((round = 1; round <= PAIRS; round++)); do
    for name in "${PAIR_NAMES[@]}"; do run_pair "$name" "$round"; done
  done
  for name in "${PAIR_NAMES[@]}"; do pair_row "$name"; done
  rm -rf "$WORK/mx"
fi

if ((${#ROWS[@]})); then
  echo "## Throughput (medians: $RUNS CLI runs, $OPENSSL_RUNS openssl runs; ratio = items/s ÷ openssl verify/s, target ≥ $RATIO_TARGET)"
  echo
  echo "| config | items | median s | items/s | µs/item (wall) | µs/item (CPU) | peak RSS MiB | ratio to openssl | foreign load |"
  echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
  printf '%s\n' "${ROWS[@]}"
  echo
fi
if ((${#PAIR_ROWS[@]})); then
  echo "## Paired ratios (each CLI run right after an openssl speed run of the same width, the configurations taking turns round by round; target ≥ $RATIO_TARGET)"
  echo
  echo "| config | pairs | openssl verify/s (median) | CLI items/s (median) | ratio of the medians | median ratio | min | max |"
  echo "|---|---:|---:|---:|---:|---:|---:|---:|"
  printf '%s\n' "${PAIR_ROWS[@]}"
  echo
fi

# ------------------------------------------------------------------------------------------------ memory
mem_row() {  # LABEL ITEMS TARGET_MIB STATUS CORPUS KEY [CLI OPTIONS...]
  local label="$1" items="$2" target="$3" status="$4" corpus="$5" key="$6" s rss foreign mib ok
  shift 6
  read -r s _ _ _ rss _ _ foreign _ < <(measure --runs 1 --status "$status" "${IDLE_ARGS[@]}" -- \
    "$BIN" --quiet --format jsonl --key "$KID=$key" --jobs "$MEM_JOBS" "$@" "$corpus") || die "measurement failed"
  mib="$(calc '%.1f' "$rss/1024")"
  ok="$(awk -v m="$mib" -v t="$target" 'BEGIN {print (m <= t) ? "met" : "MISSED"}')"
  echo "| $label | $items | $(calc '%.1f' "$s") | $(calc '%.0f' "$items/$s") | $mib | ≤ $target | $ok | $(pct "$foreign") |"
}

if [[ "$SKIP_MEM" != 1 ]]; then
  MEM_ROWS=()
  if [[ "$MEM_SIGN_ALL" == 1 ]]; then
    say "== corpus: $MEM_ITEMS distinct bodies (MEM_SIGN_ALL=1; this takes a while)"
    make_corpus "$WORK/mem" -n "$MEM_ITEMS" >&2
    what="$MEM_ITEMS distinct"
  else
    ((MEM_ITEMS % DEDUPE_DISTINCT == 0)) || die "MEM_ITEMS must be a multiple of DEDUPE_DISTINCT when MEM_SIGN_ALL=0"
    say "== corpus: $DEDUPE_DISTINCT distinct bodies x $((MEM_ITEMS / DEDUPE_DISTINCT)) (MEM_SIGN_ALL=0)"
    make_corpus "$WORK/mem" -n "$DEDUPE_DISTINCT" --repeat "$((MEM_ITEMS / DEDUPE_DISTINCT))" >&2
    what="$DEDUPE_DISTINCT distinct × $((MEM_ITEMS / DEDUPE_DISTINCT))"
  fi
  say "== postback-verify --no-dedupe over $MEM_ITEMS items"
  MEM_ROWS+=("$(mem_row "--no-dedupe, $what" "$MEM_ITEMS" "$MEM_TARGET_NODEDUPE_MIB" 0 \
    "$WORK/mem/corpus.jsonl" "$WORK/mem/key.pem" --no-dedupe)")
  rm -rf "$WORK/mem"

  total=$((DEDUPE_DISTINCT * DEDUPE_REPEAT))
  say "== corpus: $DEDUPE_DISTINCT distinct bodies x $DEDUPE_REPEAT (cycled)"
  make_corpus "$WORK/dd" -n "$DEDUPE_DISTINCT" --repeat "$DEDUPE_REPEAT" >&2
  say "== postback-verify (dedupe on) over $total items; exit status 1 expected (repeats are duplicates)"
  MEM_ROWS+=("$(mem_row "dedupe on, $DEDUPE_DISTINCT distinct × $DEDUPE_REPEAT (cycled)" "$total" \
    "$MEM_TARGET_DEDUPE_MIB" 1 "$WORK/dd/corpus.jsonl" "$WORK/dd/key.pem")")
  rm -rf "$WORK/dd"

  echo "## Memory (one run each, --jobs $MEM_JOBS)"
  echo
  echo "| run | items | s | items/s | peak RSS MiB | target MiB | | foreign load |"
  echo "|---|---:|---:|---:|---:|---:|---|---:|"
  printf '%s\n' "${MEM_ROWS[@]}"
  echo
fi

# ------------------------------------------------------------------------------------------------ single item
if [[ "$SKIP_SINGLE" != 1 ]]; then
  say "== single item ($SINGLE_RUNS runs)"
  make_corpus "$WORK/one" -n 1 >&2
  one=("$BIN" --quiet --format jsonl --key "$KID=$WORK/one/key.pem" "$WORK/one/single.jsonl")
  "${one[@]}" >/dev/null || die "the single item did not verify"
  read -r med min max _ rss _ _ foreign _ < <(measure --runs "$SINGLE_RUNS" --warmup 3 "${IDLE_ARGS[@]}" -- "${one[@]}") \
    || die "measurement failed"
  ms="$(calc '%.1f' "$med*1000")"
  ok="$(awk -v m="$ms" -v t="$SINGLE_TARGET_MS" 'BEGIN {print (m < t) ? "met" : "MISSED"}')"
  SINGLE_ROWS=("| measure.py | $SINGLE_RUNS | $ms | $(calc '%.1f' "$min*1000") | $(calc '%.1f' "$max*1000") | $(calc '%.1f' "$rss/1024") | < $SINGLE_TARGET_MS | $ok | $(pct "$foreign") |")
  if command -v hyperfine >/dev/null 2>&1; then
    if hyperfine --shell=none --style none --warmup 3 --runs "$SINGLE_RUNS" --export-json "$WORK/one/hf.json" \
        "$(printf '%q ' "${one[@]}")" >/dev/null 2>&1; then
      read -r med min max < <("$PYTHON" -c 'import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
print(r["median"], r["min"], r["max"])' "$WORK/one/hf.json")
      ms="$(calc '%.1f' "$med*1000")"
      ok="$(awk -v m="$ms" -v t="$SINGLE_TARGET_MS" 'BEGIN {print (m < t) ? "met" : "MISSED"}')"
      SINGLE_ROWS+=("| hyperfine | $SINGLE_RUNS | $ms | $(calc '%.1f' "$min*1000") | $(calc '%.1f' "$max*1000") | - | < $SINGLE_TARGET_MS | $ok | - |")
    else
      say "hyperfine failed; only measure.py figures"
    fi
  fi
  echo "## Single item (one postback body, process start-up included, default --jobs)"
  echo
  echo "| measured with | runs | median ms | min ms | max ms | peak RSS MiB | target ms | | foreign load |"
  echo "|---|---:|---:|---:|---:|---:|---:|---|---:|"
  printf '%s\n' "${SINGLE_ROWS[@]}"
  echo
fi

# ------------------------------------------------------------------------------------------------ callgrind
if [[ "$CALLGRIND" == 1 ]]; then
  say "== callgrind: --jobs 1 over $CALLGRIND_N items (slow)"
  make_corpus "$WORK/cg" -n "$CALLGRIND_N" >&2
  out="${CALLGRIND_OUT:-$WORK/cg/callgrind.out}"
  valgrind --tool=callgrind --callgrind-out-file="$out" "$BIN" --quiet --format jsonl \
    --key "$KID=$WORK/cg/key.pem" --jobs 1 "$WORK/cg/corpus.jsonl" >/dev/null 2>"$WORK/cg/valgrind.log" \
    || die "valgrind run failed; see $WORK/cg/valgrind.log (KEEP=1)"
  echo "## callgrind, --jobs 1, $CALLGRIND_N items (Ir = instructions; profile: $out)"
  echo
  "$PYTHON" "$HERE/callgrind-summary.py" --items "$CALLGRIND_N" "$out"
fi
}

main "$@"
