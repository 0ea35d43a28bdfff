#!/usr/bin/env bash
# The release postback-receiver runs without a Swift toolchain (Receiver/Package.swift links the Swift runtime and
# Foundation statically in release, as the root package does for postback-verify):
#   1. ldd lists no library under the toolchain (found from `swift`: dirname of dirname of its real path) and no
#      libswift*, libFoundation*, lib_Foundation*, libdispatch or libBlocksRuntime anywhere, and nothing "not found";
#   2. a copy of the binary in a temporary directory, started with `env -i PATH=/usr/bin:/bin` (no LD_LIBRARY_PATH,
#      no toolchain on PATH), prints --help, starts on 127.0.0.1 and answers GET /healthz, and exits 0 on SIGTERM;
#   3. as root with unshare(1): the same with the toolchain's directory hidden under an empty tmpfs in a private
#      mount namespace, as on a machine that never had Swift (skipped, and said so, when not root).
# The binary: $POSTBACK_RECEIVER if set (CI: after `swift build -c release --package-path Receiver`), else that
# build is run here. Needs curl.
set -euo pipefail
cd "$(dirname "$0")/../.."

binary="${POSTBACK_RECEIVER:-}"
if [ -z "$binary" ]; then
    swift build -c release --package-path Receiver
    binary="$(swift build -c release --package-path Receiver --show-bin-path)/postback-receiver"
fi
[ -x "$binary" ] || { echo "portable.sh: no binary at $binary" >&2; exit 1; }
toolchain="$(dirname "$(dirname "$(readlink -f "$(command -v swift)")")")"
[ -n "$toolchain" ] && [ "$toolchain" != / ] || { echo "portable.sh: cannot find the toolchain from swift" >&2; exit 1; }

fail() { echo "portable.sh: FAIL: $*" >&2; exit 1; }

echo "-- ldd $binary (toolchain: $toolchain)"
libraries="$(ldd "$binary")"
echo "$libraries" | sed 's/^/   /'
if echo "$libraries" | grep -F -e "$toolchain/" > /dev/null; then fail "ldd lists libraries under $toolchain"; fi
if echo "$libraries" | grep -E -e 'libswift|libFoundation|lib_Foundation|libdispatch|libBlocksRuntime' > /dev/null; then
    fail "ldd lists the Swift runtime or Foundation (not linked statically)"
fi
if echo "$libraries" | grep -F 'not found' > /dev/null; then fail "ldd: a library is not found"; fi
if readelf -d "$binary" 2> /dev/null | grep -E 'R(UN)?PATH' | grep -F "$toolchain" > /dev/null; then
    fail "the binary's RPATH/RUNPATH names $toolchain"
fi

work="$(mktemp -d)"
pid=""
cleanup() {
    if [ -n "$pid" ]; then kill "$pid" 2> /dev/null || true; wait "$pid" 2> /dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT
cp "$binary" "$work/postback-receiver"

# Runs the copy in $work as `env -i PATH=/usr/bin:/bin ./postback-receiver ARGS`, the prefix command (unshare ...)
# first when given: --help, then a start on port 0, /healthz and SIGTERM.
run_checks() { # TAG LABEL PREFIX...
    local tag="$1" label="$2"
    shift 2
    local out="$work/help.$tag" port="" status=0
    (cd "$work" && "$@" env -i PATH=/usr/bin:/bin ./postback-receiver --help) > "$out" 2>&1 \
        || fail "$label: --help exited non-zero: $(tail -n 5 "$out")"
    grep -q -- '--state' "$out" || fail "$label: --help printed no options: $(head -n 5 "$out")"
    rm -f "$work/state.sqlite" "$work/state-received.sqlite"
    (cd "$work" && exec "$@" env -i PATH=/usr/bin:/bin ./postback-receiver --host 127.0.0.1 --port 0 \
        --state state.sqlite > "$work/out.$tag" 2> "$work/err.$tag") &
    pid=$!
    for _ in $(seq 1 300); do
        port="$(sed -n 's/^postback-receiver: listening on 127\.0\.0\.1:\([0-9][0-9]*\)$/\1/p' "$work/out.$tag" 2> /dev/null || true)"
        [ -n "$port" ] && break
        kill -0 "$pid" 2> /dev/null || fail "$label: exited before listening: $(tail -n 5 "$work/err.$tag")"
        sleep 0.1
    done
    [ -n "$port" ] || fail "$label: did not print its port"
    answer="$(curl -s --max-time 10 "http://127.0.0.1:$port/healthz")"
    [ "$answer" = ok ] || fail "$label: GET /healthz answered '$answer'"
    kill -TERM "$pid"
    wait "$pid" || status=$?
    pid=""
    [ "$status" = 0 ] || fail "$label: exited $status on SIGTERM"
    echo "ok: $label: --help, listening on 127.0.0.1:$port, GET /healthz 'ok', SIGTERM exit 0"
}

if env -i PATH=/usr/bin:/bin sh -c 'command -v swift' > /dev/null; then
    echo "   (note: swift is on /usr/bin:/bin too; the ldd check and the hidden-toolchain run still hold)"
fi
run_checks plain "env -i PATH=/usr/bin:/bin, from $work"

# A private mount namespace: the toolchain's directory becomes an empty tmpfs for this process only.
hidden="$(dirname "$toolchain")"
case "$hidden" in /|/usr|/usr/local) hidden="$toolchain" ;; esac
if [ "$(id -u)" = 0 ] && command -v unshare > /dev/null \
    && unshare -m sh -c 'mount -t tmpfs -o size=1m none "$0"' "$hidden" 2> /dev/null; then
    run_checks hidden "toolchain hidden ($hidden under an empty tmpfs)" \
        unshare -m sh -c 'mount -t tmpfs -o size=1m none "$0" && [ ! -e "$1" ] && shift && exec "$@"' "$hidden" "$toolchain/bin/swift"
else
    echo "   skipped: the run with the toolchain hidden (needs root, unshare -m and mount in a mount namespace)"
fi
echo "ok: the release postback-receiver needs no Swift toolchain"
