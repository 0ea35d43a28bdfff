#!/usr/bin/env bash
# The ECDSA differential target (Fuzz/fuzz-ecdsa-differential.swift) for a number of inputs: the fixed-limb tables
# (P-256's P256BatchVerifier, P-192's P192KeyTable) against libcrypto's EVP_PKEY_verify, trapping on any
# disagreement. Builds it through Fuzz/run.sh (-sanitize=fuzzer,address) when stale.
#
#   Fuzz/ecdsa.sh [RUNS [SECONDS]]   RUNS inputs (default 5,000,000), stopping early after SECONDS (default none)
#
# CI runs `Fuzz/ecdsa.sh 200000 75`. The corpus is kept in Fuzz/work/corpus/fuzz-ecdsa-differential between runs.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5000000}
seconds=${2:-0}
exec Fuzz/run.sh fuzz-ecdsa-differential "$seconds" -runs="$runs" -max_len=160
