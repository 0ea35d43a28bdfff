#!/usr/bin/env bash
# End-to-end test of postback-receiver through real processes (see e2e/e2e.py): builds the receiver and the
# command line (debug, in Receiver/.build), starts the receiver on 127.0.0.1, posts Apple's examples and the
# repository's fixtures with curl, and checks answers, stored rows and metrics. Needs curl and python3.
set -euo pipefail
cd "$(dirname "$0")/../.."
swift build --package-path Receiver --product postback-receiver
swift build --package-path Receiver --product postback-verify
bin="$(swift build --package-path Receiver --show-bin-path)"
# A throw-away PostgreSQL server for the shared-state test (stopped when this script ends), unless one is given.
if [ -z "${POSTBACK_VERIFY_TEST_POSTGRES:-}" ] && [ -x .ci/postgres ]; then
    if started="$(.ci/postgres start --watch $$)"; then
        eval "$started"
    else
        echo "e2e.sh: no PostgreSQL server could be started; its test will say so" >&2
    fi
fi
python3 Receiver/Tests/e2e/e2e.py --receiver "$bin/postback-receiver" --cli "$bin/postback-verify"
