#!/usr/bin/env bash
# Fault tests of postback-receiver through the built binary (see e2e/fault.py): kill -9 under load (the count of
# postbacks counted twice, against its bound), SIGTERM under load, a full file system, and the invalid quota
# after one. Needs python3 with `cryptography` (to sign distinct postbacks) and root for the tmpfs mount.
set -euo pipefail
cd "$(dirname "$0")/../.."
swift build --package-path Receiver --product postback-receiver
bin="$(swift build --package-path Receiver --show-bin-path)"
python3 Receiver/Tests/e2e/fault.py --receiver "$bin/postback-receiver" "$@"
