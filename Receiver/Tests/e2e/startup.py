#!/usr/bin/env python3
"""Start-up failures of postback-receiver through real processes.

    python3 Receiver/Tests/e2e/startup.py --receiver BIN --cli BIN [--repo ROOT]

Each case starts the built binary with one thing wrong and checks its exit status against the table of
Receiver/README.md, that standard error holds exactly one line naming the cause (usage mistakes: the usage line
too), and that it ended within 10 seconds. The port-in-use case holds a port with a listener of its own on
127.0.0.1; the address-not-available case asks for 192.0.2.1 (TEST-NET-1, on no machine: binding fails, no packet
is sent); the database case names a PostgreSQL server on a port of 127.0.0.1 that nothing listens on.
"""
from __future__ import annotations

import argparse
import datetime
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from receiver_process import Checks  # noqa: E402

CHECKS = Checks()
check = CHECKS.check
DEADLINE = 10.0


def run(receiver: str, arguments: list[str], cwd: Path) -> tuple[int, str, str, float]:
    """The receiver with `arguments`, killed if it runs past the deadline: status (-9 then), stdout, stderr,
    seconds taken."""
    started = time.monotonic()
    process = subprocess.Popen([receiver, *arguments], cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        out, err = process.communicate(timeout=DEADLINE + 5)
    except subprocess.TimeoutExpired:
        process.kill()
        out, err = process.communicate()
    return process.returncode, out.decode(errors="replace"), err.decode(errors="replace"), time.monotonic() - started


def expect_failure(receiver: str, name: str, arguments: list[str], cwd: Path, status: int, cause: str) -> None:
    code, out, err, seconds = run(receiver, arguments, cwd)
    lines = err.splitlines()
    check(code == status, f"{name}: exit status {code}, not {status} (stderr: {err.strip()[:300]!r})")
    check(seconds < DEADLINE, f"{name}: took {seconds:.1f} s, not under {DEADLINE:.0f}")
    check(len(lines) == 1 and lines[0].startswith("postback-receiver: "),
          f"{name}: standard error is not one line: {lines[:4]!r}")
    check(cause in err, f"{name}: standard error does not name the cause {cause!r}: {err.strip()[:300]!r}")
    check("listening on" not in out, f"{name}: it said it was listening")
    print(f"ok: {name}: exit {code} in {seconds:.2f} s: {err.strip()[:160]}", flush=True)


def free_port() -> int:
    """A port of 127.0.0.1 that nothing listens on (bound, then closed)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def certificate(path: Path) -> None:
    """A self-signed P-256 certificate: what an operator may give as --key by mistake."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "startup test")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(1).not_valid_before(now).not_valid_after(now + datetime.timedelta(days=1))
            .sign(key, hashes.SHA256()))
    path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--receiver", required=True)
    parser.add_argument("--cli", required=True)
    args = parser.parse_args()
    receiver = str(Path(args.receiver).resolve())
    with tempfile.TemporaryDirectory(prefix="receiver-startup-") as temporary:
        work = Path(temporary)
        state = ["--state", str(work / "state.sqlite")]

        code, out, err, _ = run(receiver, ["--version"], work)
        cli = subprocess.run([args.cli, "--version"], capture_output=True).stdout.decode()
        check(code == 0 and out == cli and cli.startswith("postback-verify "),
              f"--version: exit {code}, printed {out!r}; the command line prints {cli!r}")
        print(f"ok: --version: {out.strip()}", flush=True)

        with socket.socket() as holder:
            holder.bind(("127.0.0.1", 0))
            holder.listen()
            port = holder.getsockname()[1]
            expect_failure(receiver, "port in use", ["--port", str(port), *state], work, 71, "already in use")
            # The metrics listener's address in use: the same status, naming --metrics-address, and no
            # `listening on` line (the postback listener was bound, but the start-up did not succeed).
            expect_failure(receiver, "--metrics-address in use",
                           ["--port", "0", "--metrics-address", f"127.0.0.1:{port}", *state], work, 71,
                           "--metrics-address")
        expect_failure(receiver, "address not on this machine", ["--host", "192.0.2.1", "--port", "0", *state],
                       work, 71, "no address 192.0.2.1")

        certificate(work / "cert.pem")
        expect_failure(receiver, "a certificate as --key", ["--key", f"kid={work / 'cert.pem'}", *state], work, 66,
                       "certificate")
        (work / "garbage.pem").write_bytes(bytes(range(256)) * 4)
        expect_failure(receiver, "a garbage file as --key", ["--key", f"kid={work / 'garbage.pem'}", *state], work,
                       66, "garbage.pem")
        expect_failure(receiver, "a missing key file", ["--key", f"kid={work / 'missing.pem'}", *state], work, 66,
                       "missing.pem")
        (work / "bad-schema.json").write_text('{\n  "schema-version": 1,\n  "apps": [{"advertised-item-identifier": "x"}]\n}\n')
        expect_failure(receiver, "a malformed --schema", ["--schema", str(work / "bad-schema.json"), *state], work,
                       66, "line 3")
        expect_failure(receiver, "a missing --schema file", ["--schema", str(work / "no-schema.json"), *state], work,
                       66, "no-schema.json: cannot read the file: no such file")
        # Regression: a directory or an unreadable file as --schema said "NSCocoaErrorDomain error 256".
        expect_failure(receiver, "a directory as --schema", ["--schema", str(work), *state], work, 66,
                       f"--schema {work}: is a directory; give the schema's JSON file itself")
        expect_failure(receiver, "a --schema file whose read fails", ["--schema", "/proc/self/mem", *state], work, 66,
                       "--schema /proc/self/mem: cannot read the file: Input/output error")
        unreadable = work / "unreadable-schema.json"
        unreadable.write_bytes((Path(__file__).resolve().parents[3] / "Fixtures/schema/example-schema.json").read_bytes())
        unreadable.chmod(0)
        work.chmod(0o755)
        # Root reads any file whatever its mode, so as root the receiver runs as nobody (setpriv), as a service would.
        as_nobody = ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] if os.geteuid() == 0 else []
        code, _, err, _ = run(as_nobody[0] if as_nobody else receiver,
                              [*as_nobody[1:], *([receiver] if as_nobody else []), "--schema", str(unreadable),
                               *state], work)
        check(code == 66 and "cannot read the file: permission denied" in err and len(err.splitlines()) == 1,
              f"an unreadable --schema file: exit {code}, stderr {err!r}")
        print(f"ok: an unreadable --schema file: exit {code}: {err.strip()[:160]}", flush=True)

        garbage = b"this is not a database\n" * 100
        (work / "garbage.sqlite").write_bytes(garbage)
        expect_failure(receiver, "a garbage state file", ["--state", str(work / "garbage.sqlite"), "--port", "0"],
                       work, 73, "not-ours")
        check((work / "garbage.sqlite").read_bytes() == garbage, "the garbage state file was changed")
        (work / "control\x1bname.sqlite").write_bytes(garbage)
        code, _, err, _ = run(receiver, ["--state", str(work / "control\x1bname.sqlite"), "--port", "0"], work)
        check(code == 73 and "\x1b" not in err and "control\\u{1B}name" in err,
              f"a state path with an escape character is not printed escaped: {err!r}")
        # Regression: the receiver escaped only control characters; a bidirectional override reached the terminal.
        (work / "bidi\u202ename.sqlite").write_bytes(garbage)
        code, _, err, _ = run(receiver, ["--state", str(work / "bidi\u202ename.sqlite"), "--port", "0"], work)
        check(code == 73 and "\u202e" not in err and "bidi\\u{202E}name" in err,
              f"a state path with a bidirectional override is not printed escaped: {err!r}")

        closed = free_port()
        expect_failure(receiver, "PostgreSQL server unreachable",
                       ["--state", f"postgresql://receiver@127.0.0.1:{closed}/postbacks", "--port", "0"], work, 69,
                       f"port {closed}")
        # A PostgreSQL state keeps the received postbacks itself: an archive file with it is a usage mistake.
        code, _, err, _ = run(receiver, ["--state", f"postgresql://receiver@127.0.0.1:{closed}/postbacks",
                                         "--archive", str(work / "pg-received.sqlite"), "--port", "0"], work)
        check(code == 64 and "SQLite --state only" in err and not (work / "pg-received.sqlite").exists(),
              f"--archive with a PostgreSQL state: exit {code}, stderr {err!r}")
        print("ok: --archive with a PostgreSQL state: exit 64, no file made", flush=True)

        code, _, err, seconds = run(receiver, ["--port", "70000", *state], work)
        check(code == 64 and "--port" in err and "Usage: postback-receiver" in err and seconds < DEADLINE,
              f"a usage mistake: exit {code}, stderr {err!r}")
        print("ok: a usage mistake: exit 64 with the usage line", flush=True)
    print(f"startup: {CHECKS.count} checks, {len(CHECKS.failures)} failed")
    return 1 if CHECKS.failures else 0


if __name__ == "__main__":
    sys.exit(main())
