#!/usr/bin/env bash
# Checks of Receiver/deploy/ against the built release binary (CI has no container engine and no systemd running,
# so this checks what can be checked without them):
#   1. postback-receiver.service: `systemd-analyze verify` of a temporary copy whose ExecStart names the built
#      binary (verify needs the ExecStart binary to exist; CI does not install into /usr/local/bin) must print
#      nothing and succeed; `systemd-analyze security --offline=yes` must rate it 2.0 or lower; and the unit's
#      ExecStart arguments, with /var/lib/postback-receiver mapped to a temporary directory and the port to 0,
#      start the binary (as root: as nobody, with no_new_privs and no capabilities, as the unit runs it), which
#      answers GET /healthz; systemd-sysusers makes the unit's user from
#      postback-receiver.sysusers (in a scratch root).
#   2. Containerfile: its builder stage installs the packages that .ci/run and Receiver/README.md install for the
#      build and runs the same `swift build -c release --package-path Receiver` line as .ci/run; its builder image
#      carries the Swift version of this toolchain and Debian 12 (bookworm) as this machine; its runtime stage's
#      packages (with their dependencies, and the base image's libc6 libgcc-s1 libstdc++6 zlib1g) provide every
#      shared library ldd lists for the binary (each mapped to its Debian package with dpkg -S); its ENTRYPOINT
#      arguments (address mapped to 127.0.0.1, port to 0, state to a temporary directory) start the binary; and its
#      HEALTHCHECK command, run as written against that receiver, succeeds.
# The binary: $POSTBACK_RECEIVER if set (CI), else `swift build -c release --package-path Receiver` is run here.
# Needs systemd-analyze (Debian: systemd), dpkg, apt-cache, curl and python3. Traffic only to 127.0.0.1.
set -euo pipefail
cd "$(dirname "$0")/../.."
repo="$PWD"
deploy="$repo/Receiver/deploy"

binary="${POSTBACK_RECEIVER:-}"
if [ -z "$binary" ]; then
    swift build -c release --package-path Receiver
    binary="$(swift build -c release --package-path Receiver --show-bin-path)/postback-receiver"
fi
binary="$(readlink -f "$binary")"
[ -x "$binary" ] || { echo "deploy.sh: no binary at $binary" >&2; exit 1; }
command -v systemd-analyze > /dev/null || { echo "deploy.sh: systemd-analyze not found (apt-get install systemd)" >&2; exit 1; }

work="$(mktemp -d)"
pid=""
cleanup() {
    if [ -n "$pid" ]; then kill "$pid" 2> /dev/null || true; wait "$pid" 2> /dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "deploy.sh: FAIL: $*" >&2; exit 1; }

# Starts "$@" (stdout to $work/out), waits for its "listening on" line; sets $port and $pid.
start() {
    : > "$work/out"
    "$@" > "$work/out" 2> "$work/err" &
    pid=$!
    port=""
    for _ in $(seq 1 300); do
        port="$(sed -n 's/^postback-receiver: listening on 127\.0\.0\.1:\([0-9][0-9]*\)$/\1/p' "$work/out" 2> /dev/null || true)"
        [ -n "$port" ] && return 0
        kill -0 "$pid" 2> /dev/null || fail "$* exited before listening: $(tail -n 5 "$work/err")"
        sleep 0.1
    done
    fail "$* did not print its port"
}
stop() {
    local status=0
    kill -TERM "$pid"
    wait "$pid" || status=$?
    pid=""
    [ "$status" = 0 ] || fail "the receiver exited $status on SIGTERM"
}

# ---- 1. the systemd unit
unit="$deploy/postback-receiver.service"
mkdir "$work/unit"
sed "s|^ExecStart=/usr/local/bin/postback-receiver |ExecStart=$binary |" "$unit" > "$work/unit/postback-receiver.service"
grep -q "^ExecStart=$binary " "$work/unit/postback-receiver.service" || fail "no ExecStart=/usr/local/bin/postback-receiver line in $unit"
echo "-- systemd-analyze verify (a copy with ExecStart=$binary ...)"
if ! output="$(systemd-analyze verify "$work/unit/postback-receiver.service" 2>&1)"; then
    echo "$output" >&2
    fail "systemd-analyze verify failed"
fi
[ -z "$output" ] || { echo "$output" >&2; fail "systemd-analyze verify printed warnings"; }
echo "ok: systemd-analyze verify: no warnings"
exposure="$(systemd-analyze security --offline=yes "$work/unit/postback-receiver.service" 2>&1 \
    | sed -n 's/.*Overall exposure level for postback-receiver.service: \([0-9.]*\).*/\1/p')"
[ -n "$exposure" ] || fail "systemd-analyze security printed no exposure level"
python3 -c "import sys; sys.exit(0 if float('$exposure') <= 2.0 else 1)" || fail "systemd-analyze security: exposure $exposure > 2.0"
echo "ok: systemd-analyze security --offline=yes: exposure level $exposure (of 10; 2.0 or lower required)"

# The unit's user comes from postback-receiver.sysusers: systemd-sysusers into a scratch root makes it.
user="$(sed -n 's/^User=//p' "$unit")"
mkdir -p "$work/root/etc"
systemd-sysusers --root="$work/root" "$deploy/postback-receiver.sysusers" > /dev/null 2>&1 \
    || fail "systemd-sysusers refused postback-receiver.sysusers"
grep -q "^$user:x:[0-9]*:[0-9]*:.*:/var/lib/postback-receiver:/usr/sbin/nologin$" "$work/root/etc/passwd" \
    || fail "postback-receiver.sysusers does not make the unit's User=$user (home /var/lib/postback-receiver, nologin)"
grep -q "^$(sed -n 's/^Group=//p' "$unit"):" "$work/root/etc/group" || fail "postback-receiver.sysusers does not make the unit's Group="
echo "ok: systemd-sysusers makes the unit's user $user from postback-receiver.sysusers (in a scratch root)"

exec_start="$(sed -n 's|^ExecStart=/usr/local/bin/postback-receiver ||p' "$unit")"
mkdir "$work/var-lib"
# shellcheck disable=SC2086 # the unit's arguments, split as systemd splits them (no quotes in them)
set -- $(echo "$exec_start" | sed -e "s|/var/lib/postback-receiver|$work/var-lib|g")
args=()
while [ $# -gt 0 ]; do
    case "$1" in
        --port) args+=(--port 0); shift 2 ;;
        --host) [ "$2" = 127.0.0.1 ] || fail "the unit listens on $2, not 127.0.0.1"; args+=(--host 127.0.0.1); shift 2 ;;
        *) args+=("$1"); shift ;;
    esac
done
# As root: run it as the unit would, as an unprivileged user (nobody, owning the state directory) with
# no_new_privs and no capabilities (setpriv, util-linux), so nothing in it needs root.
# The binary is copied into the scratch directory, which nobody can reach (the checkout may be under /root).
as_user=()
unit_binary="$binary"
if [ "$(id -u)" = 0 ] && command -v setpriv > /dev/null; then
    chmod 0755 "$work"
    install -m 0755 "$binary" "$work/postback-receiver"
    unit_binary="$work/postback-receiver"
    chown nobody:nogroup "$work/var-lib"
    chmod 0750 "$work/var-lib"
    as_user=(setpriv --reuid=nobody --regid=nogroup --clear-groups --no-new-privs --bounding-set=-all --inh-caps=-all)
fi
start "${as_user[@]}" "$unit_binary" "${args[@]}"
[ "$(curl -s --max-time 10 "http://127.0.0.1:$port/healthz")" = ok ] || fail "the unit's ExecStart: GET /healthz"
stop
[ -f "$work/var-lib/state.sqlite" ] && [ -f "$work/var-lib/state-received.sqlite" ] \
    || fail "the unit's ExecStart did not make its state and archive in its state directory"
echo "ok: the unit's ExecStart arguments ($exec_start) start the binary${as_user:+ as nobody without privileges}: /healthz ok, state and archive in the state directory"

# ---- 2. the Containerfile
echo "-- Containerfile"
swift_version="$(swift --version 2>&1 | sed -n 's/.*Swift version \([0-9][0-9.]*\).*/\1/p' | head -n 1)"
debian_codename="$(. /etc/os-release && echo "${VERSION_CODENAME:-}")"
ldd "$binary" > "$work/ldd"
# Each library path ldd lists, with its Debian package (dpkg -S; usr-merged paths tried both ways).
: > "$work/libraries"
while read -r path; do
    package=""
    for candidate in "$path" "$(readlink -f "$path")" "${path#/usr}" "/usr$path"; do
        package="$(dpkg -S "$candidate" 2> /dev/null | head -n 1 | cut -d: -f1)" && [ -n "$package" ] && break
    done
    [ -n "$package" ] || package="$(dpkg -S "*/$(basename "$path")" 2> /dev/null | head -n 1 | cut -d: -f1)"
    echo "$path ${package:-?}" >> "$work/libraries"
done < <(sed -n -e 's/.*=> \(\/[^ ]*\) (0x.*/\1/p' -e 's/^[[:space:]]*\(\/[^ ]*\) (0x.*/\1/p' "$work/ldd")

CONTAINERFILE="$deploy/Containerfile" CI_RUN="$repo/.ci/run" README="$repo/Receiver/README.md" \
SWIFT_VERSION="$swift_version" DEBIAN_CODENAME="$debian_codename" LIBRARIES="$work/libraries" \
python3 - <<'PY' > "$work/container-checks" || { cat "$work/container-checks"; fail "Containerfile (above)"; }
import json, os, re, subprocess, sys

failures = []
def check(condition, message):
    print(("ok:   " if condition else "FAIL: ") + message)
    if not condition:
        failures.append(message)

def logical_lines(text):
    """Lines with backslash continuations joined, comments dropped."""
    joined = re.sub(r"\\\n", " ", text)
    return [line.strip() for line in joined.splitlines() if line.strip() and not line.strip().startswith("#")]

def apt_packages(command):
    """Packages named by every `apt-get install` in a shell command line (options and -qq flags left out)."""
    packages = []
    for part in re.split(r"&&|;|\|\|", command):
        words = part.split()
        if "apt-get" in words and "install" in words:
            packages += [w for w in words[words.index("install") + 1:] if not w.startswith("-")]
    return packages

lines = logical_lines(open(os.environ["CONTAINERFILE"]).read())
args = {}
stages = []
for line in lines:
    instruction, _, rest = line.partition(" ")
    instruction = instruction.upper()
    if instruction == "ARG" and not stages:
        name, _, value = rest.partition("=")
        args[name] = value
    elif instruction == "FROM":
        image = re.sub(r"\$\{(\w+)\}", lambda m: args.get(m.group(1), m.group(0)), rest.split()[0])
        stages.append({"image": image, "lines": []})
    elif stages:
        stages[-1]["lines"].append((instruction, rest))
check(len(stages) == 2, f"two stages (builder, runtime): {[s['image'] for s in stages]}")
builder, runtime = stages[0], stages[-1]

# The builder: the CI's packages and build command.
builder_runs = [rest for instruction, rest in builder["lines"] if instruction == "RUN"]
builder_packages = sorted({p for run in builder_runs for p in apt_packages(run)})
ci_lines = logical_lines(open(os.environ["CI_RUN"]).read())
ci_packages = {p for line in ci_lines for p in apt_packages(line)}
readme_packages = sorted({p for line in logical_lines(open(os.environ["README"]).read()) for p in apt_packages(line)})
check(bool(builder_packages) and set(builder_packages) <= ci_packages,
      f"builder's apt packages {builder_packages} are all installed by .ci/run")
check(builder_packages == readme_packages,
      f"builder's apt packages are Receiver/README.md's build packages {readme_packages}")
build = "swift build -c release --package-path Receiver"
check(build in ci_lines, f".ci/run runs `{build}` (a line of its own)")
builder_builds = [run for run in builder_runs if re.search(r"\bswift build\b(?!.*--show-bin-path)", run)]
check(builder_builds == [build], f"the builder's only build is `{build}`: {builder_builds}")
swift_version = os.environ["SWIFT_VERSION"]
codename = os.environ["DEBIAN_CODENAME"]
check(re.fullmatch(rf"(.*/)?swift:{re.escape(swift_version)}-{codename}", builder["image"]) is not None,
      f"builder image {builder['image']} is Swift {swift_version} on Debian {codename}, as this machine")
check(runtime["image"] == f"debian:{codename}-slim", f"runtime image {runtime['image']} is debian:{codename}-slim")

# The runtime: its packages (and their dependencies, and the base image's) provide every library of the binary.
runtime_packages = sorted({p for instruction, rest in runtime["lines"] if instruction == "RUN" for p in apt_packages(rest)})
base = ["libc6", "libgcc-s1", "libstdc++6", "zlib1g"]
closure = subprocess.run(
    ["apt-cache", "depends", "--recurse", "--no-recommends", "--no-suggests", "--no-conflicts", "--no-breaks",
     "--no-replaces", "--no-enhances", *runtime_packages, *base],
    capture_output=True, text=True, check=True).stdout
# Depends and Pre-Depends, recursively; package names start at column 0 (their relations are indented).
available = {line.strip().split(":")[0] for line in closure.splitlines() if line and not line[0].isspace()}
available |= set(runtime_packages) | set(base)
needed = set()
for line in open(os.environ["LIBRARIES"]):
    path, package = line.split()
    needed.add(package)
    check(package in available, f"{path} is in {package}, " + (
        "a runtime package" if package in runtime_packages else
        "in the base image" if package in base else
        "a dependency of the runtime packages" if package in available else "NOT in the runtime stage"))
for package in runtime_packages:
    if package != "ca-certificates" and package not in needed:
        print(f"note: runtime package {package} provides none of ldd's libraries")

# ENTRYPOINT and HEALTHCHECK, for the shell to run.
entrypoint = [rest for instruction, rest in runtime["lines"] if instruction == "ENTRYPOINT"]
healthcheck = [rest for instruction, rest in runtime["lines"] if instruction == "HEALTHCHECK"]
check(len(entrypoint) == 1, "one ENTRYPOINT (exec form)")
check(len(healthcheck) == 1 and " CMD " in f" {healthcheck[0]} ", "one HEALTHCHECK ... CMD (exec form)")
users = [rest for instruction, rest in runtime["lines"] if instruction == "USER"]
check(bool(users) and users[-1] not in ("root", "0"), f"runs as a user other than root: {users}")
check(any(i == "EXPOSE" and "8080" in r.split() for i, r in runtime["lines"]), "EXPOSE 8080")
check(any(i == "VOLUME" and "/var/lib/postback-receiver" in r for i, r in runtime["lines"]), "a VOLUME for /var/lib/postback-receiver")
if entrypoint:
    open(os.environ["LIBRARIES"] + ".entrypoint", "w").write("\n".join(json.loads(entrypoint[0])) + "\n")
if healthcheck:
    open(os.environ["LIBRARIES"] + ".healthcheck", "w").write(
        "\n".join(json.loads(healthcheck[0].split(" CMD ", 1)[1] if " CMD " in healthcheck[0] else "[]")) + "\n")
sys.exit(1 if failures else 0)
PY
sed 's/^/   /' "$work/container-checks"

# The ENTRYPOINT as written, with the address, port and state directory mapped; then the HEALTHCHECK as written,
# with its port 8080 mapped to the receiver's.
mapfile -t entry < "$work/libraries.entrypoint"
[ "${entry[0]}" = /usr/local/bin/postback-receiver ] || fail "the ENTRYPOINT runs ${entry[0]}, not /usr/local/bin/postback-receiver"
args=()
set -- "${entry[@]:1}"
while [ $# -gt 0 ]; do
    case "$1" in
        --host) args+=(--host 127.0.0.1); shift 2 ;;
        --port) [ "$2" = 8080 ] || fail "the ENTRYPOINT's port is $2, not the EXPOSEd 8080"; args+=(--port 0); shift 2 ;;
        *) args+=("${1//\/var\/lib\/postback-receiver/$work/container}"); shift ;;
    esac
done
mkdir "$work/container"
start "$binary" "${args[@]}"
mapfile -t health < "$work/libraries.healthcheck"
for i in "${!health[@]}"; do health[i]="${health[i]//\/8080/\/$port}"; done
"${health[@]}" || fail "the HEALTHCHECK command failed against a running receiver: ${health[*]}"
stop
[ -f "$work/container/state.sqlite" ] || fail "the ENTRYPOINT's state is not in its volume's directory"
if "${health[@]}" 2> /dev/null; then fail "the HEALTHCHECK command succeeds with no receiver listening"; fi
echo "ok: the Containerfile's ENTRYPOINT starts the binary (state in the volume's directory); its HEALTHCHECK succeeds against it, and fails once it stopped"
echo "   (the image itself is not built here: no container engine or image registry in CI; see Receiver/deploy/README.md)"
