#!/usr/bin/env python3
"""Fault tests of postback-receiver through real processes.

    python3 Receiver/Tests/e2e/fault.py --receiver BIN [--repo ROOT] [--bodies N]

1. kill -9 under load: clients post distinct signed postbacks on several connections; the receiver is killed
   with SIGKILL mid-load. Every request that got 200 must have its row (its exact bytes) in the archive. Then a
   new receiver on the same files gets every body again (Apple retries what got no 200): every postback ends up
   counted valid at least once; how many were counted twice (the crash window between storing and confirming) is
   printed, and must be no more than one group commit can hold: the requests in flight, one per client
   connection (16). Done `--kills` times (3), each on files of its own.
2. SIGTERM under load: the receiver is stopped the graceful way mid-load (what a service manager does): it exits
   0, every request that got 200 has its row, and after a restart with every body again (Apple's retries of what
   got no 200, and a re-send of the rest) every postback has exactly one valid row: a graceful stop confirms what
   it stored, so nothing is counted twice (only kill -9 may repeat a postback).
3. A full file system: the state and archive on a small tmpfs, filled up: requests answer 500, none answers 200
   without its row; Apple's retries come while it is full and after it is freed, until each is answered 200, and
   then every postback has exactly one row marked valid (never a duplicate of a row that was not stored). Then
   again with the receiver stopped while the disk is full and restarted once it is freed, and with only the
   archive on the small file system (the claims succeed, the rows fail: each 500 leaves claims to release).
4. The invalid quota after a full file system: requests answered 500 store nothing, so they spend none of
   `--invalid-quota 100`: with the disk full, 120 invalid bodies that could still be genuine (signed by a kid not
   loaded) are answered 500; once it is freed, 20 more are answered 200 and stored, and past the quota (the rows
   actually stored) the next ones get 503.
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
from receiver_process import Checks, Receiver, rows  # noqa: E402

AAK = "/.well-known/appattribution/report-attribution/"
CHECKS = Checks()
check = CHECKS.check


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


def interrupt_under_load(receiver: Receiver, bodies: list[bytes], part: int, interrupt) -> dict[int, int]:
    """Posts `bodies` on 16 connections and calls `interrupt` once 1/`part` of them were answered; returns the
    answers (index -> status, 0: none)."""
    stop = threading.Event()
    answers: dict[int, int] = {}
    client = threading.Thread(target=post_all, args=(receiver.port, bodies, CONNECTIONS, stop, answers))
    client.start()
    deadline = time.monotonic() + 60
    while len(answers) < len(bodies) // part and time.monotonic() < deadline:
        time.sleep(0.01)
    interrupt()
    stop.set()
    client.join()
    return answers


CONNECTIONS = 16  # interrupt_under_load's client connections: at most this many requests in flight


def kill_under_load(args, repo: Path, work: Path, bodies: list[bytes], keys: list[str], attempt: int = 0) -> int:
    """One kill -9 under load and Apple's retries after it; returns how many postbacks were counted valid twice."""
    directory = work / f"kill9-{attempt}"
    receiver = Receiver(args.receiver, directory, keys)
    answers = interrupt_under_load(receiver, bodies, 4, receiver.kill)   # SIGKILL, a quarter answered
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
    # A postback is counted twice only when the dead receiver stored its row and had not confirmed its claim. A
    # group's claims are confirmed in the transaction that claims the next group (or on their own 2 ms later), so
    # at the kill only the last stored group is unconfirmed, and a group holds at most the requests in flight.
    check(twice <= CONNECTIONS, f"{twice} postbacks counted twice, more than one group commit holds "
                                f"({CONNECTIONS} requests in flight)")
    check(receiver.stop() == 0, "restarted receiver did not exit 0")
    print(f"after restart and retries: every one of {len(bodies)} postbacks counted valid; {twice} counted twice "
          f"(bound {CONNECTIONS}: the last group stored and not yet confirmed at the kill; at-least-once); 0 lost",
          flush=True)
    return twice


def sigterm_under_load(args, repo: Path, work: Path, bodies: list[bytes], keys: list[str]) -> None:
    directory = work / "sigterm"
    receiver = Receiver(args.receiver, directory, keys)
    statuses: list[int] = []
    answers = interrupt_under_load(receiver, bodies, 3, lambda: statuses.append(receiver.stop()))  # SIGTERM
    status = statuses[0]
    check(status == 0, f"SIGTERM under load: the receiver exited {status}, not 0")
    ok = {index for index, answer in answers.items() if answer == 200}
    check(0 < len(ok) < len(bodies), f"SIGTERM came at a useless moment: {len(ok)} of {len(bodies)} answered 200")
    stored = {r["body"] for r in rows(receiver.archive)}
    lost = [index for index in ok if bodies[index] not in stored]
    check(not lost, f"SIGTERM under load: {len(lost)} requests answered 200 have no row")
    receiver = Receiver(args.receiver, directory, keys)
    again = post_all(receiver.port, bodies, 8)
    check(all(answer == 200 for answer in again.values()), "after SIGTERM and a restart, a retry was not answered 200")
    check(receiver.stop() == 0, "restarted receiver did not exit 0")
    each_stored_once_valid(receiver.archive, bodies, "SIGTERM under load, then every body again")
    print(f"SIGTERM under load: exit {status}, {len(ok)} answered 200 before the stop, each with its row; after a "
          f"restart and every body again, each of {len(bodies)} postbacks has exactly one valid row", flush=True)


def retry_until_stored(port: int, bodies: list[bytes], answers: dict[int, int], rounds: int) -> dict[int, int]:
    """Apple's retries: every body whose last answer was not 200 is sent again, up to `rounds` times; returns the
    last answer of each."""
    for _ in range(rounds):
        pending = [index for index in range(len(bodies)) if answers.get(index) != 200]
        if not pending:
            break
        again = post_all(port, [bodies[index] for index in pending], 4)
        for position, index in enumerate(pending):
            answers[index] = again.get(position, 0)
    return answers


def each_stored_once_valid(archive: Path, bodies: list[bytes], what: str) -> None:
    """Every postback of `bodies` has exactly one row marked valid (its retries are duplicates of it)."""
    valid: dict[bytes, int] = {}
    for row in rows(archive):
        if row["verdict"] == "valid":
            valid[row["body"]] = valid.get(row["body"], 0) + 1
    lost = [body for body in bodies if valid.get(body, 0) == 0]
    twice = [body for body in bodies if valid.get(body, 0) > 1]
    check(not lost, f"{what}: {len(lost)} of {len(bodies)} postbacks have no valid row (lost)")
    check(not twice, f"{what}: {len(twice)} postbacks have more than one valid row")


def fill(mount: Path) -> Path:
    filler = mount / "filler"
    subprocess.run(["dd", "if=/dev/zero", f"of={filler}", "bs=16k"], capture_output=True)
    return filler


def full_file_system(args, repo: Path, work: Path, bodies: list[bytes], keys: list[str]) -> None:
    """The state and archive on a small tmpfs that fills and frees again, with Apple's retries in the traffic: the
    failed requests are retried while the disk is still full (a group that claimed, could not store and could not
    release either: the next claims must not answer its retries "duplicate"), and after it is freed, until each
    is answered 200; then once more with the receiver stopped while the disk is full and started again once it is
    freed. Each time, every postback must have exactly one row marked valid: nothing lost."""
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
        filler = fill(mount)
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
        # Apple's retries while the disk is still full: each 200 among them must have its row too.
        answers = retry_until_stored(receiver.port, pending, answers, 3)
        stored = {r["body"] for r in rows(receiver.archive)}
        check(all(pending[i] in stored for i, s in answers.items() if s == 200),
              "a retry answered 200 on a full disk has no row")
        filler.unlink()
        answers = retry_until_stored(receiver.port, pending, answers, 5)
        check(all(s == 200 for s in answers.values()), "after space was freed, retries were not all answered 200: "
              f"{sorted(set(answers.values()))}")
        each_stored_once_valid(receiver.archive, first + pending, "full disk, receiver running")
        status = receiver.stop()
        check(status == 0, f"receiver exited {status} after the full-disk test, not 0")
        print(f"recovered: {len(failed)} retried until answered 200; each of {len(first) + len(pending)} postbacks "
              "has one valid row", flush=True)

        # The receiver stops (SIGTERM) while the disk is full, and a new one starts once it is freed.
        receiver = Receiver(args.receiver, mount, keys)
        filler = fill(mount)
        later = bodies[220:420]
        answers = post_all(receiver.port, later, 4)
        answers = retry_until_stored(receiver.port, later, answers, 2)
        failed_before = sum(1 for s in answers.values() if s != 200)
        check(failed_before > 0, "the second full disk made no request fail")
        status = receiver.stop()
        check(status == 0, f"receiver stopped on a full disk exited {status}, not 0")
        filler.unlink()
        receiver = Receiver(args.receiver, mount, keys)
        answers = retry_until_stored(receiver.port, later, answers, 5)
        check(all(s == 200 for s in answers.values()), "after a restart, retries were not all answered 200")
        each_stored_once_valid(receiver.archive, later, "full disk, receiver restarted")
        status = receiver.stop()
        check(status == 0, f"restarted receiver exited {status}, not 0")
        print(f"restart: {failed_before} failed on the full disk, retried after a restart until answered 200; each "
              f"of {len(later)} postbacks has one valid row", flush=True)

        # Only the archive on the full disk, the state elsewhere: every claim succeeds and its group's archive
        # commit fails, so each 500 is a claim to release (on a shared disk the claim itself fails first).
        receiver = Receiver(args.receiver, mount, keys, state=work / "state-off-the-small-fs.sqlite")
        filler = fill(mount)
        last = bodies[420:620]
        answers = post_all(receiver.port, last, 4)
        answers = retry_until_stored(receiver.port, last, answers, 2)
        failed_claimed = sum(1 for s in answers.values() if s != 200)
        check(failed_claimed > 0, "a full archive disk made no request fail")
        filler.unlink()
        answers = retry_until_stored(receiver.port, last, answers, 5)
        check(all(s == 200 for s in answers.values()), "after the archive's disk was freed, retries failed")
        each_stored_once_valid(receiver.archive, last, "full archive disk, state elsewhere")
        status = receiver.stop()
        check(status == 0, f"receiver exited {status} after the full archive disk, not 0")
        print(f"archive alone full: {failed_claimed} claimed but not stored (500), retried until answered 200; each "
              f"of {len(last)} postbacks has one valid row", flush=True)
        if CHECKS.failures:
            print((mount / "receiver.log").read_text()[-1500:])
            subprocess.run(["ls", "-la", str(mount)]); subprocess.run(["df", str(mount)])
    finally:
        if receiver is not None:
            receiver.kill()
        subprocess.run(["umount", str(mount)], capture_output=True)


def quota_after_full_disk(args, repo: Path, work: Path, bodies: list[bytes]) -> None:
    """Requests answered 500 spend none of the invalid quota. Bodies signed by a kid the receiver was not given
    (`unknown-key`: could still be genuine) are stored while the quota lasts and answered 503 beyond it."""
    quota = 100
    mount = work / "quota-fs"
    mount.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=32m", "tmpfs", str(mount)], capture_output=True).returncode:
        print("SKIP: invalid quota after a full file system: cannot mount a tmpfs here (needs root)", flush=True)
        return
    receiver = None
    try:
        receiver = Receiver(args.receiver, mount, ["--invalid-quota", str(quota)])
        hour = int(time.time()) // 3600  # the quota is per clock hour
        answers = post_all(receiver.port, bodies[:1], 1)
        check(answers.get(0) == 200, f"an unknown-key body before the disk filled: {answers.get(0)}")
        filler = fill(mount)
        full = bodies[1:1001]
        failed = 0
        sent = 0
        while failed < 120 and sent < len(full):
            answers = post_all(receiver.port, full[sent:sent + 40], 4)
            failed += sum(1 for status in answers.values() if status == 500)
            check(all(status in (200, 500) for status in answers.values()),
                  f"answers to unknown-key bodies on a full disk: {sorted(set(answers.values()))}")
            sent += 40
        check(failed >= 120, f"a full disk made {failed} unknown-key bodies fail (120 wanted)")
        filler.unlink()
        stored = len(rows(receiver.archive))
        check(stored + 20 <= quota, f"{stored} rows stored before the disk was freed leave no room to show the "
                                    f"quota unspent")
        after = bodies[1001:1021]
        answers = post_all(receiver.port, after, 4)
        kept = {row["body"]: row["code"] for row in rows(receiver.archive)}
        ok = sum(1 for status in answers.values() if status == 200)
        check(ok == len(after), f"after the disk was freed, {ok} of {len(after)} unknown-key bodies answered 200 "
                                f"({sorted(set(answers.values()))}): the 500s spent the invalid quota")
        check(all(kept.get(body) == "unknown-key" for body in after),
              "each of them has its row (code unknown-key)")
        # The quota still counts what was stored: past it, the next such bodies are answered 503.
        room = quota - len(kept)
        beyond = bodies[1021:1021 + room + 5]
        answers = post_all(receiver.port, beyond, 1)
        refused = sum(1 for status in answers.values() if status == 503)
        if int(time.time()) // 3600 == hour:
            check(refused == 5, f"past --invalid-quota {quota}, {refused} of the 5 bodies beyond it answered 503")
        else:
            print("note: a clock hour began during the quota test (a fresh quota): its 503s are not checked")
        status = receiver.stop()
        check(status == 0, f"receiver exited {status} after the quota test, not 0")
        print(f"invalid quota after a full disk: {failed} unknown-key bodies answered 500 (not stored), then "
              f"{ok} of {len(after)} answered 200 and stored once the disk was freed; {refused} of 5 beyond "
              f"--invalid-quota {quota} answered 503", flush=True)
    finally:
        if receiver is not None:
            receiver.kill()
        subprocess.run(["umount", str(mount)], capture_output=True)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--receiver", required=True)
    parser.add_argument("--repo", default=str(Path(__file__).resolve().parents[3]))
    parser.add_argument("--bodies", type=int, default=4000)
    parser.add_argument("--only", choices=["kill", "sigterm", "full-disk", "quota"], help="run one of the tests")
    parser.add_argument("--kills", type=int, default=3, help="kill -9 rounds, each on files of its own")
    args = parser.parse_args()
    args.receiver = str(Path(args.receiver).resolve())
    repo = Path(args.repo).resolve()
    with tempfile.TemporaryDirectory(prefix="receiver-fault-") as temporary:
        work = Path(temporary)
        bodies, keys = make_corpus(repo, work / "corpus", args.bodies)
        if args.only in (None, "kill"):
            twice = [kill_under_load(args, repo, work, bodies, keys, attempt) for attempt in range(args.kills)]
            print(f"kill -9 under load, {args.kills} rounds: counted twice {twice} of {len(bodies)} postbacks each "
                  f"(bound {CONNECTIONS} each: one group commit of the requests in flight)", flush=True)
        if args.only in (None, "sigterm"):
            sigterm_under_load(args, repo, work, bodies, keys)
        if args.only in (None, "full-disk"):
            full_file_system(args, repo, work, bodies, keys)
        if args.only in (None, "quota"):
            quota_after_full_disk(args, repo, work, bodies)
    print(f"fault: {len(CHECKS.failures)} failed")
    return 1 if CHECKS.failures else 0


if __name__ == "__main__":
    sys.exit(main())
