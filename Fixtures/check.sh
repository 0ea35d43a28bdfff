#!/usr/bin/env bash
# The project's own fixture check: every file under valid/ must verify, every file under invalid/ must not.
# valid/ is checked with --allow-development (it holds Apple's development-key example); invalid/ without it
# (it holds development-kid tokens that must be refused as untrusted-key). skadnetwork/ holds SKAdNetwork
# postbacks signed with test-only keys, which replace Apple's SKAdNetwork keys for those two runs.
set -euo pipefail
cd "$(dirname "$0")/.."
keys=(--key fixture.adattributionkit=Fixtures/keys/fixture.adattributionkit.pem
      --key fixture-apple-identifier/0=Fixtures/keys/fixture-apple-identifier-0.pem)
swift run postback-verify --allow-development "${keys[@]}" --expect valid Fixtures/valid > /dev/null
swift run postback-verify "${keys[@]}" --expect invalid Fixtures/invalid > /dev/null
skan_keys=(--skadnetwork-key-p256 Fixtures/keys/fixture-skadnetwork-p256.pem
           --skadnetwork-key-p192 Fixtures/keys/fixture-skadnetwork-p192.pem)
swift run postback-verify "${skan_keys[@]}" --expect valid Fixtures/skadnetwork/valid > /dev/null
swift run postback-verify "${skan_keys[@]}" --expect invalid Fixtures/skadnetwork/invalid > /dev/null
echo "fixture check: passed"
