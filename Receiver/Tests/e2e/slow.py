"""Slow and hostile clients against the built postback-receiver on 127.0.0.1 (issue 23 items 2 and 4).

Measures and checks, each on a fresh receiver:

1. a normal client's latency (p99 of sequential posts) alone, then while N slow clients (as many as the
   open-file limit allows, 2,000 when it does) each send a byte a second: they must be closed by the request
   deadline (--request-timeout) and must not push the normal client's p99 beyond a stated bound;
2. SIGTERM while they hold their connections: the receiver exits 0 within --stop-timeout + 1 s;
3. 413 (Content-Length and endless chunked body) and 404 (endless chunked body): the answer arrives and the
   connection is closed within a few seconds, the receiver having read little of what was sent (/proc/PID/io);
4. --metrics-address: /metrics there, 404 on the postback listener; --max-connections holds (150 slow clients
   against a cap of 100) and a normal post still gets a slot within a request deadline;
4b. idle clients cannot hold the slots: with --max-connections 100 and 100 idle clients (half silent, half
   sending a GET every 2 s on a keep-alive connection, each reconnecting when closed), a new postback on a new
   connection is answered within 1 s (the oldest idle connection is closed to admit it); an idle keep-alive
   connection is closed by --idle-timeout; an HTTP/1.0 request's connection is closed right after its answer
   (with `Connection: keep-alive` too), while an HTTP/1.1 one stays open;
5. --queue-depth: wrk at 4 times the bound gets some 503s, each with Retry-After, and the peak resident memory
   (VmHWM) stays under a stated bound;
6. /readyz with the state in PostgreSQL: 200, then 503 within 3 s of the server halting (/healthz still 200),
   then 200 again once it is back.

Writes the figures to Receiver/Benchmarks/slow-clients.md (a dated header with the machine and load).
Usage: slow.py --receiver BIN [--slow N] [--results PATH]
"""
from __future__ import annotations

import argparse
import datetime
import http.client
import json
import os
import platform
import re
import resource
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
PATH = "/.well-known/appattribution/report-attribution/"
REQUEST_TIMEOUT = 3.0
STOP_TIMEOUT = 2.0
QUEUE_DEPTH = 64
IDLE_TIMEOUT = 3  # --idle-timeout in the idle-client test (the default is 5)
IDLE_REQUEST_INTERVAL = 2.0  # the idle clients that send requests: one every this many seconds, under the idle timeout
MEMORY_BOUND_MIB = 150  # the receiver's memory target (Receiver/README.md, benchmark)
BUILD = "debug"  # --build: which build the receiver is (the latency bound and the results file depend on it)

failures: list[str] = []
figures: list[str] = []


def nonblocking_connect(port: int) -> socket.socket | None:
    """A socket connecting to the receiver without waiting; None when the connection failed at once."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setblocking(False)
    try:
        sock.connect(("127.0.0.1", port))
    except BlockingIOError:
        pass
    except OSError:
        sock.close()
        return None
    return sock


def check(condition: bool, message: str) -> None:
    print(("ok   " if condition else "FAIL ") + message, flush=True)
    if not condition:
        failures.append(message)


def figure(line: str) -> None:
    print("     " + line, flush=True)
    figures.append(line)


class Receiver:
    """The binary on 127.0.0.1, port 0; waits for its `listening on` (and `metrics on`) lines."""

    def __init__(self, binary: str, directory: Path, options: list[str], state: str | None = None,
                 metrics: bool = False):
        directory.mkdir(parents=True, exist_ok=True)
        self.log_path = directory / "receiver.log"
        self.log = open(self.log_path, "ab")
        # A PostgreSQL state keeps the received postbacks itself; a SQLite one gets its archive beside it here.
        archive = [] if state else ["--archive", str(directory / "received.sqlite")]
        arguments = [binary, "--host", "127.0.0.1", "--port", "0", "--state",
                     state or str(directory / "state.sqlite"), *archive,
                     "--invalid-quota", "10000000", *options]
        if metrics:
            arguments += ["--metrics-address", "127.0.0.1:0"]
        self.process = subprocess.Popen(arguments, stdout=subprocess.PIPE, stderr=self.log)
        self.port = 0
        self.metrics_port = 0
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and (not self.port or (metrics and not self.metrics_port)):
            line = self.process.stdout.readline()
            if not line:
                break
            if found := re.search(rb"listening on .*:(\d+)$", line.strip()):
                self.port = int(found.group(1))
            if found := re.search(rb"metrics on .*:(\d+)$", line.strip()):
                self.metrics_port = int(found.group(1))
        if not self.port:
            self.process.kill()
            raise RuntimeError("receiver did not start: " + self.log_path.read_bytes()[-2000:].decode(errors="replace"))

    @property
    def pid(self) -> int:
        return self.process.pid

    def status(self, field: str) -> int:
        """A /proc/PID/status field in kB (VmHWM, VmRSS)."""
        text = Path(f"/proc/{self.pid}/status").read_text()
        return int(re.search(rf"^{field}:\s+(\d+) kB", text, re.M).group(1))

    def bytes_read(self) -> int:
        """Bytes the process has read through read-like calls, sockets included (/proc/PID/io rchar)."""
        return int(re.search(r"^rchar: (\d+)", Path(f"/proc/{self.pid}/io").read_text(), re.M).group(1))

    def terminate(self, timeout: float = 30.0) -> tuple[int, float]:
        """SIGTERM; the exit status (-9 if it had to be killed) and the seconds it took."""
        started = time.monotonic()
        self.process.send_signal(signal.SIGTERM)
        try:
            code = self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            code = -9
        self.log.close()
        return code, time.monotonic() - started

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self.log.close()


def get(port: int, path: str, timeout: float = 10.0) -> tuple[int, dict[str, str], bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        connection.close()


def body(index: int) -> bytes:
    # Any body is answered 200 once stored (a malformed one too, under the invalid quota): the timing is the point.
    return b'{"normal-client":%d}' % index


def normal_latencies(port: int, count: int) -> list[float]:
    """`count` posts one after the other on one keep-alive connection (a new one if it is closed): seconds each."""
    latencies: list[float] = []
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    for index in range(count):
        started = time.monotonic()
        for attempt in range(3):
            try:
                connection.request("POST", PATH, body=body(index), headers={"Content-Type": "application/json"})
                response = connection.getresponse()
                response.read()
                break
            except (OSError, http.client.HTTPException):
                connection.close()
                connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
                if attempt == 2:
                    raise
        latencies.append(time.monotonic() - started)
        if response.status != 200:
            failures.append(f"normal post answered {response.status}")
    connection.close()
    return latencies


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


class SlowClients:
    """`count` connections each sending one byte a second of a request (half of them still in the head, half in a
    body that claims 16,000 bytes); a connection the receiver closes is reconnected. Runs in a process of its own
    (`slow.py --slow-clients PORT COUNT`), so that its work never delays the normal client measured here: prints
    `ready N` once N are connected, and on `stop` (standard input) the connections' (established, closed by the
    receiver) times, on the system's monotonic clock, as JSON."""

    def __init__(self, port: int, count: int):
        self.port = port
        self.count = count
        self.selector = selectors.DefaultSelector()
        self.closings: list[tuple[float, float]] = []
        self.open = 0
        self.established = 0

    @staticmethod
    def request_bytes(index: int) -> bytes:
        head = f"POST {PATH} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        if index % 2 == 0:
            return (head + "X-Slow: " + "a" * 4000 + "\r\n\r\n").encode()  # never finishes its head in time
        return (head + "Content-Length: 16000\r\n\r\n").encode() + b"x" * 16000

    def connect(self, index: int) -> None:
        sock = nonblocking_connect(self.port)
        if sock is None:
            return
        data = self.request_bytes(index)
        # Slow body clients send the head at once, then the body a byte a second.
        position = data.index(b"\r\n\r\n") + 4 if index % 2 else 0
        state = {"index": index, "data": data, "position": position, "opened": None, "first": True}
        self.selector.register(sock, selectors.EVENT_WRITE, state)
        self.open += 1

    def close(self, sock: socket.socket, state: dict) -> None:
        self.selector.unregister(sock)
        sock.close()
        self.open -= 1
        if state["opened"] is not None:
            self.closings.append((state["opened"], time.monotonic()))
        self.connect(state["index"])

    def run(self) -> None:
        # Connections are opened evenly over one request deadline, as clients arriving over time would: all at
        # once, they would also be closed and reconnect all at once, every deadline, in lockstep.
        self.selector.register(sys.stdin, selectors.EVENT_READ, None)
        started = time.monotonic()
        connected = 0
        next_tick = time.monotonic() + 1.0
        announced = False
        while True:
            due = min(self.count, int(self.count * (time.monotonic() - started) / REQUEST_TIMEOUT) + 1)
            while connected < due:
                self.connect(connected)
                connected += 1
            wait = max(0.0, next_tick - time.monotonic())
            for key, events in self.selector.select(min(wait, 0.01) if connected < self.count else wait):
                if key.data is None:
                    print(json.dumps({"closings": self.closings, "open": self.open}), flush=True)
                    return
                sock, state = key.fileobj, key.data
                if state["opened"] is None:
                    if sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) != 0:
                        self.close(sock, state)
                        continue
                    state["opened"] = time.monotonic()
                    self.established += 1
                    self.selector.modify(sock, selectors.EVENT_READ, state)
                    continue
                try:
                    data = sock.recv(65536)
                except OSError:
                    data = b""
                if not data:
                    self.close(sock, state)
            if not announced and connected == self.count and self.established >= self.count * 0.95:
                announced = True
                print(f"ready {self.established}", flush=True)
            if time.monotonic() >= next_tick:
                next_tick += 1.0
                for key in list(self.selector.get_map().values()):
                    sock, state = key.fileobj, key.data
                    if state is None or state["opened"] is None or state["position"] >= len(state["data"]):
                        continue
                    # The first send of a slow-body client is its whole head and one body byte.
                    end = state["position"] + 1
                    chunk = state["data"][:end] if state["first"] else state["data"][state["position"]:end]
                    try:
                        sock.send(chunk)
                        state["position"] = end
                        state["first"] = False
                    except (BlockingIOError, InterruptedError):
                        pass
                    except OSError:
                        self.close(sock, state)


class IdleClients:
    """`count` connections that hold a slot without using it: even ones silent after connecting, odd ones sending
    `GET /healthz` every `IDLE_REQUEST_INTERVAL` seconds on their keep-alive connection. A connection the receiver
    closes is opened again 0.1 s later (as an attacker would, a little slower so that the churn stays measurable).
    Runs as `slow.py --idle-clients PORT COUNT`: prints `ready N` once N are connected, and on `stop` the number of
    connections the receiver closed, as JSON."""

    def __init__(self, port: int, count: int):
        self.port = port
        self.count = count
        self.selector = selectors.DefaultSelector()
        self.closed = 0
        self.reconnects: list[tuple[float, int]] = []

    def connect(self, index: int) -> None:
        sock = nonblocking_connect(self.port)
        if sock is None:
            self.reconnects.append((time.monotonic() + 0.1, index))
            return
        self.selector.register(sock, selectors.EVENT_READ, {"index": index, "next": time.monotonic() + 0.5})

    def run(self) -> None:
        self.selector.register(sys.stdin, selectors.EVENT_READ, None)
        for index in range(self.count):
            self.connect(index)
        announced = False
        while True:
            for key, _ in self.selector.select(0.05):
                if key.data is None:
                    print(json.dumps({"closed": self.closed}), flush=True)
                    return
                try:
                    data = key.fileobj.recv(65536)
                except OSError:
                    data = b""
                if not data:
                    self.selector.unregister(key.fileobj)
                    key.fileobj.close()
                    self.closed += 1
                    self.reconnects.append((time.monotonic() + 0.1, key.data["index"]))
            now = time.monotonic()
            due = [entry for entry in self.reconnects if entry[0] <= now]
            self.reconnects = [entry for entry in self.reconnects if entry[0] > now]
            for _, index in due:
                self.connect(index)
            for key in list(self.selector.get_map().values()):
                if key.data is None or key.data["index"] % 2 == 0 or key.data["next"] > now:
                    continue
                key.data["next"] = now + IDLE_REQUEST_INTERVAL
                try:
                    key.fileobj.send(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                except OSError:
                    pass
            if not announced and len(self.selector.get_map()) - 1 >= self.count:
                announced = True
                print(f"ready {len(self.selector.get_map()) - 1}", flush=True)


def hostile_post(port: int, head: bytes, chunked: bool, seconds: float = 10.0) -> tuple[bytes, float, int]:
    """Sends `head`, then (chunked) an endless chunked body as fast as the connection takes it, reading whatever
    comes back. Returns the answer's first bytes, the seconds until the receiver closed the connection (or
    `seconds` if it never did) and the bytes sent."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=5)
    sock.setblocking(False)
    started = time.monotonic()
    answer = b""
    sent = 0
    chunk = b"10000\r\n" + b"x" * 0x10000 + b"\r\n"
    pending = head
    closed = False
    while time.monotonic() - started < seconds and not closed:
        try:
            data = sock.recv(65536)
            if data:
                answer += data
            else:
                closed = True
                break
        except BlockingIOError:
            pass
        except OSError:
            closed = True
            break
        if not pending and chunked:
            pending = chunk
        if pending:
            try:
                count = sock.send(pending)
                sent += count
                pending = pending[count:]
            except BlockingIOError:
                time.sleep(0.005)
            except OSError:
                # EPIPE / ECONNRESET: the receiver closed; read what arrived before.
                closed = True
        else:
            time.sleep(0.005)
    elapsed = time.monotonic() - started
    if closed:
        try:
            sock.setblocking(True)
            sock.settimeout(0.5)
            while len(answer) < 200:
                more = sock.recv(4096)
                if not more:
                    break
                answer += more
        except OSError:
            pass
    sock.close()
    return answer[:200], (elapsed if closed else seconds), sent


def fd_budget() -> int:
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return soft


def test_slow_clients(binary: str, work: Path, slow: int) -> None:
    print(f"== {slow} slow clients, a byte a second each (request deadline {REQUEST_TIMEOUT:g} s, "
          f"stop deadline {STOP_TIMEOUT:g} s)", flush=True)
    receiver = Receiver(binary, work / "slow", ["--request-timeout", str(REQUEST_TIMEOUT),
                                                "--stop-timeout", str(STOP_TIMEOUT)])
    try:
        normal_latencies(receiver.port, 20)  # warm up
        alone = normal_latencies(receiver.port, 200)
        clients = subprocess.Popen([sys.executable, __file__, "--slow-clients", str(receiver.port), str(slow)],
                                   stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        ready = clients.stdout.readline().split()
        opened = int(ready[1]) if len(ready) == 2 else 0
        started = time.monotonic()
        loaded = normal_latencies(receiver.port, 200)
        # Every slow client is closed once at least, by the deadline: wait past it.
        time.sleep(max(0.0, REQUEST_TIMEOUT + 1.5 - (time.monotonic() - started)))
        p99_alone, p99_loaded = percentile(alone, 0.99), percentile(loaded, 0.99)
        figure(f"normal client, 200 sequential posts: p50 {percentile(alone, 0.5) * 1000:.1f} ms, "
               f"p99 {p99_alone * 1000:.1f} ms alone; with {opened} slow clients connected: "
               f"p50 {percentile(loaded, 0.5) * 1000:.1f} ms, p99 {p99_loaded * 1000:.1f} ms")
        # The bound, on the release build: the p99 alone, doubled, plus 50 ms for a machine shared with other
        # builds (the slow clients' bytes and reconnections cost the receiver a little CPU; what must not happen is
        # waiting for them). The debug build (CI's) spends more CPU per connection (0.45 of a core for 2,000 slow
        # clients, the release build 0.26), which on a loaded machine shows in the p99: there only what the issue
        # saw is checked, posts waiting for seconds.
        if BUILD == "release":
            bound, rule = 2 * p99_alone + 0.05, "2 x p99 alone + 50 ms"
        else:
            bound, rule = 1.0, "debug build: 1 s; the release build is held to 2 x p99 alone + 50 ms"
        check(p99_loaded <= bound, f"normal p99 with slow clients {p99_loaded * 1000:.1f} ms <= "
                                   f"{bound * 1000:.1f} ms ({rule})")
        check(opened >= slow * 0.95, f"{opened} of {slow} slow clients connected")
        # SIGTERM while the slow clients hold their connections (they reconnect as they are closed).
        signalled = time.monotonic()
        code, seconds = receiver.terminate()
        clients.stdin.write("stop\n")
        clients.stdin.flush()
        report = json.loads(clients.stdout.readline())
        clients.wait(10)
        lifetimes = [closed - established for established, closed in report["closings"] if closed < signalled]
        late = [t for t in lifetimes if t > REQUEST_TIMEOUT + 1.0]
        figure(f"slow connections closed by the receiver before the SIGTERM: {len(lifetimes)}; from established "
               f"to closed: median {percentile(lifetimes, 0.5) if lifetimes else 0:.2f} s, "
               f"max {max(lifetimes, default=0):.2f} s (deadline {REQUEST_TIMEOUT:g} s)")
        check(len(lifetimes) >= opened, f"every slow client was closed ({len(lifetimes)} closings for {opened})")
        check(not late, f"each within the deadline + 1 s ({len(late)} later)")
        figure(f"SIGTERM with the slow clients connected: exited {code} after {seconds:.2f} s "
               f"(stop deadline {STOP_TIMEOUT:g} s)")
        check(code == 0, f"exit status 0 after SIGTERM (got {code})")
        check(seconds <= STOP_TIMEOUT + 1.0, f"SIGTERM to exit {seconds:.2f} s <= stop deadline + 1 s")
    finally:
        receiver.kill()


def test_refusals_close(binary: str, work: Path) -> None:
    print("== 413 and 404 close the connection without reading the rest", flush=True)
    receiver = Receiver(binary, work / "refusals", [], metrics=True)
    try:
        cases = [
            ("413, Content-Length 1 GB", f"POST {PATH} HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000000\r\n\r\n",
             True, b" 413 "),
            ("413, endless chunked body", f"POST {PATH} HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n",
             True, b" 413 "),
            ("404, endless chunked body", "POST /other HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n",
             True, b" 404 "),
        ]
        for name, head, chunked, status in cases:
            before = receiver.bytes_read()
            answer, seconds, sent = hostile_post(receiver.port, head.encode(), chunked)
            read = receiver.bytes_read() - before
            first_line = answer.split(b"\r\n")[0].decode(errors="replace")
            figure(f"{name}: answered {first_line!r}, connection closed (FIN) after {seconds:.2f} s; the client sent "
                   f"{sent / 1048576:.1f} MiB, the receiver read {read / 1048576:.2f} MiB")
            check(status in answer.split(b"\r\n")[0], f"{name}: answered{status.decode()}")
            check(seconds < 3.0, f"{name}: closed within 3 s ({seconds:.2f} s)")
            check(read < 2 * 1048576, f"{name}: the receiver read under 2 MiB ({read} bytes)")
        print("== --metrics-address", flush=True)
        status, _, text = get(receiver.metrics_port, "/metrics")
        check(status == 200 and b"postback_receiver_queue_capacity" in text,
              f"/metrics on the metrics address: {status}, with the queue gauges")
        status, _, _ = get(receiver.port, "/metrics")
        check(status == 404, f"/metrics on the postback listener: {status} (404 expected)")
        status, _, text = get(receiver.port, "/readyz")
        check(status == 200, f"/readyz with a SQLite state: {status}")
    finally:
        receiver.kill()


def test_connection_cap(binary: str, work: Path) -> None:
    # Fewer waiting than the cap: a new connection is then at most one round of deadlines from a slot.
    cap, clients_count = 100, 150
    print(f"== connection cap: --max-connections {cap} with {clients_count} slow clients", flush=True)
    receiver = Receiver(binary, work / "cap", ["--max-connections", str(cap), "--request-timeout",
                                               str(REQUEST_TIMEOUT)], metrics=True)
    clients = None
    try:
        clients = subprocess.Popen([sys.executable, __file__, "--slow-clients", str(receiver.port),
                                    str(clients_count)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        clients.stdout.readline()  # all connected: the kernel completes the handshakes of those in the backlog too
        peak = 0
        started = time.monotonic()
        while time.monotonic() - started < 2.0:
            _, _, text = get(receiver.metrics_port, "/metrics")
            found = re.search(rb"^postback_receiver_open_connections (\d+)", text, re.M)
            peak = max(peak, int(found.group(1)) if found else 0)
            time.sleep(0.1)
        latencies = normal_latencies(receiver.port, 5)
        figure(f"--max-connections {cap} with {clients_count} slow clients: at most {peak} open in the receiver; "
               f"a normal post waited {max(latencies):.2f} s at most (for a slot: a request deadline at most)")
        # The listener stops being read at the cap, but one read of it accepts up to 4 connections (NIO's
        # maxMessagesPerRead) before the count is checked again: a soft cap, at most 3 over.
        check(0 < peak <= cap + 3, f"open connections stay at the cap, at most 3 over ({peak} <= {cap} + 3)")
        check(max(latencies) <= REQUEST_TIMEOUT + 2.0,
              f"a normal post is served within the request deadline + 2 s ({max(latencies):.2f} s)")
    finally:
        if clients:
            clients.stdin.write("stop\n")
            clients.stdin.flush()
            clients.stdout.readline()
            clients.wait(10)
        receiver.kill()


def fresh_post(port: int, index: int) -> tuple[int, float]:
    """One postback on a new connection: its status (0: none within 10 s) and the seconds until its answer."""
    started = time.monotonic()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.request("POST", PATH, body=body(index), headers={"Content-Type": "application/json"})
        response = connection.getresponse()
        response.read()
        return response.status, time.monotonic() - started
    except (OSError, http.client.HTTPException):
        return 0, time.monotonic() - started
    finally:
        connection.close()


def closed_after_answer(port: int, request: bytes, wait: float) -> tuple[bytes, float | None]:
    """Sends `request` on a new connection; returns the answer's status line and the seconds from the end of the
    answer to the receiver's FIN (None when the connection is still open `wait` seconds later)."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=5)
    try:
        sock.sendall(request)
        answer = b""
        while b"\r\n\r\n" not in answer:
            more = sock.recv(4096)
            if not more:
                break
            answer += more
        answered = time.monotonic()
        sock.settimeout(wait)
        try:
            while sock.recv(4096):
                pass
            closed = time.monotonic() - answered
        except socket.timeout:
            closed = None
        return answer.split(b"\r\n")[0], closed
    finally:
        sock.close()


def test_idle_clients(binary: str, work: Path) -> None:
    cap = 100
    print(f"== idle clients: --max-connections {cap} with {cap} idle clients (half silent, half a GET every "
          f"{IDLE_REQUEST_INTERVAL:g} s); --idle-timeout {IDLE_TIMEOUT}; HTTP/1.0", flush=True)
    receiver = Receiver(binary, work / "idle", ["--max-connections", str(cap), "--idle-timeout", str(IDLE_TIMEOUT)])
    clients = None
    try:
        clients = subprocess.Popen([sys.executable, __file__, "--idle-clients", str(receiver.port), str(cap)],
                                   stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        ready = clients.stdout.readline().split()
        # Past one round of their requests, so that every slot has been taken and each client's is idle.
        time.sleep(IDLE_REQUEST_INTERVAL + 1.0)
        results = []
        for index in range(10):
            results.append(fresh_post(receiver.port, 1000 + index))
            time.sleep(0.3)
        clients.stdin.write("stop\n")
        clients.stdin.flush()
        report = json.loads(clients.stdout.readline())
        clients.wait(10)
        clients = None
        slowest = max(seconds for _, seconds in results)
        figure(f"--max-connections {cap} with {ready[1] if len(ready) == 2 else '?'} idle clients connected: 10 new "
               f"postbacks on new connections answered {sorted({status for status, _ in results})}, the slowest "
               f"after {slowest:.3f} s; the receiver closed {report['closed']} idle connections meanwhile "
               f"(the cap and the idle timeout)")
        check(all(status == 200 for status, _ in results), "each new postback among the idle clients answered 200")
        check(slowest < 1.0, f"each within 1 s ({slowest:.3f} s)")

        # A keep-alive connection left idle is closed by --idle-timeout.
        line, closed = closed_after_answer(
            receiver.port, b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n", IDLE_TIMEOUT + 3.0)
        figure(f"an HTTP/1.1 keep-alive connection left idle: {line.decode()!r}, closed "
               + (f"{closed:.2f} s after its answer" if closed is not None else "never") + f" (--idle-timeout "
               f"{IDLE_TIMEOUT})")
        check(closed is not None and IDLE_TIMEOUT - 0.5 <= closed <= IDLE_TIMEOUT + 1.5,
              f"an idle keep-alive connection is closed by the idle timeout ({closed})")

        # HTTP/1.0: closed right after the answer, with or without `Connection: keep-alive`.
        payload = body(2000)
        for name, extra in [("HTTP/1.0", b""),
                            ("HTTP/1.0 with Connection: keep-alive", b"Connection: keep-alive\r\n")]:
            request = (b"POST " + PATH.encode() + b" HTTP/1.0\r\nHost: x\r\nContent-Type: application/json\r\n"
                       + extra + b"Content-Length: %d\r\n\r\n" % len(payload) + payload)
            line, closed = closed_after_answer(receiver.port, request, 2.0)
            figure(f"{name}: {line.decode()!r}, connection closed "
                   + (f"{closed * 1000:.1f} ms after the answer" if closed is not None else "not within 2 s"))
            check(b" 200 " in line + b" ", f"{name}: answered 200 ({line!r})")
            check(closed is not None and closed < 0.5, f"{name}: closed within 0.5 s of its answer ({closed})")
        line, closed = closed_after_answer(receiver.port, b"POST " + PATH.encode() + b" HTTP/1.1\r\nHost: x\r\n"
                                           b"Content-Length: %d\r\n\r\n" % len(payload) + payload, 1.0)
        check(b" 200" in line and closed is None, f"HTTP/1.1: answered {line!r} and kept open ({closed})")
    finally:
        if clients:
            clients.kill()
            clients.wait(10)
        receiver.kill()


# Counts answers per wrk thread (globals of its Lua state, which done() reads back), and 503s with Retry-After: 5.
WRK_SCRIPT = r"""
wrk.method = "POST"
wrk.body = '{"overload":1}'
wrk.headers["Content-Type"] = "application/json"
n200, n503, nretry = 0, 0, 0
local threads = {}
function setup(thread) table.insert(threads, thread) end
function response(status, headers, body)
  if status == 200 then n200 = n200 + 1 end
  if status == 503 then
    n503 = n503 + 1
    if headers["Retry-After"] == "5" then nretry = nretry + 1 end
  end
end
function done(summary, latency, requests)
  local ok, busy, retry = 0, 0, 0
  for _, thread in ipairs(threads) do
    ok = ok + thread:get("n200"); busy = busy + thread:get("n503"); retry = retry + thread:get("nretry")
  end
  io.write(string.format("COUNTS 200=%d 503=%d retry-after=%d\n", ok, busy, retry))
end
"""


def test_queue_bound(binary: str, work: Path) -> None:
    print(f"== queue bound: wrk -t2 -c{4 * QUEUE_DEPTH} (4 x --queue-depth {QUEUE_DEPTH}) for 5 s", flush=True)
    wrk = shutil.which("wrk")
    if not wrk:
        check(False, "wrk is installed (apt-get install wrk)")
        return
    receiver = Receiver(binary, work / "queue", ["--queue-depth", str(QUEUE_DEPTH)])
    try:
        script = work / "count.lua"
        script.write_text(WRK_SCRIPT)
        run = subprocess.run([wrk, "-t2", f"-c{4 * QUEUE_DEPTH}", "-d5s", "--latency", "-s", str(script),
                              f"http://127.0.0.1:{receiver.port}{PATH}"], capture_output=True, text=True,
                             timeout=60)
        counts = re.search(r"COUNTS 200=(\d+) 503=(\d+) retry-after=(\d+)", run.stdout)
        rate = re.search(r"Requests/sec:\s+([\d.]+)", run.stdout)
        p99 = re.search(r"99%\s+(\S+)", run.stdout)
        peak = receiver.status("VmHWM") / 1024
        if not counts:
            check(False, "wrk ran: " + run.stdout[-500:] + run.stderr[-500:])
            return
        ok, busy, retry = (int(x) for x in counts.groups())
        figure(f"wrk -t2 -c{4 * QUEUE_DEPTH} -d5s, --queue-depth {QUEUE_DEPTH}: {rate.group(1) if rate else '?'} "
               f"req/s, p99 {p99.group(1) if p99 else '?'}; {ok} answered 200, {busy} answered 503 "
               f"({retry} with Retry-After: 5); peak resident memory {peak:.1f} MiB")
        check(busy > 0, f"some requests answered 503 past the queue bound ({busy})")
        check(retry == busy, f"every 503 carries Retry-After: 5 ({retry} of {busy})")
        check(ok > 0, f"the others answered 200 ({ok})")
        check(peak < MEMORY_BOUND_MIB, f"peak resident memory {peak:.1f} MiB < {MEMORY_BOUND_MIB} MiB")
        status, _, text = get(receiver.port, "/metrics")
        overloaded = re.search(rb'postback_receiver_not_stored_total\{reason="overloaded"\} (\d+)', text)
        # wrk ends with requests in flight: their answers, counted by the receiver, never reach its script.
        check(overloaded is not None and busy <= int(overloaded.group(1)) <= busy + 4 * QUEUE_DEPTH,
              f"not_stored_total{{reason=\"overloaded\"}} counts them "
              f"({overloaded.group(1).decode() if overloaded else 'absent'})")
    finally:
        receiver.kill()


def test_readiness(binary: str, work: Path) -> None:
    print("== /readyz while the PostgreSQL state is down", flush=True)
    connection = os.environ.get("POSTBACK_VERIFY_TEST_POSTGRES")
    directory = os.environ.get("POSTBACK_VERIFY_TEST_POSTGRES_DIR")
    if not connection or not directory:
        message = "no PostgreSQL server (POSTBACK_VERIFY_TEST_POSTGRES): /readyz against a failing store not tested"
        if os.environ.get("POSTBACK_VERIFY_REQUIRE_POSTGRES") == "1":
            check(False, message)
        else:
            print("skip " + message, flush=True)
        return
    receiver = Receiver(binary, work / "ready", [], state=connection)
    try:
        status, _, _ = get(receiver.port, "/readyz")
        check(status == 200, f"/readyz with PostgreSQL up: {status}")
        subprocess.run([str(ROOT / ".ci/postgres"), "halt", directory], check=True, capture_output=True)
        halted = time.monotonic()
        status = 0
        while time.monotonic() - halted < 3.0:
            status, _, _ = get(receiver.port, "/readyz")
            if status == 503:
                break
            time.sleep(0.1)
        figure(f"/readyz after the PostgreSQL server halted: {status} after {time.monotonic() - halted:.2f} s")
        check(status == 503, f"/readyz 503 within 3 s of PostgreSQL halting (got {status})")
        status, _, text = get(receiver.port, "/healthz")
        check(status == 200, f"/healthz still 200 (the process runs): {status}")
        status, _, _ = get(receiver.port, "/readyz")
        check(status == 503, f"/readyz stays 503 while it is down: {status}")
        subprocess.run([str(ROOT / ".ci/postgres"), "resume", directory], check=True, capture_output=True)
        resumed = time.monotonic()
        while time.monotonic() - resumed < 10.0:
            status, _, _ = get(receiver.port, "/readyz")
            if status == 200:
                break
            time.sleep(0.2)
        figure(f"/readyz once it was back: {status} after {time.monotonic() - resumed:.2f} s")
        check(status == 200, f"/readyz 200 again once PostgreSQL is back (got {status})")
    finally:
        receiver.kill()


def main() -> int:
    if len(sys.argv) == 4 and sys.argv[1] == "--slow-clients":
        SlowClients(int(sys.argv[2]), int(sys.argv[3])).run()
        return 0
    if len(sys.argv) == 4 and sys.argv[1] == "--idle-clients":
        IdleClients(int(sys.argv[2]), int(sys.argv[3])).run()
        return 0
    parser = argparse.ArgumentParser()
    parser.add_argument("--receiver", required=True)
    parser.add_argument("--slow", type=int, default=2000)
    parser.add_argument("--build", default="debug", help="which build --receiver is, for the results' header")
    parser.add_argument("--results", default=str(ROOT / "Receiver/Benchmarks/slow-clients.md"))
    arguments = parser.parse_args()
    global BUILD
    BUILD = arguments.build
    # Each slow client takes one descriptor here and one in the receiver: leave room for the rest.
    slow = min(arguments.slow, fd_budget() - 200)
    if slow < arguments.slow:
        print(f"note: the open-file limit ({fd_budget()}) allows {slow} slow clients, not {arguments.slow}")
    work = Path(tempfile.mkdtemp(prefix="receiver-slow-"))
    started = time.monotonic()
    try:
        test_slow_clients(arguments.receiver, work, slow)
        test_refusals_close(arguments.receiver, work)
        test_connection_cap(arguments.receiver, work)
        test_idle_clients(arguments.receiver, work)
        test_queue_bound(arguments.receiver, work)
        test_readiness(arguments.receiver, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    load = Path("/proc/loadavg").read_text().split()[:3]
    header = (f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, {platform.machine()}, "
              f"{os.cpu_count()} cores, load {' '.join(load)} after the run, {arguments.build} build, "
              f"Receiver/Tests/slow.sh ({time.monotonic() - started:.0f} s)")
    # The figures of record are the release build's (`slow.sh --release`); a debug run only prints its own.
    if not failures and BUILD == "release":
        Path(arguments.results).write_text(
            "# Slow and hostile clients (Receiver/Tests/slow.sh)\n\n" + header + "\n\n"
            + "".join(f"- {line}\n" for line in figures))
        print(f"figures written to {arguments.results}")
    print(f"slow.py: {len(failures)} failure(s) in {time.monotonic() - started:.0f} s")
    for failure in failures:
        print("  " + failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
