#!/usr/bin/env bash
# The project's own fixture check: every file under valid/ must verify, every file under invalid/ must not.
# valid/ is checked with --allow-development (it holds Apple's development-key example); invalid/ without it
# (it holds development-kid tokens that must be refused as untrusted-key).
set -euo pipefail
cd "$(dirname "$0")/.."
keys=(--key fixture.adattributionkit=Fixtures/keys/fixture.adattributionkit.pem
      --key fixture-apple-identifier/0=Fixtures/keys/fixture-apple-identifier-0.pem)
swift run postback-verify --allow-development "${keys[@]}" --expect valid Fixtures/valid > /dev/null
swift run postback-verify "${keys[@]}" --expect invalid Fixtures/invalid > /dev/null
echo "fixture check: passed"
