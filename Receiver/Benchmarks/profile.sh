#!/usr/bin/env bash
# Per-request profile of postback-receiver (issue 35 item 2): where each microsecond of a request goes, each part's
# limit, and what PostgreSQL spends per stored postback. Regenerates the figures of Receiver/Benchmarks/PROFILE.md.
#
#   RECEIVER_BENCH_BIN=DIR [RECEIVER_BENCH_POSTGRES=CONNINFO] Receiver/Benchmarks/profile.sh [--lines N] [--duration S]
#
# RECEIVER_BENCH_BIN: the directory of release builds of postback-receiver and postback-verify (required: this script
# never builds). RECEIVER_BENCH_POSTGRES: also profile the receiver with its state in that PostgreSQL database (its
# postback_verify schema is dropped first; the server needs `shared_preload_libraries = 'pg_stat_statements'` for the
# per-statement figures, and should keep fsync on; `track_wal_io_timing = on` adds the WAL's write and sync times).
# Needs perf, wrk, python3 with `cryptography`, psql for PostgreSQL. Runs as root (perf attaches to the receiver).
# Bounded: about 2 minutes (corpus 15 s, the CLI 5 s, six loads of --duration, default 10 s, and their set-up).
#
# For each receiver (--no-storage; the same at --log-level notice; GET /healthz; durable SQLite state + archive;
# PostgreSQL state), one wrk run (-t1 -c64, Receiver/Benchmarks/post.lua, the corpus from its first line) with,
# attached to the receiver, `perf stat -e task-clock` for the whole run (its CPU per request answered) and
# `perf record -F 999 -g` for 5 s in its middle, split into parts (and verification into what it does, and the CPU
# by thread) by Receiver/Benchmarks/profile-parts.py; then PostgreSQL again at -c8 without perf (smaller groups:
# the server's per-commit and per-row costs apart). Limits: the CLI's CPU per item with --jobs 1 (verification's
# floor), GET /healthz's CPU per request (HTTP with its log line and metrics, nothing else), the receiver at
# --log-level notice (the request log's cost), this disk's fdatasync latency and sequential write.
set -euo pipefail
cd "$(dirname "$0")/../.."
lines=400000
duration=10
while [ $# -gt 0 ]; do
    case "$1" in
        --lines) lines="$2"; shift 2 ;;
        --duration) duration="$2"; shift 2 ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
    esac
done
bin="${RECEIVER_BENCH_BIN:?set RECEIVER_BENCH_BIN to the directory of release builds of postback-receiver and postback-verify}"
for tool in perf wrk python3; do command -v "$tool" > /dev/null || { echo "profile.sh: needs $tool" >&2; exit 2; }; done
here="$(pwd)"
work="$(mktemp -d /var/tmp/receiver-profile.XXXXXX)"
trap 'kill $(jobs -p) 2> /dev/null || true; rm -rf "$work"' EXIT
python3 Benchmarks/make-corpus.py --out "$work/corpus" -n "$lines" --mixed --retries 0.03 2> "$work/corpus.txt"
corpus="$work/corpus/corpus.jsonl"
kid="$(cat "$work/corpus/kid")"
keys=(--key "$kid=$work/corpus/key.pem")
url_path=/.well-known/appattribution/report-attribution/
load_before="$(cut -d' ' -f1-3 /proc/loadavg)"
echo "# postback-receiver per-request profile"
echo
echo "$(date -u '+%Y-%m-%d %H:%M UTC'); $(nproc) cores ($(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)," \
     "shared: wrk, perf and any other work run on the same cores); load average $load_before before;" \
     "checkout $(git rev-parse --short HEAD 2> /dev/null || echo '?'); binaries $bin (built $(date -u -r "$bin/postback-receiver" '+%Y-%m-%d %H:%M UTC'), checkout $(git -C "$bin" rev-parse --short HEAD 2> /dev/null || echo '?'));" \
     "corpus: $(sed 's/^make-corpus: //; s/;.*//' "$work/corpus.txt"), Apple-shaped, $(wc -c < "$corpus") bytes"
echo

# CPU seconds (user + system) of a command and its children.
cpu_of() {
    python3 - "$@" <<'PY'
import os, resource, subprocess, sys
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, check=False)
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print(f"{r.ru_utime + r.ru_stime:.4f}")
PY
}

# Verification's floor: the CLI over the first 50,000 lines with --jobs 1 on one core, less its start-up.
head -n 50000 "$corpus" > "$work/cli.jsonl"
cli_items=$(wc -l < "$work/cli.jsonl")
: > "$work/empty.jsonl"
cli_cpu=$(cpu_of taskset -c 0 "$bin/postback-verify" --quiet --format jsonl --jobs 1 "${keys[@]}" "$work/cli.jsonl")
cli_idle=$(cpu_of taskset -c 0 "$bin/postback-verify" --quiet --format jsonl --jobs 1 "${keys[@]}" "$work/empty.jsonl")
cli_us=$(python3 -c "print(f'{($cli_cpu - $cli_idle) * 1e6 / $cli_items:.1f}')")

# The disk's fdatasync latency for small appends (the group commit's floor: one writer, one fsync per commit).
fsync_test() {
python3 - "$work" "$1" <<'PY'
import os, sys, time
path = os.path.join(sys.argv[1], "fsync.test")
fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
block = b"x" * int(sys.argv[2])
times = []
for _ in range(200):
    os.write(fd, block)
    start = time.perf_counter(); os.fdatasync(fd); times.append(time.perf_counter() - start)
os.close(fd)
times.sort()
print(f"{times[len(times) // 2] * 1000:.3f}")
PY
}
fsync_ms=$(fsync_test 16384)
fsync64_ms=$(fsync_test 65536)
# The disk's sequential write bandwidth (direct, 256 MiB, then fdatasync): a reference for a WAL stream's.
seq_mbs=$(dd if=/dev/zero of="$work/seq.test" bs=1M count=256 oflag=direct conv=fdatasync 2>&1 \
    | python3 -c "import re, sys; m = re.search(r'copied, ([\d.]+) s', sys.stdin.read()); print(f'{256 * 1.048576 / float(m.group(1)):.0f}' if m else '?')")
rm -f "$work/seq.test" "$work/fsync.test"

start_receiver() {
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
stop_receiver() { kill -TERM "$receiver_pid"; wait "$receiver_pid" || true; }
metric() { # sum of a metric's series matching REGEX (on the whole line)
    curl -s "http://127.0.0.1:$port/metrics" | python3 -c "import sys, re
print(int(sum(float(l.rsplit(' ', 1)[1]) for l in sys.stdin if re.match(sys.argv[1], l))))" "$1"
}
# CPU seconds of every process of the PostgreSQL server's user (its backends, WAL writer, checkpointer).
pg_cpu() {
    python3 - "$pg_user" <<'PY'
import os, pwd, sys
uid = pwd.getpwnam(sys.argv[1]).pw_uid
tick = os.sysconf("SC_CLK_TCK"); total = 0
for pid in filter(str.isdigit, os.listdir("/proc")):
    try:
        if os.stat(f"/proc/{pid}").st_uid != uid: continue
        fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])
    except (FileNotFoundError, ProcessLookupError):
        pass
print(total / tick)
PY
}

# One profiled load: wrk for $duration s on $1 (path) with method POST from the corpus (or GET for /healthz), perf
# stat for the whole run, perf record for 5 s in its middle; prints the parts table and sets $rate $cpu_us.
profile_load() {
    local label="$1" target="$2" connections="${3:-64}" record="${4:-yes}" task_ms
    answered4_before=$(metric '^postback_receiver_requests_total\{route="(appattribution|healthz)"')
    perf stat -e task-clock -x, -o "$work/stat.txt" -p "$receiver_pid" &
    local stat_pid=$!
    if [ "$target" = healthz ]; then
        wrk -t1 -c"$connections" -d"${duration}s" --latency "http://127.0.0.1:$port/healthz" > "$work/wrk.txt" &
    else
        wrk -t1 -c"$connections" -d"${duration}s" --latency -s Receiver/Benchmarks/post.lua "http://127.0.0.1:$port$url_path" \
            -- "$corpus" "$url_path" first > "$work/wrk.txt" &
    fi
    local wrk_pid=$!
    if [ "$record" = yes ]; then
        sleep $(( (duration - 5) / 2 ))
        perf record -q -F 999 -g -p "$receiver_pid" -o "$work/perf.data" -- sleep 5 > /dev/null 2>&1
    fi
    wait "$wrk_pid"
    kill -INT "$stat_pid"; wait "$stat_pid" || true
    answered4_after=$(metric '^postback_receiver_requests_total\{route="(appattribution|healthz)"')
    task_ms=$(awk -F, '/task-clock/ {print $1}' "$work/stat.txt")
    requests=$((answered4_after - answered4_before))
    rate=$(sed -n 's/^Requests\/sec:[[:space:]]*//p' "$work/wrk.txt")
    sent=$(sed -n 's/^[[:space:]]*\([0-9]*\) requests in.*/\1/p' "$work/wrk.txt")
    p99=$(sed -n 's/^[[:space:]]*99%[[:space:]]*//p' "$work/wrk.txt")
    cpu_us=$(python3 -c "print(f'{$task_ms * 1000 / $requests:.1f}')")
    local cycled=""
    [ "$target" != healthz ] && [ "$sent" -gt "$lines" ] && cycled=" CYCLED: $sent requests for $lines lines (use --lines)"
    echo "### $label"
    echo
    echo "wrk -t1 -c$connections -d${duration}s: $rate req/s, p99 $p99; receiver CPU $(python3 -c "print(f'{$task_ms / 1000:.2f}')") s" \
         "(perf stat task-clock) for $requests requests answered = **$cpu_us µs CPU per request**" \
         "($(python3 -c "print(f'{$task_ms / 1000 / $duration:.2f}')") cores busy); load average $(cut -d' ' -f1-3 /proc/loadavg)$cycled"
    echo
    if [ "$record" = yes ]; then
        perf script -i "$work/perf.data" -F comm,tid,ip,sym,dso 2> /dev/null \
            | python3 Receiver/Benchmarks/profile-parts.py "$cpu_us" "perf record -F 999 -g, 5 s"
    fi
}

echo "## Receiver profiles"
echo
start_receiver --no-storage
profile_load "--no-storage (verification, HTTP, log, metrics; nothing stored)" post
nostorage_us=$cpu_us
stop_receiver

start_receiver --no-storage --log-level notice
profile_load "--no-storage --log-level notice (no request log line)" post
notice_us=$cpu_us
stop_receiver

start_receiver --no-storage
profile_load "GET /healthz (HTTP, log line, metrics; no body, no verification)" healthz
healthz_us=$cpu_us
stop_receiver

rm -f "$work"/state* "$work"/archive*
start_receiver --state "$work/state.sqlite" --archive "$work/archive.sqlite" --invalid-quota 100000000
commits_before=$(metric '^postback_receiver_commits_total')
stored_before=$(metric '^postback_receiver_stored_total')
profile_load "durable SQLite state + archive (fsync per group commit)" post
sqlite_us=$cpu_us
commits=$(( $(metric '^postback_receiver_commits_total') - commits_before ))
stored=$(( $(metric '^postback_receiver_stored_total') - stored_before ))
stop_receiver
echo "Group commits during the run: $commits for $stored stored postbacks: $(python3 -c "print(f'{$commits / $duration:.0f} commits/s of {$stored / max($commits, 1):.1f} postbacks each')")" \
     "(the metrics' postback_receiver_commits_total and stored_total, over the whole run)."
echo

# One PostgreSQL run from an empty state: LABEL CONNECTIONS RECORD(yes/no); prints the server's side and appends
# "connections commits stored statements_ms server_cpu_s wal_bytes syncs" to $work/pg-runs.
pg_run() {
    local label="$1" connections="$2" record="$3"
    psql -q "$pg" -c 'DROP SCHEMA IF EXISTS postback_verify CASCADE' > /dev/null 2>&1
    start_receiver --state "$pg" --invalid-quota 100000000
    sleep 1
    psql -qAt "$pg" -c "select pg_stat_reset_shared('wal')" > /dev/null
    [ "$statements" = yes ] && psql -qAt "$pg" -c "select pg_stat_statements_reset()" > /dev/null
    local xact_before xact_after commits_before stored_before pg_cpu_before pg_cpu_after commits stored
    xact_before=$(psql -qAt "$pg" -c "select xact_commit from pg_stat_database where datname = current_database()")
    commits_before=$(metric '^postback_receiver_commits_total')
    stored_before=$(metric '^postback_receiver_stored_total')
    pg_cpu_before=$(pg_cpu)
    profile_load "$label" post "$connections" "$record"
    pg_cpu_after=$(pg_cpu)
    [ "$connections" = 64 ] && postgres_us=$cpu_us
    commits=$(( $(metric '^postback_receiver_commits_total') - commits_before ))
    stored=$(( $(metric '^postback_receiver_stored_total') - stored_before ))
    sleep 0.6   # the statistics reach shared memory within 0.5 s
    stop_receiver
    xact_after=$(psql -qAt "$pg" -c "select xact_commit from pg_stat_database where datname = current_database()")
    echo "The PostgreSQL server during that run: group commits $commits for $stored stored postbacks" \
         "($(python3 -c "print(f'{$stored / max($commits, 1):.1f}')") each); transactions committed $((xact_after - xact_before))" \
         "(pg_stat_database.xact_commit: lease renewals included); server CPU from /proc (every process of user $pg_user:" \
         "backends, WAL writer, checkpointer) $(python3 -c "print(f'{$pg_cpu_after - $pg_cpu_before:.2f} s = **{($pg_cpu_after - $pg_cpu_before) * 1e6 / max($stored, 1):.1f} µs per stored postback**')")."
    echo
    local wal
    wal=$(psql -qAt "$pg" -F ' ' -c "select wal_records, wal_fpi, wal_bytes, wal_write, wal_sync, wal_write_time, wal_sync_time from pg_stat_wal")
    python3 - $wal "$stored" "$commits" "$duration" <<'PY'
import sys
rec, fpi, byt, wr, sy = map(int, sys.argv[1:6]); wt, st = float(sys.argv[6]), float(sys.argv[7])
stored, commits, duration = max(int(sys.argv[8]), 1), max(int(sys.argv[9]), 1), float(sys.argv[10])
print(f"pg_stat_wal: {rec} records ({rec / stored:.1f} per stored postback), {fpi} full-page images, {byt} bytes = "
      f"**{byt / stored:.0f} WAL bytes per stored postback** ({byt / duration / 1e6:.1f} MB/s); {wr} WAL writes, "
      f"{sy} WAL syncs ({sy / duration:.0f}/s, {sy / commits:.2f} per group commit); write time {wt:.0f} ms, "
      f"sync time {st:.0f} ms ({st / max(sy, 1):.3f} ms per sync; 0 without track_wal_io_timing).")
print()
PY
    local statements_ms=0
    if [ "$statements" = yes ]; then
        echo "pg_stat_statements (statements of at least 0.5 % of the execution time):"
        echo
        echo "| statement | calls | rows | ms total | µs per call | µs per stored postback | WAL bytes |"
        echo "|---|---:|---:|---:|---:|---:|---:|"
        psql -qAt "$pg" -F '|' -c "select regexp_replace(left(query, 90), '\s+', ' ', 'g'), calls, rows, total_exec_time, wal_bytes
            from pg_stat_statements where dbid = (select oid from pg_database where datname = current_database())
            order by total_exec_time desc" > "$work/statements.txt"
        python3 - "$work/statements.txt" "$stored" <<'PY'
import sys
rows = [l.rstrip("\n").split("|") for l in open(sys.argv[1]) if l.strip()]
total = sum(float(r[3]) for r in rows); stored = max(int(sys.argv[2]), 1)
for q, calls, n, ms, wal in rows:
    if float(ms) < 0.005 * total: continue
    q = q.replace("|", "/").replace("`", "")
    print(f"| `{q}` | {calls} | {n} | {float(ms):.0f} | {float(ms) * 1000 / max(int(calls), 1):.1f} | "
          f"{float(ms) * 1000 / stored:.2f} | {wal} |")
print(f"| **all statements** | | | {total:.0f} | | **{total * 1000 / stored:.2f}** | |")
PY
        statements_ms=$(python3 "$work/statements-total.py" "$work/statements.txt")
        echo
    fi
    echo "$connections $commits $stored $statements_ms $(python3 -c "print($pg_cpu_after - $pg_cpu_before)") $(echo $wal | cut -d' ' -f3) $(echo $wal | cut -d' ' -f5)" >> "$work/pg-runs"
}

if [ -n "${RECEIVER_BENCH_POSTGRES:-}" ]; then
    pg="$RECEIVER_BENCH_POSTGRES"
    psql -qAt "$pg" -c 'select 1' > /dev/null || { echo "profile.sh: cannot reach RECEIVER_BENCH_POSTGRES" >&2; exit 1; }
    pg_user=$(stat -c %U "$(psql -qAt "$pg" -c 'show data_directory')")   # the server's user (this script runs as root)
    statements=$(psql -qAt "$pg" -c "CREATE EXTENSION IF NOT EXISTS pg_stat_statements; select 1 from pg_stat_statements limit 1" > /dev/null 2>&1 && echo yes || echo no)
    cat > "$work/statements-total.py" <<'PY'
import sys
print(f"{sum(float(l.rstrip(chr(10)).split('|')[3]) for l in open(sys.argv[1]) if l.strip()):.1f}")
PY
    : > "$work/pg-runs"
    pg_run "durable PostgreSQL state, -c64 (same machine: the server's CPU is beside the receiver's)" 64 yes
    echo "Tables after that run (with their indexes and TOAST):"
    echo
    psql -qAt "$pg" -F '|' -c "select c.relname, pg_size_pretty(pg_total_relation_size(c.oid)), pg_total_relation_size(c.oid) / greatest((select count(*) from postback_verify.received_postbacks), 1) from pg_class c join pg_namespace n on n.oid = c.relnamespace where nspname = 'postback_verify' and relkind = 'r' order by pg_total_relation_size(c.oid) desc" \
        | awk -F'|' '{printf "- %s %s (%s bytes per postback received)\n", $1, $2, $3}'
    echo
    psql -qAt "$pg" -F ' ' -c "select 'postbacks', round(avg(pg_column_size(p.*))) from postback_verify.postbacks p union all select 'received_postbacks', round(avg(pg_column_size(r.*))) from postback_verify.received_postbacks r" \
        | awk '{printf "- mean row of %s: %s bytes\n", $1, $2}'
    echo
    pg_run "durable PostgreSQL state, -c8 (smaller groups: the per-commit and per-row costs apart)" 8 no
    echo "Per-commit and per-row costs (a straight line through the two runs: cost per commit = fixed + per row x rows per commit):"
    echo
    python3 - "$work/pg-runs" <<'PY'
import sys
runs = [list(map(float, l.split())) for l in open(sys.argv[1]) if l.strip()]
if len(runs) == 2:
    (c1, k1, n1, s1, u1, w1, y1), (c2, k2, n2, s2, u2, w2, y2) = runs
    g1, g2 = n1 / k1, n2 / k2
    for name, a, b in (("statements' execution (pg_stat_statements)", s1 * 1000 / k1, s2 * 1000 / k2),
                       ("server CPU (/proc)", u1 * 1e6 / k1, u2 * 1e6 / k2),
                       ("WAL bytes", w1 / k1, w2 / k2)):
        per_row = (a - b) / (g1 - g2) if g1 != g2 else float("nan")
        fixed = a - per_row * g1
        unit = "bytes" if name == "WAL bytes" else "µs"
        print(f"- {name}: {a:.0f} {unit} per commit of {g1:.1f} rows (-c{c1:.0f}), {b:.0f} per commit of {g2:.1f} rows "
              f"(-c{c2:.0f}): **{fixed:.0f} {unit} per commit + {per_row:.1f} {unit} per row**")
print()
PY
fi

echo "## Limits measured here"
echo
echo "- verification: postback-verify --jobs 1 on one core (taskset -c 0), $cli_items lines, less its start-up: **$cli_us µs CPU per item**"
echo "- HTTP with its log line and metrics, no body: GET /healthz **$healthz_us µs CPU per request**"
echo "- request log: --no-storage at info $nostorage_us against --log-level notice $notice_us µs per request" \
     "(difference $(python3 -c "print(f'{$nostorage_us - $notice_us:.1f}')") µs)"
echo "- fsync: this disk's fdatasync after a 16 KiB append, median of 200: **$fsync_ms ms** (after 64 KiB: $fsync64_ms ms; one writer: at most" \
     "$(python3 -c "print(f'{1000 / $fsync_ms:.0f}')") fsyncs/s: the group commit's floor is its writer's CPU, not this); sequential direct write $seq_mbs MB/s"
echo "- durable SQLite $sqlite_us µs per request${postgres_us:+; PostgreSQL state $postgres_us µs per request (receiver only)}"
echo
echo "load average $(cut -d' ' -f1-3 /proc/loadavg) after (was $load_before before); $(date -u '+%Y-%m-%d %H:%M UTC')"
