#!/usr/bin/env bash
# postback-verify flood benchmark: what each kind of attack traffic costs, beside honest traffic (issue 15).
# For every flood (make-floods.py), PAIRS triplets: an `openssl speed -seconds PAIR_SECONDS ecdsap256` run, then one
# `postback-verify --jobs 1` run over the flood, then one over honest Apple-shaped postbacks; the table gives the
# medians of the per-triplet figures: the flood's and honest traffic's ratio to openssl (items/s ÷ verify/s), the
# flood's rate as a fraction of honest traffic's (items per second; bytes per second for the 16 KiB floods), its
# CPU time per item, MB/s and peak RSS. Then peak RSS of a
# 16 KiB flood and of honest items at --jobs 1, 2 and 16. Settings (environment):
#
#   N=20000          honest bodies, and lines of each cheap flood
#   MAX_N=2000       lines of each 16 KiB flood
#   MEM_N=10000      items of the memory runs (16 KiB flood and honest)
#   MEM_JOBS="1 2 16"  --jobs of the memory runs
#   PAIRS=3 PAIR_SECONDS=2
#   FLOODS="..."     which floods (default: all of make-floods.py's)
#   PACKAGE_DIR, BUILD_PATH, NO_BUILD, BIN, PYTHON (common.sh), KEEP
set -euo pipefail

main() {
SCRIPT=floods.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
N="${N:-20000}"
MAX_N="${MAX_N:-2000}"
MEM_N="${MEM_N:-10000}"
MEM_JOBS="${MEM_JOBS:-1 2 16}"
PAIRS="${PAIRS:-3}"
PAIR_SECONDS="${PAIR_SECONDS:-2}"
FLOODS="${FLOODS:-forged unknown-kid malformed skan-1.0 skan-2.0 skan-2.2 skan-4.0 nested objects numbers members escapes long-number}"
KID="apple-cas-identifier/1"

release_binary
WORK="$(mktemp -d "${TMPDIR:-/tmp}/postback-floods.XXXXXX")"
if [[ "${KEEP:-0}" == 1 ]]; then say "work directory: $WORK"; else trap 'rm -rf "$WORK"' EXIT; fi

say "== corpora: $N honest bodies, floods of $N (16 KiB ones: $MAX_N)"
"$PYTHON" "$HERE/make-corpus.py" --out "$WORK" -n "$N" --kid "$KID" >&2
"$PYTHON" "$HERE/make-floods.py" --honest "$WORK" -n "$N" --max-n "$MAX_N" >&2
KEYARG=(--key "$KID=$WORK/key.pem")

echo "# postback-verify flood benchmark, $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "machine:   $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(uname -sr)"
echo "openssl:   $(openssl version 2>/dev/null || echo n/a)"
echo "binary:    $BIN ($(git -C "$PACKAGE_DIR" rev-parse --short HEAD 2>/dev/null || echo unknown))"
echo "load:      $(cut -d' ' -f1-3 /proc/loadavg) (1/5/15 min, before the run)"
echo "settings:  N=$N MAX_N=$MAX_N MEM_N=$MEM_N PAIRS=$PAIRS PAIR_SECONDS=$PAIR_SECONDS, --jobs 1 for the rates"
echo

# cli FILE: one --jobs 1 run; prints "seconds cpu_seconds peak_rss_kib"
cli() {
  local s cpu rss
  read -r s _ _ cpu rss _ < <("$PYTHON" "$HERE/measure.py" --runs 1 --status 0,1 -- \
    "$BIN" --quiet --format jsonl "${KEYARG[@]}" --jobs 1 "$1") || die "measurement failed on $1"
  echo "$s $cpu $rss"
}

# triplets FILE: PAIRS x (openssl speed, CLI over FILE, CLI over the honest corpus), so each flood run has an honest
# run and an openssl run beside it, in the same minute (the machine's speed drifts; other work comes and goes).
# Prints "ratio honest_ratio versus items_per_s mb_per_s cpu_us_per_item rss_mib items bytes codes", medians of the
# per-triplet figures; versus = the flood's items/s ÷ honest items/s (bytes/s ÷ bytes/s for items over 8 KiB).
triplets() {
  local file="$1" items bytes i ossl s cpu rss hs ratios=() hratios=() versus=() rates=() cpus=() rsses=()
  items="$(wc -l <"$file")"
  bytes="$(stat -c %s "$file")"
  for ((i = 0; i < PAIRS; i++)); do
    openssl speed -seconds "$PAIR_SECONDS" ecdsap256 >"$WORK/ossl.txt" 2>/dev/null || die "openssl speed failed"
    ossl="$(awk '/nistp256/ && $NF ~ /^[0-9.]+$/ {v = $NF} END {print v}' "$WORK/ossl.txt")"
    read -r s cpu rss < <(cli "$file")
    read -r hs _ _ < <(cli "$WORK/corpus.jsonl")
    ratios+=("$(calc '%.4f' "$items/$s/$ossl")")
    hratios+=("$(calc '%.4f' "$H_ITEMS/$hs/$ossl")")
    if ((bytes / items > 8192)); then
      versus+=("$(calc '%.4f' "($bytes/$s)/($H_BYTES/$hs)")")
    else
      versus+=("$(calc '%.4f' "($items/$s)/($H_ITEMS/$hs)")")
    fi
    rates+=("$(calc '%.1f' "$items/$s")")
    cpus+=("$(calc '%.2f' "1e6*$cpu/$items")")
    rsses+=("$(calc '%.1f' "$rss/1024")")
    say "   $(basename "$file"): openssl $ossl verify/s, ratio ${ratios[-1]}, honest ${hratios[-1]}, vs honest ${versus[-1]}"
  done
  local rate codes
  rate="$(printf '%s\n' "${rates[@]}" | median)"
  codes="$("$BIN" --quiet --format jsonl "${KEYARG[@]}" --jobs 1 "$file" | grep -o '"code":"[a-z-]*"' \
    | sed 's/.*"\([a-z-]*\)"$/\1/' | sort | uniq -c | awk '{printf "%s%s %s", sep, $1, $2; sep=", "}')" || true
  echo "$(printf '%s\n' "${ratios[@]}" | median) $(printf '%s\n' "${hratios[@]}" | median) \
$(printf '%s\n' "${versus[@]}" | median) $rate $(calc '%.1f' "$rate*$bytes/$items/1e6") \
$(printf '%s\n' "${cpus[@]}" | median) $(printf '%s\n' "${rsses[@]}" | sort -g | tail -1) $items $bytes ${codes:-valid}"
}

H_ITEMS="$(wc -l <"$WORK/corpus.jsonl")"
H_BYTES="$(stat -c %s "$WORK/corpus.jsonl")"
say "== honest: Apple-shaped postbacks"
HONEST_CPU=() HONEST_RSS=()
for ((i = 0; i < PAIRS; i++)); do
  read -r _ cpu rss < <(cli "$WORK/corpus.jsonl")
  HONEST_CPU+=("$(calc '%.2f' "1e6*$cpu/$H_ITEMS")")
  HONEST_RSS+=("$(calc '%.1f' "$rss/1024")")
done
ROWS=()
for flood in $FLOODS; do
  say "== flood: $flood"
  read -r ratio hratio versus rate mbs cpu rss items bytes codes < <(triplets "$WORK/flood-$flood.jsonl")
  unit="items/s"
  ((bytes / items > 8192)) && unit="bytes/s"
  ROWS+=("| $flood | $items | $(calc '%.0f' "$bytes/$items") | $(calc '%.3f' "$ratio") | $(calc '%.3f' "$hratio") | $(calc '%.2f' "$versus") ($unit) | $(calc '%.0f' "$rate") | $mbs | $cpu | $rss | $codes |")
done

echo "## Floods, --jobs 1 (medians of $PAIRS triplets: openssl speed, the flood, honest traffic; ratio = items/s ÷ openssl speed ecdsap256 verify/s of the same triplet)"
echo
echo "Target (issue 15): every flood at least 0.5 of honest traffic's rate (items/s; bytes/s for 16 KiB items)."
echo
echo "Honest (Apple-shaped, all valid, $H_ITEMS items of $(calc '%.0f' "$H_BYTES/$H_ITEMS") bytes): $(printf '%s\n' "${HONEST_CPU[@]}" | median) µs of CPU per item, peak RSS $(printf '%s\n' "${HONEST_RSS[@]}" | sort -g | tail -1) MiB; its ratio to openssl is given beside each flood (the honest run of the same triplets)."
echo
echo "| flood | items | bytes/item | ratio to openssl | honest ratio (same triplets) | vs honest | items/s | MB/s | CPU µs/item | peak RSS MiB | records |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"
printf '%s\n' "${ROWS[@]}"
echo

# Memory: MEM_N items of 16 KiB (nested arrays and \u escapes, alternating) against MEM_N honest items.
say "== memory corpora: $MEM_N items each"
"$PYTHON" - "$WORK" "$MEM_N" <<'EOF'
import sys
work, n = sys.argv[1], int(sys.argv[2])
def lines(name):
    with open(f"{work}/{name}") as f:
        return f.read().splitlines()
nested, escapes, honest = lines("flood-nested.jsonl"), lines("flood-escapes.jsonl"), lines("corpus.jsonl")
with open(f"{work}/mem-flood.jsonl", "w") as f:
    f.write("\n".join((nested if i % 2 == 0 else escapes)[i // 2 % min(len(nested), len(escapes))] for i in range(n)) + "\n")
with open(f"{work}/mem-honest.jsonl", "w") as f:
    f.write("\n".join(honest[i % len(honest)] for i in range(n)) + "\n")
EOF
MEM_ROWS=()
for jobs in $MEM_JOBS; do
  read -r _ _ _ _ hrss _ < <("$PYTHON" "$HERE/measure.py" --runs 1 --status 0,1 -- \
    "$BIN" --quiet --format jsonl --no-dedupe "${KEYARG[@]}" --jobs "$jobs" "$WORK/mem-honest.jsonl")
  read -r _ _ _ _ frss _ < <("$PYTHON" "$HERE/measure.py" --runs 1 --status 0,1 -- \
    "$BIN" --quiet --format jsonl --no-dedupe "${KEYARG[@]}" --jobs "$jobs" "$WORK/mem-flood.jsonl")
  MEM_ROWS+=("| $jobs | $(calc '%.1f' "$hrss/1024") | $(calc '%.1f' "$frss/1024") | $(calc '%.2f' "$frss/$hrss") |")
  say "   --jobs $jobs: honest $(calc '%.1f' "$hrss/1024") MiB, flood $(calc '%.1f' "$frss/1024") MiB"
done
echo "## Peak RSS, $MEM_N items of 16 KiB (nested arrays and \\u escapes, alternating) against $MEM_N honest items (--no-dedupe)"
echo
echo "Targets (issue 15): under 100 MiB with --jobs 1 and 2; the flood at most 3x honest at --jobs 16."
echo
echo "| --jobs | honest MiB | 16 KiB flood MiB | flood ÷ honest |"
echo "|---:|---:|---:|---:|"
printf '%s\n' "${MEM_ROWS[@]}"
echo
}

main "$@"
