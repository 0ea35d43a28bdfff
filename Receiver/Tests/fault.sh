#!/usr/bin/env bash
# Fault tests of postback-receiver through the built binary (see e2e/fault.py): kill -9 under load (the count of
# postbacks counted twice, against its bound), SIGTERM under load, a full file system, the invalid quota after one,
# a read-only state (an ext4 file system turned read-only under load; a tmpfs read-only at start), and a PostgreSQL
# state on a server of its own (.ci/postgres) whose connections are killed, and which is stopped and restarted,
# under load. Needs python3 with `cryptography` (to sign distinct postbacks), root for the mounts, mkfs.ext4 and
# loop devices, and PostgreSQL's server programs.
set -euo pipefail
cd "$(dirname "$0")/../.."
swift build --package-path Receiver --product postback-receiver
bin="$(swift build --package-path Receiver --show-bin-path)"
python3 Receiver/Tests/e2e/fault.py --receiver "$bin/postback-receiver" "$@"
