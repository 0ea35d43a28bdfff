#!/usr/bin/env bash
# Slow and hostile clients against the built receiver on 127.0.0.1 (see e2e/slow.py): 2,000 byte-a-second
# clients (fewer if the open-file limit cannot be raised: the script says how many) against a normal client's
# p99, SIGTERM against --stop-timeout, 413/404 closing without reading an endless body, --metrics-address, idle
# clients at --max-connections (a new postback answered within 1 s), HTTP/1.0 closing after its answer, the
# queue bound under wrk at 4 times it (503 with Retry-After, peak memory), and /readyz while a PostgreSQL state
# is down. Writes the figures to Receiver/Benchmarks/slow-clients.md. Needs python3 and wrk.
#
#   Receiver/Tests/slow.sh [--release] [--slow N]
set -euo pipefail
cd "$(dirname "$0")/../.."
# --release: measure the release build (as the benchmark does; CI runs the debug build it has already made).
mode=debug
if [ "${1:-}" = --release ]; then mode=release; shift; fi
swift build -c "$mode" --package-path Receiver --product postback-receiver
bin="$(swift build -c "$mode" --package-path Receiver --show-bin-path)"
# Each slow client holds a descriptor here and one in the receiver (which inherits this limit): raise the soft
# limit as far as the hard one allows.
hard="$(ulimit -Hn)"
if [ "$hard" = unlimited ] || [ "$hard" -ge 8192 ]; then ulimit -n 8192; else ulimit -n "$hard"; fi
# A PostgreSQL server of its own (the test halts it), stopped when this script ends; never the caller's.
unset POSTBACK_VERIFY_TEST_POSTGRES POSTBACK_VERIFY_TEST_POSTGRES_DIR
if [ -x .ci/postgres ]; then
    if started="$(.ci/postgres start --watch $$)"; then
        eval "$started"
    else
        echo "slow.sh: no PostgreSQL server could be started; its test will say so" >&2
    fi
fi
python3 Receiver/Tests/e2e/slow.py --receiver "$bin/postback-receiver" --build "$mode" "$@"
