#!/usr/bin/env python3
"""What each thread of postback-verify costs per item, and what that predicts for more cores (issue 25 item 3).

    python3 Benchmarks/scaling.py --bin .build/release/postback-verify [--items 60000] [--jobs 1 2] [--runs 3]

Signs a fresh Apple-shaped corpus (make-corpus.py), then for each --jobs value runs the command over it, fed through
a pipe that stays open after the last byte, so the threads can be read in /proc while the run waits for more input:
each thread's CPU time (the scheduler's nanoseconds) divided by the items gives its cost per item. The threads, in the order the
command starts them: the main thread is the writer (records, deduplication, output), then the signal watcher, the
reader (input, and with --jobs below the core count the fast path's preparation), then one thread per job (the ECDSA,
and, when every core has a job, preparation and completion too). CPU time per item hardly depends on what else the
machine runs, unlike wall time.

The prediction: on C cores the process can spend C seconds of CPU per second, so with W microseconds of workers'
CPU per item and R and T for the one reader and the one writer, items/s = min(C / (W + R + T), 1 / R, 1 / T),
with W, R and T measured at --jobs = the cores here (the layout a large machine runs). `openssl speed -multi C`
scales as C, so the ratio to it holds while the cores are the bound and falls once the reader or the writer is. Not
modelled: the pipeline's one lock (taken a few times per batch of 256 items) and memory bandwidth.

Prints Markdown with a one-line header (date, machine, load): `> Benchmarks/results/scaling.md` keeps it.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TICK = os.sysconf("SC_CLK_TCK")


def thread_times(pid: int) -> list[tuple[int, float]]:
    """Each thread's CPU seconds: the scheduler's own count in nanoseconds (schedstat's first field), or where the
    kernel has none, user + system time in clock ticks (10 ms each: a reader's 0.3 µs an item over 60,000 items is
    two ticks, too coarse to tell 0.33 from 0.50)."""
    rows = []
    for tid in sorted(os.listdir(f"/proc/{pid}/task"), key=int):
        try:
            rows.append((int(tid), int(open(f"/proc/{pid}/task/{tid}/schedstat").read().split()[0]) / 1e9))
        except (OSError, ValueError, IndexError):
            fields = open(f"/proc/{pid}/task/{tid}/stat").read().rsplit(")", 1)[1].split()
            rows.append((int(tid), (int(fields[11]) + int(fields[12])) / TICK))
    return rows


def measure(binary: str, corpus: Path, key_argument: str, jobs: int) -> dict[str, float]:
    """CPU seconds per item of the writer, the reader and the workers (summed) of one run."""
    data = corpus.read_bytes()
    items = data.count(b"\n")
    process = subprocess.Popen([binary, "--quiet", "--format", "jsonl", "--no-dedupe", "--key", key_argument,
                                "--jobs", str(jobs), "-"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)
    assert process.stdin is not None
    process.stdin.write(data)
    process.stdin.flush()
    last = -1.0
    while True:  # until the run is idle: every record written, waiting for more input
        time.sleep(0.3)
        now = sum(cpu for _, cpu in thread_times(process.pid))
        if now == last:
            break
        last = now
    rows = thread_times(process.pid)
    process.stdin.close()
    process.wait()
    writer = rows[0][1]
    workers = [cpu for _, cpu in rows[-jobs:]]
    reader = rows[-jobs - 1][1]
    return {"writer": writer / items * 1e6, "reader": reader / items * 1e6, "workers": sum(workers) / items * 1e6,
            "total": sum(cpu for _, cpu in rows) / items * 1e6}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--items", type=int, default=60000)
    parser.add_argument("--jobs", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    repo = Path(__file__).resolve().parents[1]
    with tempfile.TemporaryDirectory(prefix="scaling-") as temporary:
        work = Path(temporary)
        subprocess.run([sys.executable, str(repo / "Benchmarks/make-corpus.py"), "--out", str(work), "-n",
                        str(args.items)], check=True, capture_output=True)
        key_argument = f"{(work / 'kid').read_text().strip()}={work / 'key.pem'}"
        model = subprocess.run(["sh", "-c", "grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-"],
                               capture_output=True, text=True).stdout.strip()
        load = open("/proc/loadavg").read().split()[:3]
        print(f"# postback-verify per-thread cost, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; "
              f"{os.cpu_count()} cores, {model}; load {' '.join(load)} before the runs")
        print()
        print(f"`Benchmarks/scaling.py --items {args.items} --runs {args.runs}`, {args.bin}, an Apple-shaped corpus "
              "(distinct postbacks, one key), `--no-dedupe`, records to /dev/null; medians of the runs, CPU "
              "microseconds per item.")
        print()
        print("| --jobs | writer (main thread) | reader | workers (sum) | whole process |")
        print("|---:|---:|---:|---:|---:|")
        results: dict[int, dict[str, float]] = {}
        for jobs in args.jobs:
            runs = [measure(args.bin, work / "corpus.jsonl", key_argument, jobs) for _ in range(args.runs)]
            results[jobs] = {name: statistics.median(run[name] for run in runs) for name in runs[0]}
            row = results[jobs]
            print(f"| {jobs} | {row['writer']:.2f} | {row['reader']:.2f} | {row['workers']:.2f} | "
                  f"{row['total']:.2f} |")
        widest = results[max(results)]
        worker, reader, writer = widest["workers"], widest["reader"], widest["writer"]
        print()
        per_item = worker + reader + writer
        print(f"Prediction from `--jobs {max(results)}` (every core a worker): items/s = min(C / {per_item:.2f} us, "
              f"1 / {reader:.2f} us, 1 / {writer:.2f} us).")
        print()
        print("| cores C | the cores' bound | reader's bound | writer's bound | predicted items/s | bound by |")
        print("|---:|---:|---:|---:|---:|---|")
        for cores in (1, 2, 4, 8, 16, 32, 64):
            bounds = {"cores": cores / per_item * 1e6, "reader": 1 / reader * 1e6 if reader else float("inf"),
                      "writer": 1 / writer * 1e6 if writer else float("inf")}
            limit = min(bounds, key=bounds.get)
            print(f"| {cores} | {bounds['cores']:,.0f} | {bounds['reader']:,.0f} | {bounds['writer']:,.0f} | "
                  f"{bounds[limit]:,.0f} | {limit} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
