#!/usr/bin/env python3
"""Issue 31 item 4, "the log never holds the receiver": the built receiver with its standard error on a pipe that
nobody reads (what a stalled journald or container log driver does).

    python3 Receiver/Tests/e2e/stalled_stderr.py --receiver BIN [--requests N]

Before the fix, after 718 requests every request timed out (a request's log line waited for the pipe, on the
event loop) and SIGTERM did not stop the process. Now: every one of N (5,000) requests, a few hundred bytes of log
line each (many times what a 64 KiB pipe holds), must be answered 200; `/metrics` must count dropped log lines;
once the pipe is read, one line must say how many were dropped (at least what the metric counted); the pipe is
then left unread again for 3,000 more requests, every one answered, and SIGTERM must end the process, exit 0,
within `--stop-timeout` (2 s) plus the log's 1 s (and a second of slack for a loaded machine). Only 127.0.0.1.
"""
from __future__ import annotations

import argparse
import http.client
import os
import re
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from receiver_process import Checks  # noqa: E402

CHECKS = Checks()
check = CHECKS.check
STOP_TIMEOUT = 2.0
LOG_STOP_BOUND = 1.0
SLACK = 1.0
NOTICE = re.compile(rb"(\d+) log lines dropped: standard error did not take them")
# A long query makes each request's log line a few hundred bytes (the path is logged, the router ignores it).
PATH = "/.well-known/appattribution/report-attribution/?pad=" + "p" * 300


def post_all(port: int, total: int, connections: int = 8) -> tuple[int, list[str]]:
    """`total` POSTs on `connections` keep-alive connections; the number answered 200, and what went wrong (a
    connection stops at its first failure: a request that times out would time out again)."""
    answered = [0] * connections
    problems: list[str] = []

    def worker(slot: int) -> None:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        try:
            for _ in range(total // connections + (1 if slot < total % connections else 0)):
                connection.request("POST", PATH, body=b'{"not":"a postback"}',
                                   headers={"Content-Type": "application/json"})
                response = connection.getresponse()
                response.read()
                if response.status != 200:
                    problems.append(f"answered {response.status}")
                    return
                answered[slot] += 1
        except Exception as error:  # noqa: BLE001 - the failure is the finding
            problems.append(f"{type(error).__name__}: {error}")
        finally:
            connection.close()

    threads = [threading.Thread(target=worker, args=(slot,)) for slot in range(connections)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return sum(answered), problems


def metric(port: int, name: str) -> float:
    """The value of an unlabelled series of GET /metrics; -1 when it is missing or /metrics does not answer within
    10 s (a receiver held by its log answers nothing)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.request("GET", "/metrics")
        text = connection.getresponse().read().decode()
    except Exception as error:  # noqa: BLE001 - the failure is the finding
        print(f"GET /metrics: {type(error).__name__}: {error}", flush=True)
        return -1
    finally:
        connection.close()
    found = re.search(rf"^{re.escape(name)} (\S+)$", text, re.M)
    return float(found.group(1)) if found else -1


def read_until_notice(descriptor: int, timeout: float) -> bytes:
    """Reads the pipe until a line says lines were dropped (or `timeout` passes), then stops reading it."""
    read = b""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and not NOTICE.search(read):
        ready, _, _ = select.select([descriptor], [], [], 0.1)
        if ready:
            chunk = os.read(descriptor, 1 << 16)
            if not chunk:
                break
            read += chunk
            # Whole lines only: the notice's line may still be arriving.
            if NOTICE.search(read) and not read.endswith(b"\n"):
                deadline = max(deadline, time.monotonic() + 1)
                continue
    return read


def report(failures_before: int, text: str) -> None:
    """`ok: text` when no check failed since `failures_before` failures, else `measured: text`."""
    print(("ok: " if len(CHECKS.failures) == failures_before else "measured: ") + text, flush=True)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--receiver", required=True)
    parser.add_argument("--requests", type=int, default=5000)
    arguments = parser.parse_args()
    arguments.receiver = os.path.abspath(arguments.receiver)  # the receiver runs in a directory of its own
    started_at = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="stalled-stderr-") as directory:
        # Standard error on a pipe this script does not read until it says so.
        process = subprocess.Popen(
            [arguments.receiver, "--host", "127.0.0.1", "--port", "0", "--no-storage",
             "--stop-timeout", str(int(STOP_TIMEOUT))],
            cwd=directory, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            port = 0
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                line = process.stdout.readline()
                if not line:
                    break
                if found := re.search(rb"listening on .*:(\d+)$", line.strip()):
                    port = int(found.group(1))
                    break
            if not check(port > 0, "the receiver did not start"):
                return 1
            stderr = process.stderr.fileno()

            # 1. The pipe stalled: every request answered, the drops counted.
            failures = len(CHECKS.failures)
            began = time.monotonic()
            answered, problems = post_all(port, arguments.requests)
            seconds = time.monotonic() - began
            check(answered == arguments.requests,
                  f"stalled standard error: {answered} of {arguments.requests} requests answered 200 "
                  f"({problems[:3]})")
            dropped = metric(port, "postback_receiver_log_lines_dropped_total")
            check(dropped > 0, f"postback_receiver_log_lines_dropped_total is {dropped} with standard error stalled")
            report(failures, f"{answered} of {arguments.requests} requests answered 200 in {seconds:.1f} s with "
                             f"standard error unread; {dropped:.0f} log lines dropped (the metric)")

            # 2. The pipe read: the lines kept, then one line saying how many were dropped.
            failures = len(CHECKS.failures)
            read = read_until_notice(stderr, 20)
            notices = NOTICE.findall(read)
            check(len(notices) == 1, f"{len(notices)} lines say log lines were dropped, not 1")
            said = int(notices[0]) if notices else 0
            check(said >= dropped, f"the line says {said} lines were dropped, the metric {dropped:.0f} before it")
            lines = read.splitlines()
            requests = [line for line in lines if b" info Request " in line and b" hb.request.method=POST " in line]
            check(len(requests) > 0 and all(re.search(rb" latency_ms=\d+\.\d{3} postback.code=\S+ "
                                                      rb"postback.verdict=invalid status=200$", line)
                                            for line in requests),
                  f"request lines without their status, verdict, code and latency: {requests[:1]!r}")
            # Every POST accounted for: its line kept, or counted in the notice (which may count the scrape's too).
            check(len(requests) + said in (arguments.requests, arguments.requests + 1),
                  f"{len(requests)} POST lines kept and {said} dropped, for {arguments.requests} requests")
            report(failures, f"the pipe read: {len(requests)} request lines kept, then "
                             f"{NOTICE.search(read).group(0).decode() if notices else 'no notice'!r}")

            # 3. Stalled again; SIGTERM ends it within --stop-timeout and the log's bound.
            failures = len(CHECKS.failures)
            answered, problems = post_all(port, 3000)
            check(answered == 3000, f"stalled again: {answered} of 3000 requests answered 200 ({problems[:3]})")
            again = metric(port, "postback_receiver_log_lines_dropped_total")
            check(again > dropped, f"no more lines dropped when stalled again ({again:.0f}, {dropped:.0f} before)")
            stopping = time.monotonic()
            process.send_signal(signal.SIGTERM)
            bound = STOP_TIMEOUT + LOG_STOP_BOUND + SLACK
            try:
                code = process.wait(bound + 20)
            except subprocess.TimeoutExpired:
                process.kill()
                code = process.wait()
            stopped = time.monotonic() - stopping
            check(code == 0, f"SIGTERM with standard error stalled: exit status {code}, not 0")
            check(stopped < bound, f"SIGTERM with standard error stalled took {stopped:.2f} s, not under "
                                   f"{bound:.0f} s (--stop-timeout {STOP_TIMEOUT:.0f} + {LOG_STOP_BOUND:.0f} + "
                                   f"{SLACK:.0f})")
            report(failures, f"stalled again, {answered} answered, {again:.0f} dropped in all; SIGTERM: exit "
                             f"{code} after {stopped:.2f} s")
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
            process.stdout.close()
            process.stderr.close()
    print(f"{CHECKS.count - len(CHECKS.failures)} of {CHECKS.count} checks passed in "
          f"{time.monotonic() - started_at:.1f} s", flush=True)
    return 1 if CHECKS.failures else 0


if __name__ == "__main__":
    sys.exit(main())
