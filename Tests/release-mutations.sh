#!/usr/bin/env bash
# Issue 25: the bounds checks hold in the build users run. Builds postback-verify in release (-O, where `assert` is
# gone and only `precondition` remains) and feeds it every fuzz seed and every one-byte mutation of the valid
# postback bodies (Tests/release-mutations.py): each run must exit 0 or 1, never by a signal, with exactly one JSON
# Lines record per item, in order. `swift test`, the fuzzers and the sanitizers all run debug builds.
#
#   BUILD_PATH=.build-release   the scratch path of the release build (gitignored by `.build-*/`)
#   BIN=path NO_BUILD=1         use a release binary built elsewhere
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_PATH="${BUILD_PATH:-.build-release}"
if [[ "${NO_BUILD:-0}" != 1 ]]; then
    swift build -c release --product postback-verify --scratch-path "$BUILD_PATH"
fi
BIN="${BIN:-$BUILD_PATH/release/postback-verify}"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
python3 Tests/release-mutations.py "$BIN" "$WORK"
echo "release mutations: passed"
