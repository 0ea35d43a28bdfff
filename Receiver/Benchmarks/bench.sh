#!/usr/bin/env bash
# Load benchmark of postback-receiver with wrk on loopback (bounded duration), on the traffic a receiver has:
# distinct postbacks as Apple sends them (Apple's bytes, each a new postback-identifier), with about 3 % exact
# retries of an earlier body and 1 % forged signatures (Benchmarks/make-corpus.py --mixed --retries 0.03), enough
# lines that no run sends one twice but for the retries. Each round first measures `openssl speed ecdsap256` (one
# core's verify/s) and prints every figure as a ratio to it, beside the command line's items/s on the same corpus.
# Release builds. Rows: verification without storage (--no-storage), the durable SQLite state + archive (fsync per
# group commit), the same with --sync normal (no fsync: what the receiver costs when the disk does not bound it),
# PostgreSQL (below), and a labelled extra row: --no-storage on a 20,000-postback corpus cycled (after its first
# pass the token cache answers every request without an ECDSA: not traffic a receiver has).
#
#   Receiver/Benchmarks/bench.sh [--lines N] [--duration SECONDS] [--connections C] [--rounds N]
#                                [--forward URL] [--million]
#
# --lines N: the corpus's lines (default 45,000 per second of --duration, more than the receiver answers; a run
# that sends more than N requests says so, as its later requests were repeats).
# --forward URL: each round also runs the durable SQLite receiver relaying every valid postback to URL (a fast
# destination answering 200 to POST, e.g. a local nginx), right after the same run without it, and prints the
# outbox's depth when the load stops and the seconds it takes to drain (the relay keeping up or not).
#
# RECEIVER_BENCH_BIN=DIR: the release binaries in DIR (postback-receiver, postback-verify) instead of building them.
# RECEIVER_BENCH_POSTGRES=CONNINFO: also run the durable receiver with its state in that PostgreSQL database (e.g.
# the POSTBACK_VERIFY_TEST_POSTGRES that `.ci/postgres start` prints); its postback_verify schema is dropped first.
# --million: also run the durable receiver until it has answered 1,000,000 requests and print its peak and
# current resident memory (takes minutes). Needs wrk (apt-get install wrk), python3 with `cryptography`, openssl.
set -euo pipefail
cd "$(dirname "$0")/../.."
lines=""
duration=15
connections=64
million=0
rounds=3
forward=""
while [ $# -gt 0 ]; do
    case "$1" in
        --lines) lines="$2"; shift 2 ;;
        --duration) duration="$2"; shift 2 ;;
        --connections) connections="$2"; shift 2 ;;
        --rounds) rounds="$2"; shift 2 ;;
        --forward) forward="$2"; shift 2 ;;
        --million) million=1; shift ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
    esac
done
lines="${lines:-$((45000 * duration))}"
command -v wrk > /dev/null || { echo "bench.sh: needs wrk (apt-get install wrk)" >&2; exit 2; }
if [ -n "${RECEIVER_BENCH_BIN:-}" ]; then
    bin="$RECEIVER_BENCH_BIN"   # a directory holding release builds of postback-receiver and postback-verify
else
    swift build -c release --package-path Receiver --product postback-receiver > /dev/null
    swift build -c release --package-path Receiver --product postback-verify > /dev/null
    bin="$(swift build -c release --package-path Receiver --show-bin-path)"
fi
work="$(mktemp -d /var/tmp/receiver-bench.XXXXXX)"
trap 'kill $(jobs -p) 2> /dev/null || true; rm -rf "$work"' EXIT
python3 Benchmarks/make-corpus.py --out "$work/corpus" -n "$lines" --mixed --retries 0.03 2> "$work/corpus.txt"
python3 Benchmarks/make-corpus.py --out "$work/corpus" -n 20000 --reuse-key --name cycled.jsonl 2> /dev/null
corpus="$work/corpus/corpus.jsonl"
cycled="$work/corpus/cycled.jsonl"
kid="$(cat "$work/corpus/kid")"
keys=(--key "$kid=$work/corpus/key.pem")
echo "corpus: $(sed 's/^make-corpus: //; s/;.*//' "$work/corpus.txt") ($(wc -c < "$corpus") bytes), Apple-shaped" \
     "signed bodies; $(nproc) cores ($(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1));" \
     "load: $(cut -d' ' -f1-3 /proc/loadavg) before the run; $(date -u '+%Y-%m-%d %H:%M UTC')"

# One core's ECDSA P-256 verifications per second, as `openssl speed` measures them now.
openssl_rate() {
    openssl speed -seconds 4 ecdsap256 2> /dev/null | awk '/nistp256/ && $NF ~ /^[0-9.]+$/ {v = $NF} END {print v}'
}

cli_rate() {
    local start end
    start=$(date +%s.%N)
    "$bin/postback-verify" --quiet --format jsonl "${keys[@]}" "$corpus" > /dev/null || true
    end=$(date +%s.%N)
    python3 -c "print(f'{$lines / ($end - $start):.0f}')"
}

# Starts the receiver with the given options; sets $receiver_pid and $port.
start_receiver() {
    # Emptied here, not only by the background job's redirection, which may come after the first read below (which
    # then found the previous receiver's port).
    : > "$work/listening"
    "$bin/postback-receiver" --host 127.0.0.1 --port 0 "${keys[@]}" "$@" > "$work/listening" 2> "$work/receiver.log" &
    receiver_pid=$!
    for _ in $(seq 100); do
        port="$(sed -n 's/.*listening on .*:\([0-9]*\)$/\1/p' "$work/listening")"
        [ -n "$port" ] && return 0
        sleep 0.1
    done
    echo "receiver did not start"; cat "$work/receiver.log"; exit 1
}

stop_receiver() {
    kill -TERM "$receiver_pid"
    wait "$receiver_pid" || { echo "receiver exited with $?"; exit 1; }
}

# One wrk run over FILE (default: the corpus, from its first line): prints "requests/s p50 p99 non-2xx [note]".
load() {
    local file="${2:-$corpus}"
    wrk -t1 -c"$connections" -d"${1}s" --latency -s Receiver/Benchmarks/post.lua \
        "http://127.0.0.1:$port/.well-known/appattribution/report-attribution/" -- "$file" \
        /.well-known/appattribution/report-attribution/ "$([ "$file" = "$corpus" ] && echo first || echo random)" \
        > "$work/wrk.txt"
    python3 - "$work/wrk.txt" "$(wc -l < "$file")" "$([ "$file" = "$corpus" ] && echo 1 || echo 0)" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
corpus_lines, must_not_cycle = int(sys.argv[2]), sys.argv[3] == "1"
def ms(value):
    match = re.match(r"([\d.]+)(us|ms|s|m)$", value)
    if not match:
        sys.exit(f"cannot read wrk's latency {value!r}:\n{text}")
    number, unit = match.groups()
    return float(number) * {"us": 0.001, "ms": 1, "s": 1000, "m": 60000}[unit]
rate = float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))
p50 = ms(re.search(r"^\s+50%\s+(\S+)", text, re.M).group(1))
p99 = ms(re.search(r"^\s+99%\s+(\S+)", text, re.M).group(1))
bad = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
errors = re.search(r"Socket errors: (.*)", text)
sent = int(re.search(r"(\d+) requests in", text).group(1))
note = f" CYCLED: {sent} requests for {corpus_lines} lines (use --lines)" if must_not_cycle and sent > corpus_lines else ""
print(f"{rate:.0f} {p50:.2f} {p99:.2f} {bad.group(1) if bad else 0}{' socket errors: ' + errors.group(1) if errors else ''}{note}")
PY
}

report() { # label, wrk line (ratio to this round's openssl speed)
    read -r rate p50 p99 bad rest <<< "$2"
    printf '  %-40s %7s req/s  %5.2fx openssl  p50 %6s ms  p99 %6s ms  non-200: %s %s\n' "$1" "$rate" \
        "$(python3 -c "print($rate / $ossl)")" "$p50" "$p99" "$bad" "$rest"
}

cli_report() {
    local rate
    rate="$(cli_rate)"
    printf '  %-40s %7s items/s  %5.2fx openssl\n' "postback-verify (CLI, --jobs all)" "$rate" \
        "$(python3 -c "print($rate / $ossl)")"
}

echo "== paired rounds (each: openssl speed, CLI over the corpus, receiver --no-storage, CLI, receiver durable" \
     "SQLite, the same with --sync normal, PostgreSQL if set, the cycled extra row);" \
     "wrk -t1 -c$connections -d${duration}s; a forged body is answered 200 too (stored invalid)"
for round in $(seq "$rounds"); do
    ossl="$(openssl_rate)"
    echo "round $round: openssl speed ecdsap256: $ossl verify/s (one core)"
    cli_report
    start_receiver --no-storage
    load 2 "$cycled" > /dev/null   # warm-up, on other postbacks
    report "receiver --no-storage" "$(load "$duration")"
    stop_receiver
    cli_report
    rm -f "$work"/state* "$work"/archive*
    start_receiver --state "$work/state.sqlite" --archive "$work/archive.sqlite" --invalid-quota 100000000
    report "receiver durable SQLite (fsync)" "$(load "$duration")"
    rows="$(python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('select count(*) from received_postbacks').fetchone()[0])" "$work/archive.sqlite")"
    stop_receiver
    echo "  (durable run: $rows rows stored; every request answered 200 has its row)"
    if [ -n "$forward" ]; then
        rm -f "$work"/state* "$work"/archive*
        start_receiver --state "$work/state.sqlite" --archive "$work/archive.sqlite" --invalid-quota 100000000 \
            --forward "$forward"
        report "receiver durable SQLite + --forward" "$(load "$duration")"
        # The outbox's depth when the load stops, then how long until nothing is owed (read from the outbox every
        # 2 s by the receiver: the gauge's resolution).
        depth() {
            curl -s "http://127.0.0.1:$port/metrics" | python3 -c "import sys,re; m = re.search(r'postback_receiver_relay_outbox_depth\{[^}]*\} (\S+)', sys.stdin.read()); print(int(float(m.group(1))) if m else -1)"
        }
        sleep 2.5
        left="$(depth)"
        drain_start=$(date +%s.%N)
        for _ in $(seq 600); do [ "$(depth)" = 0 ] && break; sleep 0.5; done
        drain_end=$(date +%s.%N)
        delivered="$(curl -s "http://127.0.0.1:$port/metrics" | python3 -c "import sys,re; print(int(sum(float(v) for v in re.findall(r'postback_receiver_relay_deliveries_total\{[^}]*outcome=\"delivered\"[^}]*\} (\S+)', sys.stdin.read()))))")"
        stop_receiver
        printf '  %-40s owed when the load stopped: %s; drained in %.1f s; %s delivered\n' "" "$left" \
            "$(python3 -c "print($drain_end - $drain_start)")" "$delivered"
    fi
    rm -f "$work"/state* "$work"/archive*
    start_receiver --state "$work/state.sqlite" --archive "$work/archive.sqlite" --invalid-quota 100000000 \
        --sync normal
    report "receiver SQLite --sync normal" "$(load "$duration")"
    stop_receiver
    if [ -n "${RECEIVER_BENCH_POSTGRES:-}" ]; then
        # The same durable run with the state in PostgreSQL (a group's claims and rows in one transaction, its
        # commit waiting for the server's disk): its schema dropped first, so each round starts from an empty state
        # as SQLite does.
        psql -q "$RECEIVER_BENCH_POSTGRES" -c 'DROP SCHEMA IF EXISTS postback_verify CASCADE' > /dev/null 2>&1
        start_receiver --state "$RECEIVER_BENCH_POSTGRES" --invalid-quota 100000000
        report "receiver durable PostgreSQL state" "$(load "$duration")"
        stop_receiver
    fi
    start_receiver --no-storage
    load 2 "$cycled" > /dev/null
    report "extra: --no-storage, 20,000 cycled" "$(load "$duration" "$cycled")"
    stop_receiver
done

if [ "$million" = 1 ]; then
    echo "== memory: durable SQLite receiver until 1,000,000 requests answered"
    rm -f "$work"/state* "$work"/archive*
    start_receiver --state "$work/state.sqlite" --archive "$work/archive.sqlite" --invalid-quota 100000000
    answered=0
    while [ "$answered" -lt 1000000 ]; do
        load 20 > /dev/null
        answered="$(curl -s "http://127.0.0.1:$port/metrics" | python3 -c "import sys,re; print(int(sum(float(v) for v in re.findall(r'postback_receiver_requests_total\{route=\"appattribution\",status=\"2xx\"\} (\S+)', sys.stdin.read()))))")"
        echo "  $answered answered; RSS $(awk '/VmRSS/ {print $2/1024 " MiB"}' /proc/$receiver_pid/status)"
    done
    awk '/VmHWM|VmRSS/ {printf "  %s %.1f MiB\n", $1, $2/1024}' /proc/$receiver_pid/status
    stop_receiver
fi
echo "load: $(cut -d' ' -f1-3 /proc/loadavg) after the run (the machine is shared: other builds run beside it)"
