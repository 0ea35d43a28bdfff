"""A postback-receiver process on 127.0.0.1 for the end-to-end, fault and load scripts, and curl to talk to it."""
from __future__ import annotations

import base64
import json
import os
import re
import signal
import sqlite3
import subprocess
import tempfile
import time
from pathlib import Path


class Receiver:
    """Starts `binary --port 0 --state DIR/state.sqlite OPTIONS` and waits for its "listening on" line."""

    def __init__(self, binary: str, directory: Path, options: list[str], cwd: Path | None = None,
                 state: Path | None = None, timeout: float = 30.0, state_argument: str | None = None,
                 archive: Path | None = None):
        directory.mkdir(parents=True, exist_ok=True)
        self.directory = directory
        self.state = state or directory / "state.sqlite"
        # A PostgreSQL state keeps the received postbacks itself (read them with `postback-verify export`).
        postgres = state_argument is not None and ("=" in state_argument or state_argument.startswith("postgres"))
        self.archive = None if postgres else archive or directory / "received.sqlite"
        self.log = open(directory / "receiver.log", "ab")
        self.process = subprocess.Popen(
            [binary, "--host", "127.0.0.1", "--port", "0", "--state", state_argument or str(self.state),
             *([] if self.archive is None else ["--archive", str(self.archive)]),
             *options],
            cwd=cwd, stdout=subprocess.PIPE, stderr=self.log)
        line = b""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            line = self.process.stdout.readline()
            if not line:
                break
            match = re.search(rb"listening on .*:(\d+)$", line.strip())
            if match:
                self.port = int(match.group(1))
                return
        self.process.kill()
        log = (directory / "receiver.log").read_bytes()[-2000:].decode(errors="replace")
        raise RuntimeError(f"receiver did not start: {line!r}\n{log}")

    def stop(self, timeout: float = 30.0) -> int:
        """SIGTERM, then the exit status (or -9 if it had to be killed)."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                return self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
                return -9
            finally:
                self.log.close()
        self.log.close()
        return self.process.returncode

    def kill(self) -> None:
        """kill -9."""
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self.log.close()


def curl_post(port: int, path: str, body: bytes, method: str = "POST", timeout: float = 30.0) -> tuple[int, bytes]:
    """Posts `body` with curl; returns the status (0 when no answer came) and the answer's body."""
    with tempfile.NamedTemporaryFile() as sent, tempfile.NamedTemporaryFile() as answer:
        sent.write(body)
        sent.flush()
        run = subprocess.run(
            ["curl", "-s", "-X", method, "-o", answer.name, "-w", "%{http_code}", "--max-time", str(timeout),
             "-H", "Content-Type: application/json", "--data-binary", f"@{sent.name}",
             f"http://127.0.0.1:{port}{path}"], capture_output=True)
        code = run.stdout.decode().strip() or "0"
        return int(code), Path(answer.name).read_bytes()


def curl_get(port: int, path: str) -> tuple[int, bytes]:
    run = subprocess.run(["curl", "-s", "-w", "\n%{http_code}", f"http://127.0.0.1:{port}{path}"], capture_output=True)
    body, _, code = run.stdout.rpartition(b"\n")
    return int(code or b"0"), body


def rows(state: Path) -> list[dict]:
    """Every row of received_postbacks, in insertion order (read-only; the receiver may be running)."""
    connection = sqlite3.connect(f"file:{state}?mode=ro", uri=True, timeout=60)
    try:
        connection.row_factory = sqlite3.Row
        return [dict(r) for r in connection.execute(
            "SELECT id, received, request, route, verdict, code, key, body, record FROM received_postbacks "
            "ORDER BY id")]
    finally:
        connection.close()


def exported(cli: str, state: str, after: str | None = None, expect: int = 0) -> list[dict]:
    """`postback-verify export --state STATE [--after CURSOR]`: its lines, with `key` and `body` as bytes.

    PostgreSQL shows a committed row only once every older transaction on the server has ended (docs/state.md),
    so with `expect`, export is run again (for up to 30 s) while it prints fewer lines than that."""
    deadline = time.monotonic() + 30
    while True:
        lines = _exported_once(cli, state, after)
        if len(lines) >= expect or time.monotonic() > deadline:
            return lines
        time.sleep(0.05)


def _exported_once(cli: str, state: str, after: str | None) -> list[dict]:
    run = subprocess.run([cli, "export", "--state", state, *(["--after", after] if after else [])],
                         capture_output=True, timeout=60)
    if run.returncode != 0:
        raise RuntimeError(f"export exited {run.returncode}: {run.stderr.decode(errors='replace')}")
    lines = [json.loads(line) for line in run.stdout.splitlines()]
    for line in lines:
        line["key"] = None if line["key"] is None else line["key"].encode()
        line["body"] = base64.b64decode(line["body"])
    return lines


def metric(port: int, name: str, **labels: str) -> float:
    """The value of one series of GET /metrics (0 when absent)."""
    text = curl_get(port, "/metrics")[1].decode()
    for line in text.splitlines():
        if not line.startswith(name + "{") and not line.startswith(name + " "):
            continue
        series, _, value = line.rpartition(" ")
        found = dict(re.findall(r'(\w+)="([^"]*)"', series))
        if series.split("{")[0] == name and found == labels:
            return float(value)
    return 0.0


class Checks:
    """The checks of one test script: how many ran, and the message of each that failed (printed as it fails)."""

    def __init__(self) -> None:
        self.count = 0
        self.failures: list[str] = []

    def check(self, condition: bool, message: str) -> bool:
        self.count += 1
        if not condition:
            self.failures.append(message)
            print(f"FAIL: {message}", flush=True)
        return condition
