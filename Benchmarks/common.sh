# Sourced by run.sh, floods.sh and state-cost.sh (set SCRIPT to the caller's name first): where things are, the
# messages, the arithmetic, and the binary to measure. Settings, as environment variables:
#   PACKAGE_DIR=..  the package (default: the repository holding Benchmarks/)
#   BUILD_PATH=$PACKAGE_DIR/.build   its scratch path; the binary is $BUILD_PATH/release/postback-verify
#   BIN=path        measure this binary instead (nothing is built); NO_BUILD=1: do not build, use what is there
#   PYTHON=python3  (with `cryptography`)

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PACKAGE_DIR="${PACKAGE_DIR:-$(cd "$HERE/.." && pwd)}"
BUILD_PATH="${BUILD_PATH:-$PACKAGE_DIR/.build}"
PYTHON="${PYTHON:-python3}"

say() { printf '%s\n' "$*" >&2; }  # progress goes to standard error, results to standard output
die() { echo "$SCRIPT: error: $*" >&2; exit 2; }
calc() { awk "BEGIN {printf \"$1\", $2}"; }
median() { sort -g | awk '{a[NR]=$1} END {if (NR==0) exit 1; print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

# Sets BIN: the one given, or the release build (built first unless NO_BUILD=1); dies when it is not executable.
release_binary() {
  if [[ -z "${BIN:-}" ]]; then
    if [[ "${NO_BUILD:-0}" != 1 ]]; then
      command -v swift > /dev/null 2>&1 || die "swift not found"
      say "== swift build -c release (package $PACKAGE_DIR, scratch path $BUILD_PATH)"
      swift build -c release --package-path "$PACKAGE_DIR" --scratch-path "$BUILD_PATH" >&2
    fi
    BIN="$BUILD_PATH/release/postback-verify"
  fi
  [[ -x "$BIN" ]] || die "no executable at $BIN (build it, or set BIN / BUILD_PATH)"
}
