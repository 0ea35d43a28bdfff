#!/usr/bin/env bash
# Builds one libFuzzer target and runs it for a given time (one process, niced).
#
#   Fuzz/run.sh TARGET SECONDS [libFuzzer options or input files ...]
#
# TARGET is fuzz-item, fuzz-json, fuzz-json-differential, fuzz-base64url or fuzz-ecdsa-differential
# (Fuzz/TARGET.swift). The library (Sources/Attribution) is compiled once into Fuzz/work/build as module Attribution
# with -sanitize=fuzzer,address; the target links it with libcrypto, SQLite and libpq (the state stores). The corpus
# grows in Fuzz/work/corpus/TARGET (gitignored), seeded from Fixtures/ (and JSONTestSuite for the JSON targets) by
# Fuzz/make-seeds.py; crashes, leaks and timeouts are written to Fuzz/work/artifacts/. Give a file instead of
# SECONDS's extra options to replay one input:
#   Fuzz/run.sh fuzz-json 0 Fuzz/work/artifacts/fuzz-json-crash-...
#
#   Fuzz/run.sh --typecheck      type-checks every target against the debug build's Attribution module (after
#                                `swift build`; seconds, no fuzzing): what CI runs, so the targets cannot rot
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "${1:-}" = --typecheck ]; then
    bin="$(swift build --show-bin-path)"
    modules="$bin/Modules"
    [ -f "$modules/Attribution.swiftmodule" ] || { echo "Fuzz/run.sh: run swift build first" >&2; exit 2; }
    # SwiftPM names the package after its directory: the targets see `package` symbols under that name.
    package_name="$( (grep -o '"-package-name","[^"]*"' "$(dirname "$(dirname "$bin")")/debug.yaml" 2> /dev/null \
        || true) | head -1 | cut -d'"' -f4)"
    include=()
    for flag in $(pkg-config --cflags-only-I libpq 2> /dev/null); do include+=(-Xcc "$flag"); done
    # POSTBACK_VERIFY_STRICT=1 (CI, docs/ci.md): a warning in a fuzz target is an error, as in the package's targets.
    strict=()
    if [ -n "${POSTBACK_VERIFY_STRICT:-}" ] && [ "$POSTBACK_VERIFY_STRICT" != 0 ]; then strict=(-warnings-as-errors); fi
    for source_file in Fuzz/fuzz-*.swift; do
        swiftc -typecheck -parse-as-library -package-name "${package_name:-postback_verify}" -I "$modules" \
            -I Sources/CAttributionOpenSSL -I Sources/CAttributionSQLite -I Sources/CAttributionPostgres \
            "${include[@]}" ${strict[@]+"${strict[@]}"} "$source_file"
        echo "$source_file: type-checks"
    done
    exit 0
fi

if [ $# -lt 2 ]; then
    echo "usage: Fuzz/run.sh fuzz-item|fuzz-json|fuzz-json-differential|fuzz-base64url|fuzz-ecdsa-differential" \
        "SECONDS [libFuzzer args]" >&2
    exit 2
fi
target=$1 seconds=$2
shift 2
source_file=Fuzz/$target.swift
[ -f "$source_file" ] || { echo "no such target: $source_file" >&2; exit 2; }

work=Fuzz/work
build=$work/build
mkdir -p "$build" "$work/corpus/$target" "$work/artifacts"
# lld, because gold warns about every outlined ASan check it cannot export.
# -enable-testing: fuzz-item checks internal types (the fixed-key tables) through `@testable import`.
# -package-name: the library's `package` symbols are visible to the targets, as to the package's own modules.
flags=(-O -g -parse-as-library -sanitize=fuzzer,address -use-ld=lld -enable-testing -package-name postback_verify
       -I Sources/CAttributionOpenSSL -I Sources/CAttributionSQLite -I Sources/CAttributionPostgres)
# libpq's header directory (Debian: /usr/include/postgresql), as SwiftPM finds it through pkg-config.
for flag in $(pkg-config --cflags-only-I libpq 2> /dev/null); do flags+=(-Xcc "$flag"); done

# The library, rebuilt when any of its sources is newer than the archive.
archive=$build/libAttribution.a
if [ ! -f "$archive" ] || [ -n "$(find Sources/Attribution -name '*.swift' -newer "$archive" | head -1)" ]; then
    echo "== building Attribution for fuzzing"
    # From a snapshot, so an edit made elsewhere during the build cannot fail it.
    rm -rf "$build/src/Attribution" && mkdir -p "$build/src" && cp -R Sources/Attribution "$build/src/"
    swiftc "${flags[@]}" -wmo -module-name Attribution \
        -emit-module -emit-module-path "$build/Attribution.swiftmodule" \
        -emit-library -static -o "$archive" $(find "$build/src/Attribution" -name '*.swift' | sort)
fi

# The target (the JSON Lines record renderer is in the library now, so no CLI source is compiled in).
binary=$build/$target
if [ ! -x "$binary" ] || [ -n "$(find "$source_file" "$archive" -newer "$binary")" ]; then
    echo "== building $target"
    snapshot=()
    mkdir -p "$build/src/$target"
    for file in "$source_file"; do
        cp "$file" "$build/src/$target/"
        snapshot+=("$build/src/$target/$(basename "$file")")
    done
    swiftc "${flags[@]}" -I "$build" -module-name "${target//-/_}" "${snapshot[@]}" \
        -L "$build" -lAttribution -lcrypto -lsqlite3 -lpq -o "$binary"
fi

seeds=$work/seeds/$target
rm -rf "$seeds"
python3 Fuzz/make-seeds.py "$target" "$seeds" > /dev/null

dictionary=()
case $target in
    fuzz-json|fuzz-json-differential) dictionary=(-dict=Fuzz/json.dict) ;;
    fuzz-item) dictionary=(-dict=Fuzz/item.dict) ;;
esac

# The Swift runtime's backtracer would hold libFuzzer's crash handling up; libFuzzer and ASan report instead.
export SWIFT_BACKTRACE=enable=no
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}
echo "== running $target for ${seconds}s"
run=(nice -n 10 "$binary" -max_len=20000 -timeout=5 -rss_limit_mb=2048 -print_final_stats=1
     -artifact_prefix="$work/artifacts/$target-" "${dictionary[@]}")
if [ $# -gt 0 ] && [ -f "$1" ]; then
    exec "${run[@]}" "$@"
fi
exec "${run[@]}" -max_total_time="$seconds" "$@" "$work/corpus/$target" "$seeds"
