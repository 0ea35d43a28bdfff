#!/usr/bin/env bash
# Issue 31 item 4, "the log never holds the receiver" (see e2e/stalled_stderr.py): the built receiver with its
# standard error on a pipe nobody reads answers every one of 5,000 requests, counts the log lines it drops
# (/metrics), says how many in one line once the pipe is read, and stops on SIGTERM within --stop-timeout plus 1 s.
# Needs python3. Only 127.0.0.1 is connected to. About 15 s.
set -euo pipefail
cd "$(dirname "$0")/../.."
swift build --package-path Receiver --product postback-receiver
bin="$(swift build --package-path Receiver --show-bin-path)"
python3 Receiver/Tests/e2e/stalled_stderr.py --receiver "$bin/postback-receiver" "$@"
