#!/usr/bin/env bash
# Start-up failures of postback-receiver through the built binary (see e2e/startup.py): a port in use, an address
# the machine does not have, a wrong key file, a refused state file, an unreachable PostgreSQL server, a usage
# mistake, and --version: each exits with its documented status and one line naming the cause, within 10 seconds.
# Needs python3 with `cryptography` (to make a certificate to give as a key). Only 127.0.0.1 is ever connected to.
set -euo pipefail
cd "$(dirname "$0")/../.."
swift build --package-path Receiver --product postback-receiver
swift build --package-path Receiver --product postback-verify
bin="$(swift build --package-path Receiver --show-bin-path)"
python3 Receiver/Tests/e2e/startup.py --receiver "$bin/postback-receiver" --cli "$bin/postback-verify"
