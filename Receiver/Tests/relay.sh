#!/usr/bin/env bash
# The relay under fire through the built binary (see e2e/relay.py): a flaky, hanging, rate-limiting destination
# that goes down for RELAY_OUTAGE_SECONDS (default 20), kill -9 five times mid-delivery, the horizon and dead
# deliveries, postback-verify outbox; with POSTBACK_VERIFY_TEST_POSTGRES set (eval "$(.ci/postgres start)"), two
# receivers on one PostgreSQL state, one killed, the server restarted. Needs python3 with `cryptography` and
# `standardwebhooks`.
set -euo pipefail
cd "$(dirname "$0")/../.."
swift build --product postback-verify
swift build --package-path Receiver --product postback-receiver
cli="$(swift build --show-bin-path)/postback-verify"
bin="$(swift build --package-path Receiver --show-bin-path)"
python3 Receiver/Tests/e2e/relay.py --receiver "$bin/postback-receiver" --cli "$cli" "$@"
