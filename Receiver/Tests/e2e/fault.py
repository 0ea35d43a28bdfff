#!/usr/bin/env python3
"""Fault tests of postback-receiver through real processes.

    python3 Receiver/Tests/e2e/fault.py --receiver BIN [--repo ROOT] [--bodies N]

1. kill -9 under load: clients post distinct signed postbacks on several connections; the receiver is killed
   with SIGKILL mid-load. Every request that got 200 must have its row (its exact bytes) in the archive. Then a
   new receiver on the same files gets every body again (Apple retries what got no 200): every postback ends up
   counted valid at least once; how many were counted twice (the crash window between storing and confirming) is
   printed, and must be no more than the requests in flight at the kill.
2. A full file system: the state and archive on a small tmpfs, filled up: requests answer 500, none answers 200
   without its row; once space is freed, the same bodies are answered 200 and stored as first sightings (valid),
   never as duplicates of the rows that were not stored.
Needs root for the tmpfs mount (part 2 says SKIP, loudly, where it cannot mount), python3 with `cryptography`
(Benchmarks/make-corpus.py signs the bodies).
"""
from __future__ import annotations

import argparse
import http.client
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from receiver_process import Receiver, rows  # noqa: E402

AAK = "/.well-known/appattribution/report-attribution/"
FAILURES: list[str] = []


def check(condition: bool, message: str) -> None:
    if not condition:
        FAILURES.append(message)
        print(f"FAIL: {message}", flush=True)


def make_corpus(repo: Path, out: Path, count: int) -> tuple[list[bytes], list[str]]:
    subprocess.run([sys.executable, str(repo / "Benchmarks/make-corpus.py"), "--out", str(out), "-n", str(count),
                    "--procs", "2"], check=True, capture_output=True)
    bodies = [line for line in (out / "corpus.jsonl").read_bytes().split(b"\n") if line]
    kid = (out / "kid").read_text().strip()
    return bodies, ["--key", f"{kid}={out / 'key.pem'}"]


def post_all(port: int, bodies: list[bytes], connections: int, stop: threading.Event | None = None,
             answers: dict[int, int] | None = None) -> dict[int, int]:
    """Posts every body once over `connections` keep-alive connections; returns index -> status (0: no answer),
    filling `answers` as they come when given."""
    answers = {} if answers is None else answers
    lock = threading.Lock()

    def worker(offset: int) -> None:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        for index in range(offset, len(bodies), connections):
            if stop is not None and stop.is_set():
                break
            try:
                connection.request("POST", AAK, body=bodies[index], headers={"Content-Type": "application/json"})
                response = connection.getresponse()
                response.read()
                status = response.status
            except (OSError, http.client.HTTPException):
                status = 0
                connection.close()
                connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            with lock:
                answers[index] = status
            if status == 0 and stop is not None:
                break

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(connections)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return answers


def kill_under_load(args, repo: Path, work: Path, bodies: list[bytes], keys: list[str]) -> None:
    directory = work / "kill9"
    receiver = Receiver(args.receiver, directory, keys)
    stop = threading.Event()
    answers: dict[int, int] = {}
    client = threading.Thread(target=post_all, args=(receiver.port, bodies, 16, stop, answers))
    client.start()
    deadline = time.monotonic() + 60
    while len(answers) < len(bodies) // 4 and time.monotonic() < deadline:
        time.sleep(0.01)
    receiver.kill()                      # SIGKILL, mid-load (a quarter of the bodies answered)
    stop.set()
    client.join()
    ok = {index for index, status in answers.items() if status == 200}
    check(0 < len(ok) < len(bodies), f"kill -9 came at a useless moment: {len(ok)} of {len(bodies)} answered 200")
    stored = [r["body"] for r in rows(receiver.archive)]
    stored_set = set(stored)
    lost = [index for index in ok if bodies[index] not in stored_set]
    check(not lost, f"{len(lost)} requests answered 200 have no row after kill -9")
    print(f"kill -9 under load: {len(ok)} answered 200 before the kill, {len(stored)} rows; "
          f"{len(lost)} answered 200 without a row", flush=True)
    # Apple retries: every body again, to a new receiver on the same files.
    receiver = Receiver(args.receiver, directory, keys)
    again = post_all(receiver.port, bodies, 8)
    check(all(status == 200 for status in again.values()), "after restart, a retry was not answered 200")
    valid_rows: dict[bytes, int] = {}
    for row in rows(receiver.archive):
        if row["verdict"] == "valid":
            valid_rows[row["key"]] = valid_rows.get(row["key"], 0) + 1
    keys_seen = {json.loads(b)["jws-string"] for b in bodies}
    check(len(valid_rows) == len(bodies), f"{len(bodies) - len(valid_rows)} postbacks never counted valid")
    twice = sum(1 for count in valid_rows.values() if count > 1)
    in_flight = len(stored) - len(ok)
    check(twice <= max(in_flight, 0) + 16, f"{twice} postbacks counted twice, more than were in flight")
    check(receiver.stop() == 0, "restarted receiver did not exit 0")
    print(f"after restart and retries: every one of {len(bodies)} postbacks counted valid; {twice} counted twice "
          f"(stored at the kill but not yet confirmed: at-least-once); 0 lost", flush=True)


def full_file_system(args, repo: Path, work: Path, bodies: list[bytes], keys: list[str]) -> None:
    mount = work / "small-fs"
    mount.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=32m", "tmpfs", str(mount)], capture_output=True).returncode:
        print("SKIP: full file system: cannot mount a tmpfs here (needs root); .ci/run runs as root", flush=True)
        return
    receiver = None
    try:
        receiver = Receiver(args.receiver, mount, keys)
        first = bodies[:20]
        answers = post_all(receiver.port, first, 4)
        check(all(s == 200 for s in answers.values()), "before the disk filled up, a request was not answered 200")
        filler = mount / "filler"
        subprocess.run(["dd", "if=/dev/zero", f"of={filler}", "bs=16k"], capture_output=True)
        pending = bodies[20:220]
        answers = post_all(receiver.port, pending, 4)
        failed = [i for i, s in answers.items() if s == 500]
        answered = [i for i, s in answers.items() if s == 200]
        check(len(failed) > 0, "a full file system made no request answer 500")
        check(all(s in (200, 500) for s in answers.values()), f"answers on a full disk: {set(answers.values())}")
        stored = {r["body"] for r in rows(receiver.archive)}
        check(all(pending[i] in stored for i in answered), "a request answered 200 on a full disk has no row")
        check(not any(pending[i] in stored for i in failed), "a request answered 500 has a row")
        print(f"full file system: {len(failed)} answered 500, {len(answered)} answered 200 (all stored)", flush=True)
        filler.unlink()
        retries = [pending[i] for i in failed]
        again = post_all(receiver.port, retries, 4)
        check(all(s == 200 for s in again.values()), "after space was freed, a retry was not answered 200")
        by_body = {}
        for row in rows(receiver.archive):
            by_body.setdefault(row["body"], []).append(row)
        for body in retries:
            stored_rows = by_body.get(body, [])
            check(len(stored_rows) == 1 and stored_rows[0]["verdict"] == "valid",
                  f"a retry after recovery was stored as {[(r['verdict'], r['code']) for r in stored_rows]}, "
                  "not once as valid")
        status = receiver.stop()
        check(status == 0, f"receiver exited {status} after the full-disk test, not 0")
        if FAILURES:
            print((mount / "receiver.log").read_text()[-1500:])
            subprocess.run(["ls", "-la", str(mount)]); subprocess.run(["df", str(mount)])
        print(f"recovered: the {len(retries)} retries answered 200 and stored valid (first sightings); nothing lost",
              flush=True)
    finally:
        if receiver is not None:
            receiver.kill()
        subprocess.run(["umount", str(mount)], capture_output=True)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--receiver", required=True)
    parser.add_argument("--repo", default=str(Path(__file__).resolve().parents[3]))
    parser.add_argument("--bodies", type=int, default=4000)
    args = parser.parse_args()
    args.receiver = str(Path(args.receiver).resolve())
    repo = Path(args.repo).resolve()
    with tempfile.TemporaryDirectory(prefix="receiver-fault-") as temporary:
        work = Path(temporary)
        bodies, keys = make_corpus(repo, work / "corpus", args.bodies)
        kill_under_load(args, repo, work, bodies, keys)
        full_file_system(args, repo, work, bodies, keys)
    print(f"fault: {len(FAILURES)} failed")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
