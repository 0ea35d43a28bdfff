#!/usr/bin/env bash
# Fault injection through the built postback-verify binary and a real --state (see cli-faults.py): PostgreSQL's
# connections cut and the server restarted mid-run, a SQLite state on a full and on a read-only file system, a run
# frozen (SIGSTOP) past its lease, and three runs on one PostgreSQL state with four busy loops on the same cores.
#
#   Tests/cli-faults.sh                  every scenario, the three-run one twice (about 3 minutes)
#   Tests/cli-faults.sh --repeat 20      the three-run scenario 20 times (docs/state.md quotes such a run)
#   Tests/cli-faults.sh --only d,e       some scenarios; --help lists the options
#
# Needs root (tmpfs mounts), PostgreSQL's server programs (.ci/postgres starts a private server and deletes it)
# and python3 with `cryptography` (Benchmarks/make-corpus.py signs the postbacks). Exit status 1 when a check fails.
set -euo pipefail
cd "$(dirname "$0")/.."
swift build --product postback-verify
bin="$(swift build --show-bin-path)"
exec python3 Tests/cli-faults.py --binary "$bin/postback-verify" "$@"
