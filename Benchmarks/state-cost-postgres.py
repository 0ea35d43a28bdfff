#!/usr/bin/env python3
"""What `--state` costs the CLI: throughput with a PostgreSQL state and with a SQLite state, against none (stdlib).

    swift build -c release
    python3 Benchmarks/state-cost-postgres.py [--bin PATH] [-n 20000] [--pairs 9] [--jobs 2] [--postgres CONNINFO]

Signs an Apple-shaped corpus of N distinct postbacks (make-corpus.py: Apple's serialisation and mix), then runs
the CLI over it `--pairs` rounds, each round three runs back to back in a rotating order: without state, with
`--state` on PostgreSQL, with `--state` on a SQLite file. Every state run starts from an empty state (the
PostgreSQL schema dropped, the SQLite file deleted, untimed), so all N postbacks are claimed, written and
confirmed. Every run is `postback-verify --quiet --format jsonl --jobs J --key KID=key.pem [--state S] corpus`
with its records to /dev/null; the first run of each kind is checked (N valid records, exit status 0).

The figure that matters is the ratio of throughputs, state / none, taken round by round (a round's runs are
seconds apart, so the machine's speed drifts little between them) and reported as the median over rounds, with
the lowest and highest. Wall and CPU seconds are medians too; the run's CPU is the CLI's own (user + system, from
wait4); when the server runs on this machine and its data directory is readable (as root, or as its user), the
server's CPU during each PostgreSQL run is measured too (its postmaster, reaped backends and background processes,
from /proc), and "CPU kept" is the run's CPU without state over the run's plus the server's with it: what the
wall-clock ratio tends to on a machine the run has to itself, and much steadier than it on a busy one.

PostgreSQL: --postgres (a libpq connection string or URL) or POSTBACK_VERIFY_TEST_POSTGRES names a server;
without either, `.ci/postgres start` makes a throw-away one on this machine (with fsync on, as a real server
would run), stopped at the end. `psql` must be installed (it drops the schema between runs).
"""
from __future__ import annotations

import argparse
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def run_timed(command: list[str]) -> tuple[float, float, int]:
    """Wall seconds, CPU seconds (user + system) and exit status of one run, records to /dev/null."""
    with open(os.devnull, "wb") as null:
        start = time.monotonic()
        process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=null, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.monotonic() - start
        process.returncode = os.waitstatus_to_exitcode(status)
        error = process.stderr.read().decode(errors="replace")
        process.stderr.close()
    if error:
        sys.stderr.write(error)
    return wall, usage.ru_utime + usage.ru_stime, process.returncode


def server_cpu_reader(connection: str):
    """A function returning the CPU seconds (user + system) the PostgreSQL server on this machine has used so far:
    its postmaster, the backends it reaped and its live processes; None when the server is not local or its data
    directory cannot be read (then only the CLI's CPU is reported)."""
    try:
        directory = subprocess.run(["psql", "-qXAt", connection, "-c", "SHOW data_directory"], check=True,
                                   capture_output=True, text=True).stdout.strip()
        with open(os.path.join(directory, "postmaster.pid")) as pid_file:
            postmaster = int(pid_file.readline())
        os.stat(f"/proc/{postmaster}/stat")
    except (OSError, ValueError, subprocess.CalledProcessError):
        return None
    tick = os.sysconf("SC_CLK_TCK")

    def read() -> float:
        total = 0
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/stat") as stat:
                    fields = stat.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(entry) == postmaster:
                total += sum(int(value) for value in fields[11:15])  # its own time and its reaped children's
            elif int(fields[1]) == postmaster:
                total += int(fields[11]) + int(fields[12])
        return total / tick
    return read


def start_postgres() -> tuple[str, str]:
    environment = dict(os.environ, POSTBACK_VERIFY_PG_FSYNC="on")
    printed = subprocess.run(["bash", os.path.join(ROOT, ".ci/postgres"), "start", "--watch", str(os.getpid())],
                             check=True, capture_output=True, text=True, env=environment).stdout
    values = {}
    for line in printed.splitlines():
        if line.startswith("export "):
            name, _, value = line[len("export "):].partition("=")
            values[name] = value.strip("'")
    return values["POSTBACK_VERIFY_TEST_POSTGRES"], values["POSTBACK_VERIFY_TEST_POSTGRES_DIR"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin", default=os.path.join(ROOT, ".build/release/postback-verify"))
    parser.add_argument("-n", type=int, default=20000, help="distinct postbacks in the corpus (default 20000)")
    parser.add_argument("--pairs", type=int, default=9, help="rounds of three runs (default 9)")
    parser.add_argument("--jobs", type=int, default=2, help="--jobs of every run (default 2)")
    parser.add_argument("--postgres", default=os.environ.get("POSTBACK_VERIFY_TEST_POSTGRES"),
                        help="a PostgreSQL server's libpq connection string (default: start one)")
    parser.add_argument("--kid", default="apple-cas-identifier/1")
    arguments = parser.parse_args()
    if not os.access(arguments.bin, os.X_OK):
        sys.exit(f"no binary at {arguments.bin}: swift build -c release (or give --bin)")

    work = tempfile.mkdtemp(prefix="postback-verify-state-cost.")
    started_dir = None
    postgres = arguments.postgres
    if not postgres:
        postgres, started_dir = start_postgres()
    database = "pbv_state_cost"
    subprocess.run(["psql", "-qX", postgres, "-c", f"DROP DATABASE IF EXISTS {database}"], check=True)
    subprocess.run(["psql", "-qX", postgres, "-c", f"CREATE DATABASE {database}"], check=True)
    postgres_state = f"{postgres} dbname={database}"
    server = subprocess.run(["psql", "-qXAt", postgres_state, "-c", "SHOW server_version"], check=True,
                            capture_output=True, text=True).stdout.strip()
    sqlite_state = os.path.join(work, "state.sqlite")
    server_cpu = server_cpu_reader(postgres_state)

    print(f"signing {arguments.n} Apple-shaped postbacks ...", file=sys.stderr)
    subprocess.run([sys.executable, os.path.join(HERE, "make-corpus.py"), "--out", work, "-n", str(arguments.n),
                    "--kid", arguments.kid, "--shape", "apple"], check=True, stdout=subprocess.DEVNULL)
    corpus = os.path.join(work, "corpus.jsonl")
    base = [arguments.bin, "--quiet", "--format", "jsonl", "--jobs", str(arguments.jobs),
            "--key", f"{arguments.kid}={os.path.join(work, 'key.pem')}"]
    kinds = {
        "none": base + [corpus],
        "postgresql": base + ["--state", postgres_state, corpus],
        "sqlite": base + ["--state", sqlite_state, corpus],
    }

    def reset(kind: str) -> None:
        if kind == "postgresql":
            subprocess.run(["psql", "-qX", postgres_state, "-c", "DROP SCHEMA IF EXISTS postback_verify CASCADE"],
                           check=True, stderr=subprocess.DEVNULL)
        elif kind == "sqlite":
            for suffix in ("", "-wal", "-shm"):
                if os.path.exists(sqlite_state + suffix):
                    os.remove(sqlite_state + suffix)

    # Check each kind once (untimed; it also warms the caches).
    for kind, command in kinds.items():
        reset(kind)
        output = subprocess.run(command, capture_output=True)
        lines = output.stdout.count(b'"verdict":"valid"')
        if output.returncode != 0 or lines != arguments.n:
            sys.exit(f"{kind}: exit {output.returncode}, {lines} valid records of {arguments.n}: "
                     f"{output.stderr.decode(errors='replace')}")

    order = list(kinds)
    results = {kind: [] for kind in kinds}
    for round_number in range(arguments.pairs):
        rotation = order[round_number % 3:] + order[:round_number % 3]
        for kind in rotation:
            reset(kind)
            time.sleep(0.2)  # the reset's own server process reaped before the count starts
            before = server_cpu() if server_cpu else 0.0
            wall, cpu, status = run_timed(kinds[kind])
            time.sleep(0.2)  # the run's server process reaped
            served = (server_cpu() - before) if server_cpu and kind == "postgresql" else 0.0
            if status != 0:
                sys.exit(f"{kind}: exit status {status}")
            results[kind].append((wall, cpu, served))
        print(f"round {round_number + 1}/{arguments.pairs}: " + ", ".join(
            f"{kind} {results[kind][-1][0]:.3f} s" for kind in order), file=sys.stderr)

    if started_dir:
        subprocess.run(["bash", os.path.join(ROOT, ".ci/postgres"), "stop", started_dir], check=False)
    else:
        subprocess.run(["psql", "-qX", postgres, "-c", f"DROP DATABASE IF EXISTS {database}"], check=False)
    subprocess.run(["rm", "-rf", work], check=False)

    print(f"## --state cost: {arguments.n} distinct Apple-shaped postbacks, --jobs {arguments.jobs}, "
          f"{arguments.pairs} rounds ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {os.cpu_count()} cores, "
          f"PostgreSQL {server} on this machine{', started by this script' if started_dir else ''})")
    print()
    # The CPU ratio: the run's CPU without state over the run's and the server's with it. On a machine the run
    # has to itself, where it is CPU-bound on every core, the wall-clock ratio tends to it; on a busy one the
    # wall-clock ratio moves with the others' load, this one much less.
    print("| state | median wall s | items/s | median CPU s (run) | median CPU s (server) "
          "| throughput / without state (median of rounds) | lowest | highest | CPU kept (median) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for kind in order:
        walls = [wall for wall, _, _ in results[kind]]
        cpus = [cpu for _, cpu, _ in results[kind]]
        served = [server for _, _, server in results[kind]]
        ratios = [none[0] / mine[0] for none, mine in zip(results["none"], results[kind])]
        kept = [none[1] / (mine[1] + mine[2]) for none, mine in zip(results["none"], results[kind])]
        server_column = f"{statistics.median(served):.3f}" if server_cpu and kind == "postgresql" else "-"
        print(f"| {kind} | {statistics.median(walls):.3f} | {arguments.n / statistics.median(walls):,.0f} | "
              f"{statistics.median(cpus):.3f} | {server_column} | {statistics.median(ratios):.3f} | "
              f"{min(ratios):.2f} | {max(ratios):.2f} | {100 * statistics.median(kept):.1f} % |")
    print()
    print(f"load average (1, 5, 15 min) at the end: {' '.join(open('/proc/loadavg').read().split()[:3])}")
    print()
    print("command: " + " ".join(shlex.quote(part) for part in kinds["postgresql"]).replace(work, "$WORK"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
