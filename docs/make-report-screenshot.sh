#!/usr/bin/env bash
# Makes docs/report.png, the README's picture of the HTML run report: the fixture run of the Chromium test
# (Tests/PostbackVerifyTests/ReportPageChromiumTests.swift) with the example schema, rendered by headless Chromium.
# Needs the built binary (swift build) and Debian's chromium (apt-get install chromium).
set -euo pipefail
cd "$(dirname "$0")/.."
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
status=0
.build/debug/postback-verify --format jsonl --quiet --allow-development \
    --key fixture-apple-identifier/0=Fixtures/keys/fixture-apple-identifier-0.pem \
    --skadnetwork-key-p256 Fixtures/keys/fixture-skadnetwork-p256.pem \
    --schema Fixtures/schema/example-schema.json --label "fixtures" --report "$work/report.html" \
    Fixtures/valid Fixtures/invalid/postback Fixtures/dedupe Fixtures/skadnetwork/valid > /dev/null || status=$?
# Status 1: the run holds invalid fixtures on purpose; anything else is a failure.
[ "$status" -le 1 ] || exit "$status"
chromium --headless --no-sandbox --disable-gpu --user-data-dir="$work/profile" --hide-scrollbars \
    --screenshot="$work/report.png" --window-size=1200,3900 "file://$work/report.html" 2> /dev/null
cp "$work/report.png" docs/report.png
echo "wrote docs/report.png"
