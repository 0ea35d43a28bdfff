#!/usr/bin/env python3
"""Fault tests of postback-receiver through real processes.

    python3 Receiver/Tests/e2e/fault.py --receiver BIN [--repo ROOT] [--bodies N] [--kills N] [--only PART]

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
5. A read-only state. a: the state and archive on an ext4 file system (a 64 MiB image on a loop device, mounted
   `errors=remount-ro`) that turns read-only under load (ext4's `trigger_fs_error`: the kernel's own error path,
   as a disk error takes it; a tmpfs cannot be remounted read-only while the receiver holds its files open for
   writing, the kernel refuses with EBUSY): the requests after it answer 500, Apple's retries while it is
   read-only too; SIGTERM; the operator's recovery (unmount, fsck, mount); every request answered 200 has its row
   on the recovered disk; a new receiver gets Apple's retries until each is answered 200, and each of 1,250
   postbacks has exactly one valid row. a': the same with only the archive on that file system and the state
   elsewhere (the claims succeed and the rows fail: each 500 leaves claims to release). b: an existing state and archive on a tmpfs remounted read-only before the
   start: the receiver refuses to start, exit 73 with one line (or, if it starts, answers no new postback 200);
   remounted read-write, Apple's retries are stored, each postback once.
6. PostgreSQL, on a server of its own (`.ci/postgres start`, stopped at the end; other tests' server is not
   touched): a: the receiver's connections ended (`pg_terminate_backend`) five times under load on 16 connections;
   b: the server stopped (`pg_ctl stop -m fast`) under load and started again 2 s later, with 100 new postbacks
   sent while it is down (each must get 500 or 503: nothing can be stored) and `/readyz` 503 within 3 s of the
   stop and 200 within 15 s of the start. Each time every answer is 200, 500 or 503, every 200 has its row in
   `postback_verify.received_postbacks` (read with psql), and after Apple's retries until 200 each postback has
   exactly one valid row (2,000, and 2,100). Without PostgreSQL's programs it says SKIP, loudly (a failure with
   POSTBACK_VERIFY_REQUIRE_POSTGRES=1, as .ci/run sets).
Each part ends with a PASS or FAIL line and its duration; `--only read-only` or `--only postgres` runs parts 5 or 6.
Parts 5 and 6 add about 20 s to the fault step (measured on 2 shared cores with the debug build: 5a 4 s, 5a' 4 s,
5b 1 s, 6 9 s). Needs root for the mounts (parts 3-5 say SKIP, loudly, where they cannot mount), python3 with
`cryptography` (Benchmarks/make-corpus.py signs the bodies), mkfs.ext4, fsck.ext4 and loop devices for 5a, and
PostgreSQL's server programs and psql for 6.
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

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "Tests"))
from private_postgres import PrivatePostgres as SharedPrivatePostgres  # noqa: E402 (Tests/private_postgres.py)

sys.path.insert(0, str(Path(__file__).resolve().parent))
from receiver_process import Checks, Receiver, curl_get, rows  # noqa: E402

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


# ---- 5. a read-only state ----------------------------------------------------------------------------------------


def unmount(path: Path) -> None:
    if subprocess.run(["mountpoint", "-q", str(path)]).returncode == 0:
        subprocess.run(["umount", str(path)], capture_output=True)
        if subprocess.run(["mountpoint", "-q", str(path)]).returncode == 0:
            subprocess.run(["umount", "-l", str(path)], capture_output=True)


def load_with_fault(port: int, bodies: list[bytes], after: int, fault) -> tuple[dict[int, int], set[int]]:
    """Posts `bodies` on CONNECTIONS connections and calls `fault()` once `after` were answered, while the load goes
    on; returns the answers and the indexes answered before the fault."""
    answers: dict[int, int] = {}
    client = threading.Thread(target=post_all, args=(port, bodies, CONNECTIONS, None, answers))
    client.start()
    deadline = time.monotonic() + 60
    while len(answers) < after and time.monotonic() < deadline and client.is_alive():
        time.sleep(0.005)
    before = set(answers)
    fault()
    client.join()
    return answers, before


def mount_ext4(image: Path, mount: Path) -> str | None:
    """Mounts the ext4 image with errors=remount-ro; returns its ext4 sysfs name (loopN), None when it cannot."""
    done = subprocess.run(["mount", "-o", "loop,errors=remount-ro", str(image), str(mount)], capture_output=True)
    if done.returncode:
        return None
    source = subprocess.run(["findmnt", "-n", "-o", "SOURCE", str(mount)], capture_output=True, text=True)
    return os.path.basename(source.stdout.strip()) or None


def read_only_at_run_time(args, repo: Path, work: Path, bodies: list[bytes], keys: list[str],
                          archive_only: bool = False) -> None:
    """5a. The state and archive on an ext4 file system (a loop device, `errors=remount-ro`) that turns read-only
    under load: the kernel's own error path (ext4's `trigger_fs_error`), the way a disk error makes it read-only. A
    tmpfs cannot be remounted read-only while the receiver holds its files open for writing (the kernel answers
    EBUSY), so the fault must come from the file system itself. Recovery as an operator does it: stop the receiver,
    unmount, fsck, mount, start; then Apple's retries. With `archive_only`, the state is elsewhere and only the
    archive is on that file system: the claims succeed and the rows fail, so every 500 is a claim to release."""
    what = "read-only archive at run time" if archive_only else "read-only at run time"
    suffix = "-archive" if archive_only else ""
    image, mount, run = work / f"ext4{suffix}.img", work / f"ext4-fs{suffix}", work / f"ext4-run{suffix}"
    mount.mkdir()
    made = (subprocess.run(["truncate", "-s", "64M", str(image)], capture_output=True).returncode == 0
            and subprocess.run(["mkfs.ext4", "-q", "-F", str(image)], capture_output=True).returncode == 0)
    name = mount_ext4(image, mount) if made else None
    trigger = Path(f"/sys/fs/ext4/{name}/trigger_fs_error") if name else None
    if trigger is None or not trigger.exists():
        unmount(mount)
        print(f"SKIP: 5a. {what}: cannot mount an ext4 image on a loop device or find its "
              "trigger_fs_error (needs root, mkfs.ext4, loop devices); .ci/run runs as root", flush=True)
        return
    receiver = None
    try:
        # The log beside, not on the file system that turns read-only.
        files = {"state": (run if archive_only else mount) / "state.sqlite", "archive": mount / "received.sqlite"}
        receiver = Receiver(args.receiver, run, keys, **files)
        first, load = bodies[:50], bodies[50:1250]
        answers = post_all(receiver.port, first, 4)
        check(all(s == 200 for s in answers.values()), f"{what}: before the fault, a request was not "
              "answered 200")
        answers, before = load_with_fault(receiver.port, load, len(load) // 4,
                                          lambda: trigger.write_text("postback-receiver fault test\n"))
        probe = subprocess.run(["touch", str(mount / "probe")], capture_output=True)
        check(probe.returncode != 0, f"{what}: the file system did not turn read-only")
        after = {i: s for i, s in answers.items() if i not in before}
        check(all(s in (200, 500, 503) for s in answers.values()),
              f"{what}: answers {sorted(set(answers.values()))}")
        check(any(s == 500 for s in after.values()), f"{what}: no request answered 500 after the fault")
        # Apple's retries while it is still read-only.
        answers = retry_until_stored(receiver.port, load, answers, 2)
        ready = curl_get(receiver.port, "/readyz")[0]
        ok_read_only = sum(1 for s in answers.values() if s == 200)
        status = receiver.stop()
        check(status != -9, f"{what}: the receiver did not exit within 30 s of SIGTERM")
        print(f"{what}: {len(before)} answered before the fault; after it "
              f"{sum(1 for s in after.values() if s == 200)} answered 200 (in flight at the fault) and "
              f"{sum(1 for s in after.values() if s == 500)} 500; after 2 rounds of retries while read-only, "
              f"{ok_read_only} of {len(load)} answered 200 in all; /readyz {ready}; SIGTERM: exit {status}",
              flush=True)
        # The operator's recovery: unmount, fsck, mount again, start.
        unmount(mount)
        fsck = subprocess.run(["fsck.ext4", "-f", "-y", str(image)], capture_output=True)
        check(fsck.returncode in (0, 1), f"fsck.ext4 exited {fsck.returncode}")
        check(mount_ext4(image, mount) is not None, f"{what}: the file system did not mount again")
        stored = {r["body"] for r in rows(files["archive"])}
        missing = [i for i, s in answers.items() if s == 200 and load[i] not in stored]
        check(not missing, f"{what}: {len(missing)} requests answered 200 have no row")
        receiver = Receiver(args.receiver, run, keys, **files)
        answers = retry_until_stored(receiver.port, load, answers, 5)
        check(all(s == 200 for s in answers.values()), f"{what}: after recovery, retries were not "
              f"all answered 200: {sorted(set(answers.values()))}")
        each_stored_once_valid(receiver.archive, first + load, f"{what}, then recovered")
        status = receiver.stop()
        check(status == 0, f"{what}: the receiver after recovery exited {status}, not 0")
        print(f"{what}, recovered: every 200 has its row; retries until 200; each of "
              f"{len(first) + len(load)} postbacks has exactly one valid row", flush=True)
    finally:
        if receiver is not None:
            receiver.kill()
        unmount(mount)


def read_only_at_start(args, repo: Path, work: Path, bodies: list[bytes], keys: list[str]) -> None:
    """5b. A state and archive that exist, on a tmpfs remounted read-only before the receiver starts: it refuses to
    start (73, one line naming the cause) or, if it starts, answers no new postback 200; remounted read-write, a new
    receiver stores Apple's retries, each once."""
    mount = work / "ro-fs"
    mount.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=32m", "tmpfs", str(mount)], capture_output=True).returncode:
        print("SKIP: 5b. read-only at start: cannot mount a tmpfs here (needs root); .ci/run runs as root", flush=True)
        return
    receiver = None
    process = None
    try:
        receiver = Receiver(args.receiver, mount, keys)
        first, later = bodies[:50], bodies[50:250]
        answers = post_all(receiver.port, first, 4)
        check(all(s == 200 for s in answers.values()), "read-only at start: a first request was not answered 200")
        check(receiver.stop() == 0, "read-only at start: the first receiver did not exit 0")
        remount = subprocess.run(["mount", "-o", "remount,ro", str(mount)], capture_output=True, text=True)
        check(remount.returncode == 0, f"read-only at start: remount,ro failed: {remount.stderr.strip()}")
        process = subprocess.Popen([args.receiver, "--host", "127.0.0.1", "--port", "0", "--state",
                                    str(mount / "state.sqlite"), "--archive", str(mount / "received.sqlite"), *keys],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            status = process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            status = None
        answers = {}
        if status is None:
            # It started: nothing can be stored, so no new postback may be answered 200.
            line = process.stdout.readline().decode()
            port = int(line.strip().rsplit(":", 1)[1])
            answers = post_all(port, later, 4)
            check(not any(s == 200 for s in answers.values()), "read-only at start: the receiver started and "
                  f"answered {sum(1 for s in answers.values() if s == 200)} new postbacks 200 (no row possible)")
            process.kill()
            process.wait()
            print(f"read-only at start: the receiver started; {len(later)} new postbacks answered "
                  f"{sorted(set(answers.values()))}", flush=True)
        else:
            message = process.stderr.read().decode(errors="replace").strip()
            check(status == 73, f"read-only at start: the receiver exited {status}, not 73 (the state or archive "
                  f"is refused or cannot be created): {message!r}")
            check(len(message.splitlines()) == 1 and message.startswith("postback-receiver: "),
                  f"read-only at start: not one line naming the cause: {message!r}")
            print(f"read-only at start: refused, exit {status}: {message}", flush=True)
            # Regression: the refusal said "No such file or directory" and sent the user to other files.
            check("file system holding it is read-only" in message and "remount it read-write" in message
                  and "No such file" not in message,
                  f"read-only at start: the refusal names the read-only file system and the remedy: {message!r}")
        process.stdout.close()
        process.stderr.close()
        process = None
        remount = subprocess.run(["mount", "-o", "remount,rw", str(mount)], capture_output=True, text=True)
        check(remount.returncode == 0, f"read-only at start: remount,rw failed: {remount.stderr.strip()}")
        receiver = Receiver(args.receiver, mount, keys)
        answers = retry_until_stored(receiver.port, later, answers, 5)
        check(all(s == 200 for s in answers.values()), "read-only at start: after remounting read-write, retries "
              f"were not all answered 200: {sorted(set(answers.values()))}")
        each_stored_once_valid(receiver.archive, first + later, "read-only at start, then read-write")
        check(receiver.stop() == 0, "read-only at start: the receiver after remounting did not exit 0")
        print(f"read-only at start, remounted read-write: each of {len(first) + len(later)} postbacks has exactly "
              "one valid row", flush=True)
    finally:
        if process is not None and process.poll() is None:
            process.kill()
            process.wait()
        if receiver is not None:
            receiver.kill()
        unmount(mount)


# ---- 6. PostgreSQL: connections killed, the server stopped and restarted -----------------------------------------


class PrivatePostgres(SharedPrivatePostgres):
    """A server of this test's own (Tests/private_postgres.py), with what the receiver's parts read of it."""

    def terminate_receivers(self) -> int:
        """Ends every connection of the receiver (its fallback_application_name, postback-verify); how many."""
        return self.terminate_ours()

    def rows(self, database: str) -> list[tuple[str, bytes]]:
        """(verdict, body) of every row of the database's received postbacks, in id order."""
        out = self.psql("SELECT verdict || ' ' || encode(body, 'hex') FROM postback_verify.received_postbacks "
                        "ORDER BY id", database)
        return [(verdict, bytes.fromhex(body)) for verdict, body in (line.split(" ") for line in out.splitlines())]


def each_stored_once_valid_pg(stored: list[tuple[str, bytes]], bodies: list[bytes], what: str) -> None:
    valid: dict[bytes, int] = {}
    for verdict, body in stored:
        if verdict == "valid":
            valid[body] = valid.get(body, 0) + 1
    lost = [body for body in bodies if valid.get(body, 0) == 0]
    twice = [body for body in bodies if valid.get(body, 0) > 1]
    check(not lost, f"{what}: {len(lost)} of {len(bodies)} postbacks have no valid row (lost)")
    check(not twice, f"{what}: {len(twice)} postbacks have more than one valid row")


def postgres_connections_killed(args, work: Path, postgres: PrivatePostgres, bodies: list[bytes],
                                keys: list[str]) -> None:
    """6a. The receiver's connections ended (pg_terminate_backend) five times under load."""
    state = postgres.new_database("receiver_cut")
    receiver = Receiver(args.receiver, work / "pg-cut", keys, state_argument=state)
    try:
        load = bodies[:2000]
        kills: list[int] = []

        def cut() -> None:
            for _ in range(5):
                kills.append(postgres.terminate_receivers())
                time.sleep(0.15)

        answers, before = load_with_fault(receiver.port, load, len(load) // 5, cut)
        check(sum(kills) > 0, f"connections killed: none of the receiver's connections was ended ({kills})")
        check(all(s in (200, 500, 503) for s in answers.values()),
              f"connections killed: answers {sorted(set(answers.values()))}")
        counts = {s: sum(1 for a in answers.values() if a == s) for s in sorted(set(answers.values()))}
        stored = {body for _, body in postgres.rows("receiver_cut")}
        missing = [i for i, s in answers.items() if s == 200 and load[i] not in stored]
        check(not missing, f"connections killed: {len(missing)} requests answered 200 have no row")
        answers = retry_until_stored(receiver.port, load, answers, 5)
        check(all(s == 200 for s in answers.values()), "connections killed: retries were not all answered 200: "
              f"{sorted(set(answers.values()))}")
        stored_rows = postgres.rows("receiver_cut")
        each_stored_once_valid_pg(stored_rows, load, "connections killed")
        ready = curl_get(receiver.port, "/readyz")[0]
        check(ready == 200, f"connections killed: /readyz {ready} afterwards, not 200")
        status = receiver.stop()
        check(status == 0, f"connections killed: the receiver exited {status}, not 0")
        print(f"connections killed: {kills} backends ended in 5 cuts under load; answers {counts}; every 200 has "
              f"its row; after retries each of {len(load)} postbacks has exactly one valid row "
              f"({len(stored_rows)} rows); /readyz {ready}", flush=True)
    finally:
        receiver.kill()


def postgres_restarted(args, work: Path, postgres: PrivatePostgres, bodies: list[bytes], keys: list[str]) -> None:
    """6b. The server stopped (`pg_ctl stop -m fast`) under load and started again about 2 s later."""
    state = postgres.new_database("receiver_restart")
    receiver = Receiver(args.receiver, work / "pg-restart", keys, state_argument=state)
    try:
        load, fresh = bodies[:2000], bodies[2000:2100]
        down: dict[str, object] = {}

        def restart() -> None:
            postgres.stop_fast()
            stopped = time.monotonic()
            readiness = []
            while time.monotonic() - stopped < 3:
                readiness.append(curl_get(receiver.port, "/readyz")[0])
                if readiness[-1] == 503:
                    break
                time.sleep(0.1)
            down["readyz"] = readiness
            down["readyz_503_after"] = time.monotonic() - stopped
            down["fresh"] = post_all(receiver.port, fresh, 4)  # new postbacks while it is down: none can be stored
            time.sleep(max(0.0, 2 - (time.monotonic() - stopped)))
            postgres.start()
            down["seconds"] = time.monotonic() - stopped
            started = time.monotonic()
            back = 0
            while time.monotonic() - started < 15:
                back = curl_get(receiver.port, "/readyz")[0]
                if back == 200:
                    break
                time.sleep(0.1)
            down["readyz_back"] = back
            down["readyz_200_after"] = time.monotonic() - started

        answers, before = load_with_fault(receiver.port, load, len(load) // 4, restart)
        readiness = down["readyz"]
        check(readiness[-1:] == [503], f"server stopped: /readyz answered {readiness} in the 3 s after the stop, "
              "never 503")
        check(down["readyz_back"] == 200, f"server restarted: /readyz {down['readyz_back']} 15 s after the start")
        fresh_answers = down["fresh"]
        check(all(s in (500, 503) for s in fresh_answers.values()),
              f"server stopped: new postbacks sent while it was down were answered "
              f"{sorted(set(fresh_answers.values()))}, not only 500/503")
        check(all(s in (200, 500, 503) for s in answers.values()),
              f"server restart: answers {sorted(set(answers.values()))}")
        after = {i: s for i, s in answers.items() if i not in before}
        counts = {s: sum(1 for a in after.values() if a == s) for s in sorted(set(after.values()))}
        stored = {body for _, body in postgres.rows("receiver_restart")}
        missing = [i for i, s in answers.items() if s == 200 and load[i] not in stored]
        missing += [i for i, s in fresh_answers.items() if s == 200 and fresh[i] not in stored]
        check(not missing, f"server restart: {len(missing)} requests answered 200 have no row")
        answers = retry_until_stored(receiver.port, load, answers, 5)
        fresh_answers = retry_until_stored(receiver.port, fresh, dict(fresh_answers), 5)
        check(all(s == 200 for s in answers.values()) and all(s == 200 for s in fresh_answers.values()),
              "server restart: retries were not all answered 200")
        stored_rows = postgres.rows("receiver_restart")
        each_stored_once_valid_pg(stored_rows, load + fresh, "server restart")
        status = receiver.stop()
        check(status == 0, f"server restart: the receiver exited {status}, not 0")
        print(f"server restart: stopped after {len(before)} of {len(load)} answered, down {down['seconds']:.1f} s; "
              f"/readyz {readiness} within {down['readyz_503_after']:.1f} s of the stop, 200 "
              f"{down['readyz_200_after']:.1f} s after the start; the load's answers after the stop {counts}; "
              f"{len(fresh)} new postbacks while down answered {sorted(set(down['fresh'].values()))}; every 200 "
              f"has its row; after retries each of {len(load) + len(fresh)} postbacks has exactly one valid row "
              f"({len(stored_rows)} rows)", flush=True)
    finally:
        receiver.kill()


def postgres_faults(args, repo: Path, work: Path, bodies: list[bytes], keys: list[str]) -> None:
    try:
        postgres = PrivatePostgres(repo)
    except (subprocess.CalledProcessError, OSError, KeyError) as error:
        detail = getattr(error, "stderr", "") or error
        message = f"6. PostgreSQL: no private server could be started with .ci/postgres start: {detail}"
        if os.environ.get("POSTBACK_VERIFY_REQUIRE_POSTGRES") == "1":
            check(False, message)
        else:
            print(f"SKIP: {message}", flush=True)
        return
    try:
        postgres_connections_killed(args, work, postgres, bodies, keys)
        postgres_restarted(args, work, postgres, bodies, keys)
    finally:
        postgres.close()


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--receiver", required=True)
    parser.add_argument("--repo", default=str(Path(__file__).resolve().parents[3]))
    parser.add_argument("--bodies", type=int, default=4000)
    parser.add_argument("--only", choices=["kill", "sigterm", "full-disk", "quota", "read-only", "postgres"],
                        help="run one of the tests")
    parser.add_argument("--kills", type=int, default=3, help="kill -9 rounds, each on files of its own")
    args = parser.parse_args()
    args.receiver = str(Path(args.receiver).resolve())
    repo = Path(args.repo).resolve()
    with tempfile.TemporaryDirectory(prefix="receiver-fault-") as temporary:
        work = Path(temporary)
        bodies, keys = make_corpus(repo, work / "corpus", args.bodies)

        def part(name: str, run) -> None:
            failed = len(CHECKS.failures)
            started = time.monotonic()
            run()
            verdict = "PASS" if len(CHECKS.failures) == failed else "FAIL"
            print(f"{verdict}: part {name} ({len(CHECKS.failures) - failed} checks failed, "
                  f"{time.monotonic() - started:.0f} s)", flush=True)

        def kills() -> None:
            twice = [kill_under_load(args, repo, work, bodies, keys, attempt) for attempt in range(args.kills)]
            print(f"kill -9 under load, {args.kills} rounds: counted twice {twice} of {len(bodies)} postbacks each "
                  f"(bound {CONNECTIONS} each: one group commit of the requests in flight)", flush=True)

        if args.only in (None, "kill"):
            part("1 (kill -9 under load)", kills)
        if args.only in (None, "sigterm"):
            part("2 (SIGTERM under load)", lambda: sigterm_under_load(args, repo, work, bodies, keys))
        if args.only in (None, "full-disk"):
            part("3 (a full file system)", lambda: full_file_system(args, repo, work, bodies, keys))
        if args.only in (None, "quota"):
            part("4 (the invalid quota after a full file system)",
                 lambda: quota_after_full_disk(args, repo, work, bodies))
        if args.only in (None, "read-only"):
            part("5a (read-only at run time)", lambda: read_only_at_run_time(args, repo, work, bodies, keys))
            part("5a' (read-only archive at run time, the state elsewhere)",
                 lambda: read_only_at_run_time(args, repo, work, bodies, keys, archive_only=True))
            part("5b (read-only at start)", lambda: read_only_at_start(args, repo, work, bodies, keys))
        if args.only in (None, "postgres"):
            part("6 (PostgreSQL connections killed, server restarted)",
                 lambda: postgres_faults(args, repo, work, bodies, keys))
    print(f"fault: {len(CHECKS.failures)} failed")
    return 1 if CHECKS.failures else 0


if __name__ == "__main__":
    sys.exit(main())
