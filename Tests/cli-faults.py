#!/usr/bin/env python3
"""Fault injection through the built `postback-verify` binary and a real `--state` (issue 31 item 3).

    python3 Tests/cli-faults.py --binary BIN [--repo ROOT] [--repeat N] [--only a,b,c,d,e] [--sqlite-freeze]

Every scenario signs its own distinct postbacks (Benchmarks/make-corpus.py, a fresh key), lays them out as Apple
delivers them (each postback, ~5 % exact retries of earlier lines, ~1 % forged copies of a genuine line with one
signature character changed) and runs the binary with `--format jsonl --state`. Apple's retries are re-runs over the
same input until a run finishes (exit status 0 or 1: 1 only says some items were not valid, such as duplicates);
exit status 2 is a run that stopped on its state, and must say why on standard error. Then, across every run's
records, each postback is counted by its record's `fields.postback-identifier` among the `valid` ones: none may be
lost (every signed postback valid at least once), no forged line may be valid, and a postback valid more than once is
a repeat, allowed only where docs/state.md allows one:

a. PostgreSQL (a private server made by .ci/postgres in a temporary directory): "cut connection" (named
   regression): the run's connections ended by pg_terminate_backend every 1.2 s while it claims and writes: a cut
   shorter than the lease repeats nothing. "server restart": the server stopped (`pg_ctl stop -m fast`) mid-run and
   started again 2 s later: the run goes on or exits 2 with a message; a repeat only of a record that a run exiting
   2 had written but could not confirm ("When the server is down").
b. SQLite on a full file system (a 16 MiB tmpfs): filled before the run, and filled mid-run: the run exits 2 naming
   the full disk; after the filler is deleted, re-runs count each postback once (a repeat only of a record the
   failing run wrote).
c. A read-only state: the tmpfs holding an existing state remounted read-only: the run exits 2 naming it, writes no
   valid record and leaves the files as they were; remounted read-write, the re-run counts each postback once.
d. "frozen run" (named regression): a run whose output pipe is not read is SIGSTOPped for 36 s, past its 30 s lease
   (the command line's lease, which no option changes); 33 s in, a second run over the same input takes its claims
   over; then the frozen run continues. Repeats: at most the one batch (256) it was writing into its pipe when it
   froze (docs/state.md, "What a run frozen or cut off longer than its lease may repeat"). PostgreSQL; SQLite too
   with --sqlite-freeze.
e. Three runs at once on one PostgreSQL state, 6,000 distinct postbacks each (plus retries and forgeries) over
   12,000 distinct (the second and third share 3,000 each with the first), the first run's output a pipe left
   unread for --unread seconds (20), with four busy loops on the machine's cores: exactly 12,000 valid, `--repeat`
   times, each on a new database.

Prints one PASS/FAIL line per check and scenario, and exits 1 when any failed. Needs root for the mounts (b and c
print SKIP, loudly, where mounting is refused), python3 with `cryptography` (make-corpus.py), and PostgreSQL's
server programs (a, d, e; .ci/postgres finds them).
"""
from __future__ import annotations

import argparse
import base64
import collections
import datetime
import hashlib
import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from private_postgres import PrivatePostgres  # noqa: E402 (Tests/private_postgres.py, beside this script)

FAILURES: list[str] = []
LEASE_SECONDS = 30  # the command line's lease (docs/state.md, "The lease")
BATCH = 256  # the command line's batch: what a frozen run may repeat
# The most records a run holds written but unconfirmed (RunClaims.confirmAtOnce: twice the 8 batches it holds).
CONFIRM_AT_ONCE = 2 * (7 + 1) * BATCH


def check(condition: bool, message: str) -> bool:
    print(f"{'PASS' if condition else 'FAIL'}: {message}", flush=True)
    if not condition:
        FAILURES.append(message)
    return condition


def note(message: str) -> None:
    print(f"    {message}", flush=True)


# ---- postbacks ------------------------------------------------------------------------------------------------


class Corpus:
    """Distinct signed postbacks, their identifiers (read from the signed payload, not from the binary's output),
    and the --key arguments that trust their throw-away key."""

    def __init__(self, repo: Path, out: Path, count: int) -> None:
        subprocess.run([sys.executable, str(repo / "Benchmarks/make-corpus.py"), "--out", str(out), "-n", str(count),
                        "--procs", "2"], check=True, capture_output=True)
        self.lines = [line for line in (out / "corpus.jsonl").read_bytes().split(b"\n") if line]
        self.ids = [payload_id(line) for line in self.lines]
        assert len(set(self.ids)) == count, "make-corpus.py made repeated identifiers"
        kid = (out / "kid").read_text().strip()
        self.keys = ["--key", f"{kid}={out / 'key.pem'}"]


def payload_id(line: bytes) -> str:
    token = json.loads(line)["jws-string"]
    payload = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))["postback-identifier"]


def forged(line: bytes) -> bytes:
    """The body with one character in the middle of its signature changed: never valid."""
    body = json.loads(line)
    header, payload, signature = body["jws-string"].split(".")
    middle = len(signature) // 2
    changed = "B" if signature[middle] != "B" else "C"
    body["jws-string"] = ".".join([header, payload, signature[:middle] + changed + signature[middle + 1:]])
    return json.dumps(body, separators=(",", ":")).encode()


def apple_stream(lines: list[bytes], rng: random.Random, retries: float = 0.05, forgeries: float = 0.01) -> list[bytes]:
    """Each line once, in order, with exact retries of earlier lines (Apple's) and forged copies mixed in."""
    out: list[bytes] = []
    for index, line in enumerate(lines):
        out.append(line)
        if index > 0 and rng.random() < retries:
            out.append(lines[rng.randrange(index)])
        if rng.random() < forgeries:
            out.append(forged(lines[rng.randrange(index + 1)]))
    return out


def write_lines(path: Path, lines: list[bytes]) -> Path:
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    return path


# ---- runs ---------------------------------------------------------------------------------------------------------


class Run:
    """One run of the binary: its exit status, records file and standard error."""

    def __init__(self, name: str, status: int, records: Path, stderr: str) -> None:
        self.name, self.status, self.records, self.stderr = name, status, records, stderr

    def valid_ids(self) -> list[str]:
        return [record["fields"]["postback-identifier"] for record in read_records(self.records)
                if record.get("verdict") == "valid"]


def read_records(path: Path) -> list[dict]:
    records = []
    for raw in path.read_bytes().split(b"\n"):
        if raw:
            records.append(json.loads(raw))
    return records


def cli(args, binary: str, state: str, inputs: list[str], work: Path, name: str, stdin=None,
        timeout: float = 300) -> Run:
    """Runs the binary over files (or standard input) to the end; its records go to WORK/NAME.jsonl."""
    records = work / f"{name}.jsonl"
    with open(records, "wb") as out:
        done = subprocess.run([binary, "--format", "jsonl", "--quiet", "--state", state, *args, *inputs],
                              stdin=stdin if stdin is not None else subprocess.DEVNULL, stdout=out,
                              stderr=subprocess.PIPE, timeout=timeout)
    return Run(name, done.returncode, records, done.stderr.decode(errors="replace"))


def paced_run(binary: str, state: str, keys: list[str], lines: list[bytes], work: Path, name: str, seconds: float,
              during) -> Run:
    """A run reading `lines` from a pipe fed over about `seconds` (a live stream, so faults land mid-run), with
    `during(process)` called in a thread of its own meanwhile."""
    records = work / f"{name}.jsonl"
    errors = work / f"{name}.stderr"
    with open(records, "wb") as out, open(errors, "wb") as err:
        process = subprocess.Popen([binary, "--format", "jsonl", "--quiet", "--state", state, *keys,
                                    "--label", name], stdin=subprocess.PIPE, stdout=out, stderr=err)

        def feed() -> None:
            chunk = max(1, len(lines) // max(1, int(seconds * 20)))
            try:
                for start in range(0, len(lines), chunk):
                    process.stdin.write(b"".join(line + b"\n" for line in lines[start:start + chunk]))
                    process.stdin.flush()
                    time.sleep(0.05)
            except (BrokenPipeError, OSError):
                pass
            finally:
                try:
                    process.stdin.close()
                except OSError:
                    pass

        feeder = threading.Thread(target=feed)
        fault = threading.Thread(target=during, args=(process,))
        feeder.start()
        fault.start()
        status = process.wait(timeout=300)
        feeder.join()
        fault.join()
    return Run(name, status, records, errors.read_text(errors="replace"))


def retry_until_finished(runs: list[Run], binary: str, state: str, keys: list[str], inputs: list[str], work: Path,
                         name: str, attempts: int = 5) -> None:
    """Apple's retries: the same input again until a run finishes (exit status 0 or 1)."""
    for attempt in range(1, attempts + 1):
        if runs and runs[-1].status in (0, 1):
            return
        runs.append(cli(keys, binary, state, inputs, work, f"{name}-retry{attempt}"))
        note(f"{name}: re-run {attempt}: exit status {runs[-1].status}")
    check(runs[-1].status in (0, 1), f"{name}: a re-run finishes within {attempts} attempts "
          f"(last exit status {runs[-1].status}: {runs[-1].stderr.strip()[-300:]})")


def tally(scenario: str, runs: list[Run], expected: set[str]) -> tuple[collections.Counter, int, int]:
    """Counts each postback's valid records across `runs`; checks none lost and no forgery valid. Returns the
    counter, the number of repeats (valid records beyond the first) and the number of records."""
    counts: collections.Counter = collections.Counter()
    records = 0
    for run in runs:
        ids = run.valid_ids()
        records += sum(1 for _ in read_records(run.records))
        counts.update(ids)
    lost = expected - set(counts)
    strangers = set(counts) - expected
    repeats = sum(n - 1 for n in counts.values() if n > 1)
    check(not lost, f"{scenario}: none lost: every one of the {len(expected):,} signed postbacks is valid in some "
          f"run's records ({len(lost)} missing)")
    check(not strangers, f"{scenario}: nothing valid that was not signed ({len(strangers)} strangers)")
    note(f"{scenario}: {sum(counts.values()):,} valid among {records:,} records of {len(runs)} runs "
         f"(exit statuses {[run.status for run in runs]}); {len(expected):,} distinct; {repeats} repeats")
    return counts, repeats, records


def repeats_only_from_failed_runs(scenario: str, runs: list[Run], counts: collections.Counter) -> None:
    """The documented repeat of a run that stopped on its state: a record it wrote but could not confirm is reported
    valid once more by the next run. Every repeated postback must be valid in such a run's records, and valid at
    most once more than the number of such runs."""
    failed = [run for run in runs if run.status == 2]
    written_by_failed: collections.Counter = collections.Counter()
    for run in failed:
        written_by_failed.update(set(run.valid_ids()))
    repeated = {key: n for key, n in counts.items() if n > 1}
    note(f"{scenario}: the runs that exited 2 wrote {[len(run.valid_ids()) for run in failed]} valid records")
    unexplained = [key for key, n in repeated.items() if written_by_failed[key] == 0 or n > 1 + written_by_failed[key]]
    check(not unexplained, f"{scenario}: every repeat ({len(repeated)} postbacks) is a record written by a run that "
          f"exited 2 ({len(unexplained)} others)")
    # docs/state.md, "A stop confirms what was written": at most what a run holds written and unconfirmed.
    check(len(repeated) <= CONFIRM_AT_ONCE * max(len(failed), 1),
          f"{scenario}: {len(repeated)} repeats, within {CONFIRM_AT_ONCE:,} for each run that exited 2")


# ---- PostgreSQL -----------------------------------------------------------------------------------------------


class Postgres(PrivatePostgres):
    """A private server (Tests/private_postgres.py), with what the command line's scenarios read of it."""

    def terminate_runs(self) -> int:
        """Ends every connection of postback-verify; how many."""
        return self.terminate_ours()

    def pending_claims(self, database: str) -> int:
        try:
            return int(self.psql("SELECT count(*) FROM postback_verify.postbacks WHERE claim IS NOT NULL", database))
        except RuntimeError:
            return 0


# ---- scenarios ------------------------------------------------------------------------------------------------


def scenario_a(args, work: Path, postgres: Postgres, rng: random.Random) -> None:
    print("== a. PostgreSQL: cut connection (regression) and server restart, mid-run", flush=True)
    corpus = Corpus(args.repo, work / "a-corpus", 6000)
    expected = set(corpus.ids)

    # Cut connection: both of the run's connections (claims, lease renewal) ended again and again.
    state = postgres.new_database("cut")
    stream = apple_stream(corpus.lines, rng)
    source = write_lines(work / "input-a-cut.jsonl", stream)
    kills: list[int] = []

    def cut(process) -> None:
        time.sleep(1.0)
        while process.poll() is None and len(kills) < 6:
            kills.append(postgres.terminate_runs())
            time.sleep(1.2)

    runs = [paced_run(args.binary, state, corpus.keys, stream, work, "a-cut", 8, cut)]
    check(sum(kills) > 0, f"cut connection: connections of the run were ended mid-run ({kills} per cut)")
    note(f"cut connection: the run's exit status {runs[0].status}"
         + (f", stderr: {runs[0].stderr.strip()[-300:]}" if runs[0].status == 2 else ""))
    if runs[0].status == 2:
        check("postback-verify:" in runs[0].stderr, "cut connection: exit status 2 comes with a message")
    retry_until_finished(runs, args.binary, state, corpus.keys, [str(source)], work, "a-cut")
    counts, repeats, _ = tally("cut connection", runs, expected)
    check(repeats == 0, f"regression \"cut connection\": cuts shorter than the lease repeat nothing ({repeats} repeats)")

    # Cut connection with another run: the first run's output a pipe left unread, so it holds its claims (up to
    # 2,048) unconfirmed; its connections are ended; then a second run over the same input must see every one of
    # those claims pending (a duplicate of the first run's record), never take them over. Then the pipe is read.
    state = postgres.new_database("cuttwo")
    source = write_lines(work / "input-a-cut-two.jsonl", apple_stream(corpus.lines, rng))
    first_err = open(work / "a-cut-two-1.stderr", "wb")
    first = subprocess.Popen([args.binary, "--format", "jsonl", "--quiet", "--state", state, *corpus.keys,
                              str(source)], stdout=subprocess.PIPE, stderr=first_err)
    try:
        deadline = time.monotonic() + 30
        while postgres.pending_claims("cuttwo") == 0 and time.monotonic() < deadline:
            time.sleep(0.2)
        time.sleep(1.5)
        held = postgres.pending_claims("cuttwo")
        ended = []
        # Three cuts over 6 s: the lease renewal's own connection is made at the heartbeat's first beat (every 5 s).
        for _ in range(3):
            ended.append(postgres.terminate_runs())
            time.sleep(3)
        check(held > 0 and sum(ended) > 0 and first.poll() is None,
              f"cut connection, another run: the first run holds {held} claims and its connections were ended "
              f"({ended} per cut)")
        second = cli(corpus.keys, args.binary, state, [str(source)], work, "a-cut-two-2")
        output, _ = first.communicate(timeout=300)
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()
        first_err.close()
    (work / "a-cut-two-1.jsonl").write_bytes(output)
    runs = [Run("a-cut-two-1", first.returncode, work / "a-cut-two-1.jsonl",
                (work / "a-cut-two-1.stderr").read_text(errors="replace")), second]
    check(all(run.status in (0, 1) for run in runs),
          f"cut connection, another run: both runs finish (exit statuses {[run.status for run in runs]}: "
          f"{runs[0].stderr.strip()[-200:]!r})")
    counts, repeats, _ = tally("cut connection, another run", runs, expected)
    check(repeats == 0, f"regression \"cut connection\": the other run takes none of the cut run's {held} pending "
          f"claims over ({repeats} repeats)")

    # The server stopped (fast: every connection ended, new ones refused) and started again 2 s later.
    state = postgres.new_database("restart")
    stream = apple_stream(corpus.lines, rng)
    source = write_lines(work / "input-a-restart.jsonl", stream)
    timeline: list[str] = []

    def restart(process) -> None:
        time.sleep(2.5)
        if process.poll() is not None:
            timeline.append("the run had ended before the stop")
            return
        started = time.monotonic()
        postgres.stop_fast()
        time.sleep(2)
        postgres.start()
        timeline.append(f"down {time.monotonic() - started:.1f} s")

    runs = [paced_run(args.binary, state, corpus.keys, stream, work, "a-restart", 8, restart)]
    check(bool(timeline) and timeline[0].startswith("down"), f"server restart: the server went down mid-run ({timeline})")
    note(f"server restart: the run's exit status {runs[0].status}"
         + (f", stderr: {runs[0].stderr.strip()[-300:]}" if runs[0].status == 2 else ""))
    check(runs[0].status in (0, 1, 2), f"server restart: the run finishes or exits 2 (exit status {runs[0].status})")
    if runs[0].status == 2:
        check("postback-verify:" in runs[0].stderr and ("server" in runs[0].stderr or "connect" in runs[0].stderr),
              "server restart: exit status 2 comes with a message naming the server or connection")
    retry_until_finished(runs, args.binary, state, corpus.keys, [str(source)], work, "a-restart")
    counts, repeats, _ = tally("server restart", runs, expected)
    repeats_only_from_failed_runs("server restart", runs, counts)


def mount_tmpfs(path: Path, size: str) -> bool:
    path.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)], capture_output=True)
    return done.returncode == 0


def unmount(path: Path) -> None:
    if subprocess.run(["mountpoint", "-q", str(path)]).returncode == 0:
        subprocess.run(["umount", str(path)], capture_output=True)
        if subprocess.run(["mountpoint", "-q", str(path)]).returncode == 0:
            subprocess.run(["umount", "-l", str(path)], capture_output=True)


def fill(mount: Path) -> Path:
    filler = mount / "filler"
    subprocess.run(["dd", "if=/dev/zero", f"of={filler}", "bs=16k"], capture_output=True)
    return filler


def names_full_disk(stderr: str) -> bool:
    text = stderr.lower()
    return "postback-verify:" in text and ("full" in text or "no space" in text)


def scenario_b(args, work: Path, rng: random.Random, mounts: list[Path]) -> None:
    print("== b. SQLite state on a full file system", flush=True)
    mount = work / "full-fs"
    if not mount_tmpfs(mount, "16m"):
        print("SKIP: b. full file system: cannot mount a tmpfs here (needs root); .ci/run runs as root", flush=True)
        return
    mounts.append(mount)
    corpus = Corpus(args.repo, work / "b-corpus", 6000)
    expected = set(corpus.ids)
    stream = apple_stream(corpus.lines, rng)
    source = write_lines(work / "input-b.jsonl", stream)

    # Filled before the run: the state exists (a run over the first 100), then the disk is full.
    state = str(mount / "before.sqlite")
    runs = [cli(corpus.keys, args.binary, state, [str(write_lines(work / "input-b-first.jsonl", corpus.lines[:100]))],
                work, "b-before-first")]
    check(runs[0].status == 0, f"full disk, filled before: the first run over 100 postbacks (exit status "
          f"{runs[0].status})")
    filler = fill(mount)
    runs.append(cli(corpus.keys, args.binary, state, [str(source)], work, "b-before-full"))
    check(runs[-1].status == 2 and names_full_disk(runs[-1].stderr),
          f"full disk, filled before: the run exits 2 naming the full disk (exit status {runs[-1].status}: "
          f"{runs[-1].stderr.strip()[-300:]!r})")
    filler.unlink()
    retry_until_finished(runs, args.binary, state, corpus.keys, [str(source)], work, "b-before")
    counts, repeats, _ = tally("full disk, filled before", runs, expected)
    repeats_only_from_failed_runs("full disk, filled before", runs, counts)

    # Filled mid-run: a live stream, the disk filled 2.5 s in. The state is new (made on the small file system).
    for name in ("mid.sqlite", "mid.sqlite-wal", "mid.sqlite-shm"):
        (mount / name).unlink(missing_ok=True)
    state = str(mount / "mid.sqlite")
    fillers: list[Path] = []

    def fill_later(process) -> None:
        time.sleep(2.5)
        fillers.append(fill(mount))

    runs = [paced_run(args.binary, state, corpus.keys, stream, work, "b-mid", 8, fill_later)]
    check(runs[0].status == 2 and names_full_disk(runs[0].stderr),
          f"full disk, filled mid-run: the run exits 2 naming the full disk (exit status {runs[0].status}: "
          f"{runs[0].stderr.strip()[-300:]!r})")
    note(f"full disk, filled mid-run: {len(runs[0].valid_ids())} valid records written before it stopped")
    for filler in fillers:
        filler.unlink(missing_ok=True)
    retry_until_finished(runs, args.binary, state, corpus.keys, [str(source)], work, "b-mid")
    counts, repeats, _ = tally("full disk, filled mid-run", runs, expected)
    repeats_only_from_failed_runs("full disk, filled mid-run", runs, counts)


def file_digests(paths: list[Path]) -> dict[str, str]:
    return {path.name: hashlib.sha256(path.read_bytes()).hexdigest() for path in paths if path.exists()}


def scenario_c(args, work: Path, rng: random.Random, mounts: list[Path]) -> None:
    print("== c. a read-only SQLite state", flush=True)
    mount = work / "ro-fs"
    if not mount_tmpfs(mount, "16m"):
        print("SKIP: c. read-only state: cannot mount a tmpfs here (needs root); .ci/run runs as root", flush=True)
        return
    mounts.append(mount)
    corpus = Corpus(args.repo, work / "c-corpus", 3000)
    expected = set(corpus.ids)
    source = write_lines(work / "input-c.jsonl", apple_stream(corpus.lines, rng))
    state = mount / "state.sqlite"
    runs = [cli(corpus.keys, args.binary, str(state), [str(write_lines(work / "input-c-first.jsonl", corpus.lines[:100]))],
                work, "c-first")]
    check(runs[0].status == 0, f"read-only state: the first run makes the state (exit status {runs[0].status})")
    files = [state, Path(f"{state}-wal"), Path(f"{state}-shm")]
    before = file_digests(files)
    remount = subprocess.run(["mount", "-o", "remount,ro", str(mount)], capture_output=True)
    if remount.returncode != 0:
        print(f"SKIP: c. read-only state: cannot remount read-only: {remount.stderr.decode().strip()}", flush=True)
        return
    refused = cli(corpus.keys, args.binary, str(state), [str(source)], work, "c-read-only")
    text = refused.stderr.lower()
    check(refused.status == 2 and "postback-verify:" in text and ("read-only" in text or "readonly" in text),
          f"read-only state: the run exits 2 naming the read-only state (exit status {refused.status}: "
          f"{refused.stderr.strip()[-300:]!r})")
    check(not refused.valid_ids(), f"read-only state: no valid record written that could not be counted "
          f"({len(refused.valid_ids())} valid, {len(read_records(refused.records))} records)")
    check(file_digests(files) == before, "read-only state: the state's files are as they were")
    subprocess.run(["mount", "-o", "remount,rw", str(mount)], check=True, capture_output=True)
    runs.append(refused)
    retry_until_finished(runs, args.binary, str(state), corpus.keys, [str(source)], work, "c")
    counts, repeats, _ = tally("read-only state", runs, expected)
    check(repeats == 0, f"read-only state: each postback valid exactly once after the remount ({repeats} repeats)")


def scenario_d(args, work: Path, postgres: Postgres | None, kind: str, rng: random.Random) -> None:
    print(f"== d. regression \"frozen run\" ({kind}): SIGSTOP past the {LEASE_SECONDS} s lease", flush=True)
    corpus = Corpus(args.repo, work / f"d-{kind}-corpus", 6000)
    expected = set(corpus.ids)
    source = write_lines(work / f"input-d-{kind}.jsonl", apple_stream(corpus.lines, rng))
    if kind == "postgresql":
        state = postgres.new_database("frozen")
        pending = lambda: postgres.pending_claims("frozen")  # noqa: E731
    else:
        path = work / "frozen.sqlite"
        state = str(path)

        def pending() -> int:
            try:
                with sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5) as db:
                    return db.execute("SELECT coalesce(sum(hi - lo + 1), 0) FROM claims").fetchone()[0]
            except sqlite3.Error:
                return 0

    frozen_out = work / f"d-{kind}-frozen.jsonl"
    frozen_err = open(work / f"d-{kind}-frozen.stderr", "wb")
    process = subprocess.Popen([args.binary, "--format", "jsonl", "--quiet", "--state", state, *corpus.keys,
                                str(source)], stdout=subprocess.PIPE, stderr=frozen_err)
    try:
        deadline = time.monotonic() + 30
        while pending() == 0 and time.monotonic() < deadline:
            time.sleep(0.2)
        time.sleep(1.5)  # its output pipe full: it waits in a write
        held = pending()
        check(held > 0 and process.poll() is None, f"frozen run: the run holds {held} claims, blocked on its pipe")
        process.send_signal(signal.SIGSTOP)
        frozen_at = time.monotonic()
        time.sleep(LEASE_SECONDS + 3)
        other = cli(corpus.keys, args.binary, state, [str(source)], work, f"d-{kind}-other")
        note(f"frozen run: the other run ended {time.monotonic() - frozen_at:.1f} s into the freeze, exit status "
             f"{other.status}")
        time.sleep(max(0.0, LEASE_SECONDS + 6 - (time.monotonic() - frozen_at)))
        note(f"frozen run: continued after {time.monotonic() - frozen_at:.1f} s")
        process.send_signal(signal.SIGCONT)
        output, _ = process.communicate(timeout=300)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        frozen_err.close()
    frozen_out.write_bytes(output)
    frozen = Run(f"d-{kind}-frozen", process.returncode, frozen_out,
                 (work / f"d-{kind}-frozen.stderr").read_text(errors="replace"))
    check(other.status in (0, 1), f"frozen run: the other run finishes (exit status {other.status})")
    check(frozen.status in (0, 1, 2), f"frozen run: the frozen run finishes or exits 2 (exit status {frozen.status})")
    runs = [frozen, other]
    retry_until_finished(runs, args.binary, state, corpus.keys, [str(source)], work, f"d-{kind}")
    counts, repeats, _ = tally(f"frozen run ({kind})", runs, expected)
    note(f"frozen run ({kind}): {len(frozen.valid_ids())} valid records from the frozen run, {len(other.valid_ids())} "
         f"from the other; {repeats} postbacks valid in both")
    check(repeats <= BATCH, f"regression \"frozen run\" ({kind}): repeats at most the one batch it was writing into "
          f"its pipe ({repeats} <= {BATCH})")


def machine_line() -> str:
    memory = "?"
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                memory = f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB"
    except OSError:
        pass
    uptime = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return f"{now}; nproc {os.cpu_count()}, memory {memory}; uptime: {uptime}"


def scenario_e(args, work: Path, postgres: Postgres, rng: random.Random, busy: list[subprocess.Popen]) -> None:
    print(f"== e. three runs on one PostgreSQL state, the first's output unread {args.unread} s, four busy loops, "
          f"{args.repeat} repeats", flush=True)
    print(f"machine: {machine_line()}", flush=True)
    corpus = Corpus(args.repo, work / "e-corpus", 12000)
    expected = set(corpus.ids)
    lines = corpus.lines
    # 12,000 distinct: the first file 0-5,999; the second 0-2,999 and 6,000-8,999; the third 3,000-5,999 and
    # 9,000-11,999; each with Apple's retries and forgeries mixed in.
    layouts = [lines[0:6000], lines[0:3000] + lines[6000:9000], lines[3000:6000] + lines[9000:12000]]
    for _ in range(4):
        busy.append(subprocess.Popen(["sh", "-c", "while :; do :; done"], start_new_session=True))
    results = []
    for repeat in range(1, args.repeat + 1):
        state = postgres.new_database(f"three{repeat}")
        sources = []
        for number, layout in enumerate(layouts, 1):
            sources.append(write_lines(work / f"input-e-{repeat}-{number}.jsonl", apple_stream(layout, rng)))
        started = time.monotonic()
        unread_err = open(work / f"e-{repeat}-1.stderr", "wb")
        first = subprocess.Popen([args.binary, "--format", "jsonl", "--quiet", "--state", state, *corpus.keys,
                                  str(sources[0])], stdout=subprocess.PIPE, stderr=unread_err)
        others: list[Run | None] = [None, None]

        def other(index: int) -> None:
            others[index] = cli(corpus.keys, args.binary, state, [str(sources[index + 1])], work,
                                f"e-{repeat}-{index + 2}")

        threads = [threading.Thread(target=other, args=(index,)) for index in range(2)]
        for thread in threads:
            thread.start()
        try:
            time.sleep(args.unread)
            output, _ = first.communicate(timeout=300)
        finally:
            if first.poll() is None:
                first.kill()
                first.wait()
            unread_err.close()
        for thread in threads:
            thread.join()
        seconds = time.monotonic() - started
        (work / f"e-{repeat}-1.jsonl").write_bytes(output)
        runs = [Run(f"e-{repeat}-1", first.returncode, work / f"e-{repeat}-1.jsonl",
                    (work / f"e-{repeat}-1.stderr").read_text(errors="replace"))] + [run for run in others if run]
        counts, repeats, records = tally(f"three runs, repeat {repeat}", runs, expected)
        valid = sum(counts.values())
        results.append((valid, repeats, len(expected - set(counts)), records, seconds))
        check(all(run.status in (0, 1) for run in runs) and len(runs) == 3,
              f"three runs, repeat {repeat}: all three finish (exit statuses {[run.status for run in runs]})")
        check(valid == len(expected) and repeats == 0,
              f"three runs, repeat {repeat}: exactly {len(expected):,} valid ({valid:,}; {repeats} repeats), "
              f"{records:,} records, {seconds:.1f} s")
    exact = sum(1 for valid, repeats, lost, _, _ in results if valid == len(expected) and repeats == 0 and lost == 0)
    def span(values) -> str:
        low, high = min(values), max(values)
        return f"{low:,}" if low == high else f"{low:,}-{high:,}"

    if not results:
        return
    print(f"three runs summary: {exact} of {len(results)} repeats exactly {len(expected):,} valid; a repeat: "
          f"{span([r[0] for r in results])} valid, {span([r[1] for r in results])} repeats, "
          f"{span([r[2] for r in results])} lost, {span([r[3] for r in results])} records, "
          f"{min(r[4] for r in results):.1f}-{max(r[4] for r in results):.1f} s", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--binary", required=True)
    parser.add_argument("--repo", type=Path, default=Path(__file__).resolve().parent.parent)
    parser.add_argument("--repeat", type=int, default=2, help="repeats of the three-run scenario (e)")
    parser.add_argument("--unread", type=float, default=20, help="seconds the first run's output is left unread (e)")
    parser.add_argument("--only", default="a,b,c,d,e", help="the scenarios to run, e.g. d,e")
    parser.add_argument("--sqlite-freeze", action="store_true", help="d over a SQLite state too (36 s more)")
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args()
    args.repo = args.repo.resolve()
    only = set(args.only.split(","))
    seed = args.seed if args.seed is not None else random.randrange(2 ** 32)
    print(f"cli-faults: seed {seed}; {machine_line()}", flush=True)
    rng = random.Random(seed)

    # SIGTERM and SIGHUP end the script through the cleanup below, as Ctrl-C does.
    def stop(signum, _frame):
        raise KeyboardInterrupt(f"signal {signum}")
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGHUP, stop)

    work = Path(tempfile.mkdtemp(prefix="cli-faults."))
    mounts: list[Path] = []
    busy: list[subprocess.Popen] = []
    postgres = None
    started = time.monotonic()
    try:
        if only & {"a", "d", "e"}:
            postgres = Postgres(args.repo)
        if "a" in only:
            scenario_a(args, work, postgres, rng)
        if "b" in only:
            scenario_b(args, work, rng, mounts)
        if "c" in only:
            scenario_c(args, work, rng, mounts)
        if "d" in only:
            scenario_d(args, work, postgres, "postgresql", rng)
            if args.sqlite_freeze:
                scenario_d(args, work, None, "sqlite", rng)
        if "e" in only:
            scenario_e(args, work, postgres, rng, busy)
    except Exception as error:  # a scenario that could not run at all is a failure too
        check(False, f"the scenarios ran to the end ({type(error).__name__}: {error})")
    finally:
        for process in busy:
            process.kill()
            process.wait()
        if postgres is not None:
            postgres.close()
        for mount in mounts:
            subprocess.run(["mount", "-o", "remount,rw", str(mount)], capture_output=True)
            unmount(mount)
        if FAILURES and os.environ.get("CLI_FAULTS_KEEP"):
            print(f"kept {work} (CLI_FAULTS_KEEP)")
        else:
            shutil.rmtree(work, ignore_errors=True)
    seconds = time.monotonic() - started
    if FAILURES:
        print(f"FAIL: cli-faults: {len(FAILURES)} checks failed in {seconds:.0f} s:", flush=True)
        for failure in FAILURES:
            print(f"  - {failure}")
        return 1
    print(f"PASS: cli-faults: every check passed in {seconds:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
