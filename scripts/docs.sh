#!/usr/bin/env bash
# Builds the API documentation of the two library products, Attribution and AttributionStores, with the toolchain's
# own `docc` (no swift-docc-plugin, so the package keeps no package dependencies), failing on any DocC warning, and
# checks that every public symbol has a doc comment with its sections (scripts/check-doc-comments.py).
#
#   scripts/docs.sh              build both archives into .build/docs/{Attribution,AttributionStores}.doccarchive
#   scripts/docs.sh --static     the same, transformed for static hosting (serve .build/docs/<Module>.doccarchive)
#
# The symbol graphs come from `swift package dump-symbol-graph`, which reuses the debug build (after `swift test` it
# compiles nothing of the libraries again) and extracts the public symbols of each module. `docc` is the one next to
# `swift` (the toolchain's usr/bin), or DOCC if set.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
out="$root/.build/docs"
docc="${DOCC:-$(command -v docc || echo "$(dirname "$(readlink -f "$(command -v swift)")")/docc")}"
static=()
if [ "${1:-}" = "--static" ]; then static=(--transform-for-static-hosting); fi

log="$(mktemp)"
trap 'rm -f "$log"' EXIT
if ! swift package dump-symbol-graph --minimum-access-level public > "$log" 2>&1; then
    grep -v '^\[[0-9]*/[0-9]*\] ' "$log" >&2 || true
    echo "scripts/docs.sh: swift package dump-symbol-graph failed" >&2
    exit 1
fi
graphs="$(sed -n 's/^Files written to //p' "$log" | tail -1)"
if [ ! -f "$graphs/Attribution.symbols.json" ]; then
    echo "scripts/docs.sh: no Attribution.symbols.json where dump-symbol-graph wrote ($graphs)" >&2
    exit 1
fi

status=0
for module in Attribution AttributionStores; do
    # One module's graphs per docc run (the main graph and its extensions of other modules' types, Module@Other).
    rm -rf "$out/graphs/$module" "$out/$module.doccarchive"
    mkdir -p "$out/graphs/$module"
    cp "$graphs/$module.symbols.json" "$out/graphs/$module/"
    cp "$graphs/$module"@*.symbols.json "$out/graphs/$module/" 2> /dev/null || true
    # AttributionStores links to Attribution's symbols (``AttributionError``, ``DeduplicationStore``): Attribution's
    # archive is built first with link metadata, and is AttributionStores's dependency.
    links=(--enable-experimental-external-link-support)
    if [ "$module" = AttributionStores ]; then
        if [ ! -d "$out/Attribution.doccarchive" ]; then
            echo "scripts/docs.sh: AttributionStores not built: its links need Attribution's archive" >&2
            continue
        fi
        links+=(--dependency "$out/Attribution.doccarchive")
    fi
    echo "== docc convert Sources/$module/$module.docc"
    if ! "$docc" convert "Sources/$module/$module.docc" --additional-symbol-graph-dir "$out/graphs/$module" \
        --fallback-display-name "$module" --fallback-bundle-identifier "org.postback-verify.$module" \
        --output-path "$out/$module.doccarchive" --warnings-as-errors "${links[@]}" ${static[@]+"${static[@]}"} \
        > "$log" 2>&1; then
        cat "$log" >&2
        echo "scripts/docs.sh: docc reported warnings or errors for $module (above)" >&2
        status=1
    fi
done

echo "== every public symbol documented (scripts/check-doc-comments.py)"
python3 scripts/check-doc-comments.py "$graphs" Attribution AttributionStores || status=1
[ "$status" = 0 ] && echo "== documentation: $out/Attribution.doccarchive, $out/AttributionStores.doccarchive"
exit "$status"
