#!/usr/bin/env python3
"""End-to-end test of postback-receiver through real processes: the built binary on 127.0.0.1, Apple's example
postbacks and the repository's fixtures posted with curl, answers, stored rows and metrics checked.

    python3 Receiver/Tests/e2e/e2e.py --receiver BIN --cli BIN [--repo ROOT]

Expectations come from outside the receiver: Fixtures/manifest.json (written from the specification), the names
Apple gives its examples (`-valid`, `-invalid`, `bad-signature`), and the command line's records over the same
files with the same options (the receiver must judge exactly as postback-verify does). Exit status 0 when every
check passed; each failure is printed.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from receiver_process import Checks, Receiver, curl_post, curl_get, exported, rows, metric  # noqa: E402

CHECKS = Checks()
check = CHECKS.check



FIXTURE_KEYS = ["--key", "fixture.adattributionkit=Fixtures/keys/fixture.adattributionkit.pem",
                "--key", "fixture-apple-identifier/0=Fixtures/keys/fixture-apple-identifier-0.pem"]
SKAN_KEYS = ["--skadnetwork-key-p256", "Fixtures/keys/fixture-skadnetwork-p256.pem",
             "--skadnetwork-key-p192", "Fixtures/keys/fixture-skadnetwork-p192.pem"]
# The runs of Fixtures/check.sh (and Fixtures/README.md): each directory with the options its expectations need.
RUNS = {
    "valid": ["--allow-development"] + FIXTURE_KEYS,
    "invalid": FIXTURE_KEYS,
    "dedupe": FIXTURE_KEYS,
    "skadnetwork/valid": SKAN_KEYS,
    "skadnetwork/invalid": SKAN_KEYS,
    "skadnetwork/dedupe": SKAN_KEYS,
}
AAK = "/.well-known/appattribution/report-attribution/"
SKAN = "/.well-known/skadnetwork/report-attribution/"


def item_bytes(path: Path, line: int) -> bytes:
    """The item the command line reads at path:line: a whole `.json` file, else that line without its ending."""
    data = path.read_bytes()
    if path.suffix == ".json":
        return data
    text_line = data.split(b"\n")[line - 1]
    return text_line[:-1] if text_line.endswith(b"\r") else text_line


def comparable(record: dict) -> dict:
    """A record without what names where it was read (a path and line for the CLI, a request id for the receiver):
    the source members, and the messages of D1 and D2, which name the first sighting's source."""
    kept = {k: v for k, v in record.items() if k not in ("source", "line", "duplicate-of", "duplicate-of-source",
                                                          "duplicate-of-run")}
    for member in ("errors", "warnings"):
        kept[member] = [{k: v for k, v in finding.items() if not (k == "message" and finding.get("rule") in ("D1", "D2"))}
                        for finding in kept.get(member, [])]
    return kept


def cli_records(cli: str, repo: Path, options: list[str], paths: list[str]) -> list[dict]:
    run = subprocess.run([cli, "--format", "jsonl", "--quiet", *options, *paths], cwd=repo, capture_output=True)
    return [json.loads(line) for line in run.stdout.decode().splitlines() if line]


def route_for(record_kind: str, body: bytes) -> str:
    return SKAN if b"attribution-signature" in body else AAK


def fixture_runs(args, repo: Path, work: Path) -> None:
    manifest = json.loads((repo / "Fixtures/manifest.json").read_text())
    expectations = {(entry["path"], entry["line"]): entry for entry in manifest}
    for run, options in RUNS.items():
        # The command line's records over the run's directory say which items there are, in its reading order.
        records = cli_records(args.cli, repo, options, [f"Fixtures/{run}"])
        check(len(records) > 0, f"{run}: the command line read no items")
        receiver = Receiver(args.receiver, work / run.replace("/", "-"), options, cwd=repo)
        request_of_line: dict[tuple[str, int], str] = {}
        stored_count = 0
        too_large = 0
        try:
            for record in records:
                source = record["source"]
                path = repo / source
                body = item_bytes(path, record["line"])
                status, answer = curl_post(receiver.port, route_for(record["kind"], body), body)
                if len(body) > 16384:
                    # Over the cap: 413 and nothing stored (the command line reports it invalid, J1).
                    check(status == 413, f"{source}:{record['line']}: {len(body)} bytes answered {status}, not 413")
                    check(len(rows(receiver.archive)) == stored_count, f"{source}: a body over the cap was stored")
                    too_large += 1
                    continue
                check(status == 200 and answer == b"", f"{source}:{record['line']}: answered {status} {answer[:60]!r}")
                stored = rows(receiver.archive)
                stored_count += 1
                check(len(stored) == stored_count,
                      f"{source}:{record['line']}: {len(stored)} rows after {stored_count} stored")
                row = stored[-1]
                check(row["body"] == body, f"{source}:{record['line']}: stored bytes differ from those posted")
                mine = json.loads(row["record"])
                request_of_line[(source, record["line"])] = mine["source"]
                check(comparable(mine) == comparable(record),
                      f"{source}:{record['line']}: receiver record differs from the command line's:\n  {mine}\n  {record}")
                check(row["verdict"] == record["verdict"] and row["code"] == (record["errors"][0]["code"]
                                                                            if record["errors"] else None),
                      f"{source}:{record['line']}: row verdict/code {row['verdict']}/{row['code']}")
                key = source.removeprefix("Fixtures/")
                expected = expectations.get((key, record["line"]))
                if expected is not None:
                    check(mine["verdict"] == expected["verdict"] and
                          (mine["errors"][0]["code"] if mine["errors"] else None) == expected["code"],
                          f"{source}:{record['line']}: {mine['verdict']} {mine['errors'][:1]}, manifest says "
                          f"{expected['verdict']} {expected['code']}")
                    if expected.get("duplicateOf"):
                        first = request_of_line.get((source, expected["duplicateOf"]))
                        check(mine.get("duplicate-of-source") == first,
                              f"{source}:{record['line']}: duplicate-of-source {mine.get('duplicate-of-source')}, "
                              f"expected the request {first} that stored line {expected['duplicateOf']}")
            check(metric(receiver.port, "postback_receiver_requests_total", route="appattribution", status="2xx")
                  + metric(receiver.port, "postback_receiver_requests_total", route="skadnetwork", status="2xx")
                  == len(records) - too_large, f"{run}: requests_total 2xx differs from {len(records)} posts")
            valid = sum(1 for r in records if r["verdict"] == "valid")
            counted = sum(metric(receiver.port, "postback_receiver_verdicts_total", kind=k, verdict="valid", code="none")
                          for k in ("postback", "impression", "skadnetwork", "unknown"))
            check(counted == valid, f"{run}: verdicts_total valid {counted}, records say {valid}")
            check(receiver.stop() == 0, f"{run}: receiver did not exit 0 on SIGTERM")
        finally:
            receiver.kill()
        print(f"ok: Fixtures/{run}: {len(records)} items posted, rows, records and metrics as expected", flush=True)


def apple_examples(args, repo: Path, work: Path) -> None:
    vectors = repo / "Tests/AttributionTests/Vectors/reference"
    files = sorted([*(vectors / "apple").glob("*.json"), *(vectors / "apple").glob("*.jws"),
                    *(vectors / "skadnetwork").glob("*.json")])
    check(len(files) >= 10, f"only {len(files)} Apple examples found")
    options = ["--allow-development"]
    receiver = Receiver(args.receiver, work / "apple", options, cwd=repo)
    try:
        records = cli_records(args.cli, repo, options + ["--no-dedupe"], [str(f.relative_to(repo)) for f in files])
        by_source = {r["source"]: r for r in records}
        for path in files:
            body = path.read_bytes().rstrip(b"\n") if path.suffix == ".jws" else path.read_bytes()
            status, answer = curl_post(receiver.port, route_for("", body), body)
            check(status == 200 and answer == b"", f"Apple's {path.name}: answered {status}")
            mine = json.loads(rows(receiver.archive)[-1]["record"])
            name = path.stem
            apple_says_valid = name.endswith("-valid")
            check((mine["verdict"] == "valid") == apple_says_valid,
                  f"Apple's {path.name}: {mine['verdict']} {mine['errors'][:1]}")
            theirs = by_source.get(str(path.relative_to(repo)))
            check(theirs is not None and comparable(mine) == comparable(theirs),
                  f"Apple's {path.name}: receiver record differs from the command line's")
        check(metric(receiver.port, "postback_receiver_key_environment_total", environment="development") >= 1,
              "key_environment development not counted")
        check(metric(receiver.port, "postback_receiver_key_environment_total", environment="production") >= 1,
              "key_environment production not counted")
    finally:
        check(receiver.stop() == 0, "Apple examples: receiver did not exit 0 on SIGTERM")
    print(f"ok: Apple's {len(files)} examples: verdicts as Apple names them, records as the command line's", flush=True)


def routes_and_limits(args, repo: Path, work: Path) -> None:
    receiver = Receiver(args.receiver, work / "routes", ["--allow-development", *FIXTURE_KEYS, "--invalid-quota", "3",
                                                         "--log-format", "json"], cwd=repo)
    try:
        port = receiver.port
        status, body = curl_get(port, "/healthz")
        check(status == 200 and body == b"ok\n", f"/healthz answered {status} {body!r}")
        for method, path in [("GET", AAK), ("GET", "/"), ("POST", "/"), ("POST", "/.well-known/appattribution/"),
                             ("DELETE", "/healthz"), ("POST", "/metrics"), ("GET", "/healthz/x")]:
            status, _ = curl_post(port, path, b"{}", method=method)
            check(status == 404, f"{method} {path} answered {status}, not 404")
        check(metric(port, "postback_receiver_requests_total", route="other", status="4xx") == 7,
              "404s not counted under route other")
        exact = (repo / "Fixtures/valid/postback/size-exactly-16384-bytes.json").read_bytes()
        check(len(exact) == 16384, "size-exactly-16384-bytes.json is not 16384 bytes")
        status, _ = curl_post(port, AAK.rstrip("/"), exact)
        check(status == 200, f"a 16384-byte body (no trailing slash) answered {status}")
        status, _ = curl_post(port, AAK, exact + b" ")
        check(status == 413, f"a 16385-byte body answered {status}, not 413")
        status, _ = curl_post(port, AAK, b"x" * 1_000_000)
        check(status == 413, f"a 1 MB body answered {status}, not 413")
        check(len(rows(receiver.archive)) == 1, "a body over the cap was stored")
        # A retry: stored as a duplicate of the first sighting, counted once.
        valid = (repo / "Fixtures/valid/apple/postback-development-valid.json").read_bytes()
        for _ in range(3):
            status, answer = curl_post(port, AAK, valid)
            check(status == 200 and answer == b"", f"a retry answered {status} {answer!r}")
        stored = rows(receiver.archive)
        verdicts = [(r["verdict"], r["code"]) for r in stored[-3:]]
        check(verdicts == [("valid", None), ("invalid", "duplicate"), ("invalid", "duplicate")],
              f"retries stored as {verdicts}")
        first_request = json.loads(stored[-3]["record"])["source"]
        check(all(json.loads(r["record"]).get("duplicate-of-source") == first_request for r in stored[-2:]),
              "a retry does not name its first sighting")
        check(metric(port, "postback_receiver_verdicts_total", kind="postback", verdict="invalid", code="duplicate") == 2,
              "duplicates not counted")
        # The invalid quota: 3 invalid bodies an hour stored (the 2 duplicates above took 2), then only counted.
        before = len(rows(receiver.archive))
        for number in range(4):
            status, answer = curl_post(port, AAK, b'{"jws-string":"forged.%d.x"}' % number)
            check(status == 200 and answer == b"", f"a forgery over the quota answered {status} {answer!r}")
        check(len(rows(receiver.archive)) == before + 1, f"{len(rows(receiver.archive)) - before} forgeries stored, not 1")
        check(metric(port, "postback_receiver_not_stored_total", reason="quota") == 3, "over-quota bodies not counted")
        check(sum(metric(port, "postback_receiver_verdicts_total", kind=kind, verdict="invalid", code="malformed-input")
                  for kind in ("postback", "impression", "skadnetwork", "unknown")) == 4,
              "over-quota bodies' verdicts not counted")
        # A valid postback is stored even beyond the invalid quota.
        fresh = (repo / "Fixtures/valid/postback/high-s-signature.json").read_bytes()
        check(curl_post(port, AAK, fresh)[0] == 200 and rows(receiver.archive)[-1]["body"] == fresh,
              "a valid postback beyond the invalid quota was not stored")
        # Started with --allow-development: the gauge says so while it runs (and a warning line, below).
        check(metric(port, "postback_receiver_development_keys_trusted") == 1,
              "postback_receiver_development_keys_trusted is not 1 under --allow-development")
        text = curl_get(port, "/metrics")[1].decode()
        for name in ("postback_receiver_request_duration_seconds_bucket", "postback_receiver_valid_by_tier_total",
                     "postback_receiver_valid_without_conversion_value_total", "postback_receiver_commits_total"):
            check(name in text, f"/metrics lacks {name}")
        series = [line for line in text.splitlines() if line and not line.startswith("#")]
        check(len(series) < 600, f"/metrics has {len(series)} series: labels are not bounded")
        # A path a sender chose, with a bidirectional override and an escape sequence's bytes in it.
        hostile = raw_request(port, b"GET /x\xe2\x80\xaey%1B[31m HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        check(hostile.startswith(b"HTTP/1.1 404") or hostile.startswith(b"HTTP/1.1 400"),
              f"a hostile path answered {hostile[:40]!r}")
    finally:
        check(receiver.stop() == 0, "routes: receiver did not exit 0 on SIGTERM")
    # The request log (--log-format json): one JSON object per line, a line per request, and the ids the rows name.
    log = (work / "routes" / "receiver.log").read_bytes()
    check(b"\xe2\x80\xae" not in log and b"\x1b" not in log, "a raw bidirectional override or escape reached the log")
    lines = [json.loads(line) for line in log.decode().splitlines() if line.startswith("{")]
    check(len(lines) == len(log.decode().splitlines()), "a log line is not one JSON object")
    trusted = [line for line in lines if line.get("level") == "warning"
               and line.get("message", "").startswith("Apple's development keys are trusted (--allow-development)")]
    check(len(trusted) == 1, f"{len(trusted)} start-up warnings that development keys are trusted, not 1")
    requests = [line for line in lines if line.get("message") == "Request"]
    sources = [json.loads(r["record"])["source"] for r in rows(receiver.archive)]
    logged = {line.get("hb.request.id"): line for line in requests}
    check(all(source in logged and logged[source].get("hb.request.method") == "POST" for source in sources),
          "a stored row's request id has no POST request line in the log")
    check(sum(1 for line in requests if line.get("hb.request.method") == "DELETE") == 1,
          "the one DELETE request is not one log line")
    if hostile.startswith(b"HTTP/1.1 404"):
        check(any("\u202e" in line.get("hb.request.path", "") for line in requests),
              "the hostile path's request line is missing")
    print("ok: routes, 404, body cap (413), retries as duplicates, invalid quota, metrics, JSON request log",
          flush=True)


def raw_request(port: int, request: bytes) -> bytes:
    """Sends `request` as it is (bytes curl would refuse or encode) and returns the answer."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as connection:
        connection.sendall(request)
        answer = b""
        while chunk := connection.recv(65536):
            answer += chunk
        return answer


def shared_state_with_cli(args, repo: Path, work: Path) -> None:
    """The receiver and postback-verify --state on one file count each postback once between them."""
    options = ["--allow-development", *FIXTURE_KEYS]
    receiver = Receiver(args.receiver, work / "shared", options, cwd=repo)
    try:
        ours = repo / "Fixtures/valid/postback/high-s-signature.json"
        curl_post(receiver.port, AAK, ours.read_bytes())
        request = json.loads(rows(receiver.archive)[-1]["record"])["source"]
        # The CLI, while the receiver runs, over a batch holding the same postback and one it never saw.
        other = "Fixtures/valid/postback/low-s-signature.json"
        run = subprocess.run([args.cli, "--format", "jsonl", "--quiet", *options, "--state", str(receiver.state),
                              str(ours.relative_to(repo)), other], cwd=repo, capture_output=True)
        records = [json.loads(line) for line in run.stdout.decode().splitlines()]
        check(len(records) == 2 and records[0]["errors"][:1] and records[0]["errors"][0]["code"] == "duplicate"
              and records[0].get("duplicate-of-source") == request,
              f"the CLI did not see the receiver's postback as a duplicate of request {request}: {records[:1]}")
        check(len(records) == 2 and records[1]["verdict"] == "valid", "the CLI's new postback is not valid")
        # And the receiver then sees the CLI's postback as a duplicate of the CLI's record.
        curl_post(receiver.port, AAK, (repo / other).read_bytes())
        mine = json.loads(rows(receiver.archive)[-1]["record"])
        check(mine["errors"][:1] != [] and mine["errors"][0]["code"] == "duplicate"
              and mine.get("duplicate-of-source") == other,
              f"the receiver did not see the CLI's postback as a duplicate of {other}: {mine}")
    finally:
        check(receiver.stop() == 0, "shared state: receiver did not exit 0")
    print("ok: receiver and postback-verify --state on one file count each postback once", flush=True)


def graceful_stop(args, repo: Path, work: Path) -> None:
    """SIGTERM with requests in flight: each one that got 200 has its row, and the process exits 0."""
    receiver = Receiver(args.receiver, work / "sigterm", ["--allow-development", *FIXTURE_KEYS], cwd=repo)
    bodies = sorted((repo / "Fixtures/valid/postback").glob("*.json"))
    out = work / "sigterm-answers"
    out.mkdir()
    clients = [subprocess.Popen(
        ["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "--data-binary", f"@{body}",
         f"http://127.0.0.1:{receiver.port}{AAK}"], stdout=open(out / f"{n}", "w")) for n, body in enumerate(bodies)]
    time.sleep(0.05)
    status = receiver.stop()
    for client in clients:
        client.wait()
    answers = [(out / f"{n}").read_text() for n in range(len(bodies))]
    ok = [bodies[n].read_bytes() for n, a in enumerate(answers) if a == "200"]
    stored = {r["body"] for r in rows(receiver.archive)}
    check(status == 0, f"exit status {status} after SIGTERM, not 0")
    check(ok, "no request was answered 200 before the stop: nothing in flight was tested")
    check(all(body in stored for body in ok), "a request answered 200 has no row after SIGTERM")
    check(all(a in ("200", "000") for a in answers), f"answers during shutdown: {sorted(set(answers))}")
    # Every valid postback it stored is remembered in the state after the stop (its claim confirmed, not released
    # when the store closed): a later retry or CLI run sees it as a duplicate.
    state = sqlite3.connect(f"file:{receiver.state}?mode=ro", uri=True)
    remembered = {row[0] for row in state.execute("SELECT key FROM postbacks")}
    unconfirmed = state.execute("SELECT count(*) FROM claims").fetchone()[0]
    state.close()
    valid_keys = {r["key"].decode() for r in rows(receiver.archive) if r["verdict"] == "valid"}
    check(valid_keys and valid_keys <= remembered and unconfirmed == 0,
          f"after SIGTERM {len(valid_keys - remembered)} stored valid postbacks are not remembered in the state, "
          f"{unconfirmed} claims unconfirmed")
    print(f"ok: SIGTERM with {len(bodies)} requests in flight: {len(ok)} answered 200, all stored; exit 0", flush=True)


def postgres_shared(args, repo: Path, work: Path) -> None:
    """Two receivers on one PostgreSQL state count each postback once between them; with the database down they
    answer 500, and once it is back the retries are stored as first sightings."""
    connection = os.environ.get("POSTBACK_VERIFY_TEST_POSTGRES", "")
    directory = os.environ.get("POSTBACK_VERIFY_TEST_POSTGRES_DIR", "")
    if not connection:
        message = "no PostgreSQL server (POSTBACK_VERIFY_TEST_POSTGRES unset; e2e.sh starts one with .ci/postgres)"
        if os.environ.get("POSTBACK_VERIFY_REQUIRE_POSTGRES") == "1":
            check(False, message)
        else:
            print(f"SKIP: PostgreSQL: {message}", flush=True)
        return
    database = f"receiver_e2e_{os.getpid()}_{int(time.time())}"
    subprocess.run(["psql", connection, "-qc", f"CREATE DATABASE {database}"], check=True, capture_output=True)
    state = f"{connection} dbname={database}"
    options = ["--allow-development", *FIXTURE_KEYS]
    default_archive = repo / "postback-receiver-received.sqlite"
    had_default_archive = default_archive.exists()
    first = Receiver(args.receiver, work / "pg-a", options, cwd=repo, state_argument=state)
    second = Receiver(args.receiver, work / "pg-b", options, cwd=repo, state_argument=state)
    try:
        bodies = [p.read_bytes() for p in sorted((repo / "Fixtures/valid/postback").glob("*.json"))]
        for index, body in enumerate(bodies):
            # Each body to both receivers, in alternating order: one of them sees it first.
            for receiver in ((first, second) if index % 2 else (second, first)):
                status, answer = curl_post(receiver.port, AAK, body)
                check(status == 200 and answer == b"", f"PostgreSQL state: answered {status}")
        # Both receivers' rows are in the database's one table, read with export: every 200 has its row.
        stored = exported(args.cli, state, expect=2 * len(bodies))
        check(len(stored) == 2 * len(bodies), f"{len(stored)} rows in PostgreSQL for {2 * len(bodies)} answers 200")
        check(sorted(r["body"] for r in stored) == sorted(bodies * 2), "the rows in PostgreSQL are not the bodies sent")
        requests = {r["request"] for r in stored}
        check(len(requests) == len(stored), "two rows with one request id")
        valid: dict[bytes, int] = {}
        for row in stored:
            if row["verdict"] == "valid":
                valid[row["key"]] = valid.get(row["key"], 0) + 1
        check(len(valid) == len(bodies) and all(count == 1 for count in valid.values()),
              f"two receivers on one PostgreSQL state: valid counts per postback {sorted(set(valid.values()))}")
        check(not list((work / "pg-a").glob("*.sqlite*")) and not list((work / "pg-b").glob("*.sqlite*"))
              and default_archive.exists() == had_default_archive,
              "a receiver with a PostgreSQL state made a local archive file")
        cursor = stored[-1]["cursor"]
        check(exported(args.cli, state, after=cursor) == [], "export after the last cursor printed rows")
        if directory:
            subprocess.run([str(repo / ".ci/postgres"), "halt", directory], check=True, capture_output=True)
            fresh = (repo / "Fixtures/valid/apple/postback-development-valid.json").read_bytes()
            status, _ = curl_post(first.port, AAK, fresh)
            check(status == 500, f"with the database down, a postback was answered {status}, not 500")
            subprocess.run([str(repo / ".ci/postgres"), "resume", directory], check=True, capture_output=True)
            check(exported(args.cli, state, after=cursor) == [], "with the database down, a row was stored")
            # Apple retries until it gets 200 (the first call after the outage may still find the old connection
            # gone: the store reconnects on the next).
            answers = [curl_post(first.port, AAK, fresh)[0] for _ in range(3)]
            check(200 in answers, f"once the database was back, the retries were answered {answers}")
            after = [(r["verdict"], r["code"])
                     for r in exported(args.cli, state, after=cursor, expect=answers.count(200))]
            check(after[:1] == [("valid", None)] and all(row == ("invalid", "duplicate") for row in after[1:])
                  and len(after) == answers.count(200),
                  f"after the outage, the retries were stored as {after} (answers {answers}), not valid first")
    finally:
        check(first.stop() == 0 and second.stop() == 0, "PostgreSQL receivers did not exit 0")
        subprocess.run(["psql", connection, "-qc", f"DROP DATABASE IF EXISTS {database}"], capture_output=True)
    print(f"ok: two receivers on one PostgreSQL state count each of {len(valid)} postbacks once, every row in its "
          "table (read with export), no local archive; 500 while the database is down, the retry stored valid once "
          "it is back", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--receiver", required=True)
    parser.add_argument("--cli", required=True)
    parser.add_argument("--repo", default=str(Path(__file__).resolve().parents[3]))
    args = parser.parse_args()
    args.receiver = str(Path(args.receiver).resolve())
    args.cli = str(Path(args.cli).resolve())
    repo = Path(args.repo).resolve()
    with tempfile.TemporaryDirectory(prefix="receiver-e2e-") as temporary:
        work = Path(temporary)
        for test in (routes_and_limits, apple_examples, fixture_runs, shared_state_with_cli, graceful_stop,
                     postgres_shared):
            before = len(CHECKS.failures)
            test(args, repo, work)
            if len(CHECKS.failures) > before:
                print(f"FAILED: {test.__name__}: {len(CHECKS.failures) - before} checks (the ok line above, if any, "
                      "only says the test ran to its end)", flush=True)
    print(f"e2e: {CHECKS.count} checks, {len(CHECKS.failures)} failed")
    return 1 if CHECKS.failures else 0


if __name__ == "__main__":
    sys.exit(main())
