#!/usr/bin/env python3
"""Run a command several times and report wall time, CPU time and peak RSS of each run (Python 3.11, stdlib).

    python3 Benchmarks/measure.py [--runs R] [--warmup W] [--status 0,1] [--stdout FILE]
                                  [--wait-idle F --max-wait S] -- CMD [ARG ...]

Each run is one child process (standard input /dev/null, standard output FILE, default /dev/null; standard
error passed through). Wall time is taken around fork/exec and wait; CPU time (user + system) comes from
wait4(), i.e. from the kernel's accounting of that child alone. Peak RSS is the child's ru_maxrss, read through
GNU time (/usr/bin/time -f %M) when it is installed: Linux counts the RSS a child had before exec, and a child
forked from Python starts at Python's ~14 MiB, while one forked from `time` starts at ~2 MiB. Without GNU time,
the figure is wait4()'s and never below Python's own RSS (fine for anything larger, misleading for tiny ones).

Other work on the machine skews timings, so each run also records the CPU time the rest of the machine used
meanwhile (busy time from /proc/stat minus the child's own CPU time), as a fraction of the machine's capacity
over the run ("foreign" load: 0 = only the benchmark ran, 0.5 = one of two cores was busy with something else).
/proc/stat counts in 10 ms ticks, so for runs shorter than 0.25 s the figure is taken over the whole batch.
With --wait-idle F, the first run, and every run after one (of 0.25 s or more) whose foreign load was F or more,
first waits (up to --max-wait seconds) until the machine is less than F busy.

Prints one line on standard output, whitespace-separated, for run.sh to read:

    median_wall_s min_wall_s max_wall_s median_cpu_s max_peak_rss_kib median_peak_rss_kib runs
    median_foreign max_foreign

and, with --verbose, every run on standard error. Exits 3 if any run's status is not in --status.
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


HZ = os.sysconf("SC_CLK_TCK")
SHORT = 0.25  # seconds: below this, one run's foreign load cannot be told from /proc/stat's clock ticks
NCPU = os.cpu_count() or 1


def busy_jiffies() -> tuple[int, int]:
    """(busy, total) jiffies of all CPUs from /proc/stat (0, 0 where there is none)."""
    try:
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:]]
    except (OSError, ValueError):
        return 0, 0
    idle = v[3] + (v[4] if len(v) > 4 else 0)
    total = sum(v[:8])
    return total - idle, total


def wait_idle(threshold: float, max_wait: float) -> None:
    deadline = time.monotonic() + max_wait
    while True:
        b0, t0 = busy_jiffies()
        time.sleep(0.5)
        b1, t1 = busy_jiffies()
        if t1 == t0 or (b1 - b0) / (t1 - t0) < threshold:
            return
        if time.monotonic() > deadline:
            print(f"measure: machine still {(b1 - b0) / (t1 - t0):.0%} busy after {max_wait:.0f} s; "
                  f"measuring anyway", file=sys.stderr)
            return


def gnu_time() -> str | None:
    path = shutil.which("time", path="/usr/bin:/bin:/usr/local/bin")
    if not path:
        return None
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return None
    return path if "GNU" in out.stdout + out.stderr else None


GNU_TIME = gnu_time()


def run_once(cmd: list[str], stdout_path: str, stderr_path: str | None = None) -> tuple[float, float, int, int, float]:
    with open(os.devnull, "rb") as stdin, open(stdout_path, "wb") as stdout, \
            open(stderr_path or os.devnull, "ab") as stderr, \
            tempfile.NamedTemporaryFile("r", prefix="measure-rss.") as rss_file:
        full = [GNU_TIME, "-q", "-f", "%M", "-o", rss_file.name, *cmd] if GNU_TIME else cmd
        b0, _ = busy_jiffies()
        t0 = time.perf_counter()
        proc = subprocess.Popen(full, stdin=stdin, stdout=stdout, stderr=stderr if stderr_path else None)
        _, status, ru = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        b1, _ = busy_jiffies()
        maxrss = ru.ru_maxrss
        if GNU_TIME:
            lines = [ln for ln in rss_file.read().split() if ln.isdigit()]
            if lines:
                maxrss = int(lines[-1])
    proc.returncode = os.waitstatus_to_exitcode(status)  # keep Popen from waiting again
    cpu = ru.ru_utime + ru.ru_stime
    foreign = max(0.0, (b1 - b0) / HZ - cpu) / (wall * NCPU) if wall > 0 else 0.0
    return wall, cpu, maxrss, proc.returncode, min(foreign, 1.0)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=0, help="untimed runs first (page cache, lazy binding)")
    ap.add_argument("--status", default="0", help="accepted exit statuses, comma-separated (default 0)")
    ap.add_argument("--stdout", default=os.devnull, help="where the command's standard output goes")
    ap.add_argument("--stderr", default=None, help="where the command's standard error goes (default: inherited)")
    ap.add_argument("--wait-idle", type=float, default=0.0, metavar="F",
                    help="before each run, wait until the machine is less than F busy (0-1; 0 = do not wait)")
    ap.add_argument("--max-wait", type=float, default=120.0, metavar="S", help="longest wait for idle (s)")
    ap.add_argument("--verbose", action="store_true")
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    args = ap.parse_args()
    cmd = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
    if not cmd or args.runs < 1:
        ap.error("need a command after -- and --runs >= 1")
    ok = {int(s) for s in args.status.split(",")}

    for _ in range(args.warmup):
        *_, rc, _ = run_once(cmd, args.stdout, args.stderr)
        if rc not in ok:
            print(f"measure: warm-up run exited {rc} (accepted: {args.status}): {' '.join(cmd)}", file=sys.stderr)
            return 3
    walls, cpus, rss, foreign = [], [], [], []
    busy0, _ = busy_jiffies()
    t_all = time.perf_counter()
    for i in range(args.runs):
        # wait before the first run, and after a (long enough to judge) run that had company; back-to-back quiet
        # runs stay back to back
        if args.wait_idle > 0 and (not walls or (walls[-1] >= SHORT and foreign[-1] >= args.wait_idle)):
            wait_idle(args.wait_idle, args.max_wait)
        wall, cpu, maxrss, rc, other = run_once(cmd, args.stdout, args.stderr)
        if rc not in ok:
            print(f"measure: run {i + 1} exited {rc} (accepted: {args.status}): {' '.join(cmd)}", file=sys.stderr)
            return 3
        walls.append(wall)
        cpus.append(cpu)
        rss.append(maxrss)
        foreign.append(other)
        if args.verbose:
            print(f"  run {i + 1}: {wall:.4f} s wall, {cpu:.4f} s cpu, {maxrss / 1024:.1f} MiB peak RSS, "
                  f"foreign load {other:.0%}", file=sys.stderr)
    # /proc/stat counts in clock ticks (10 ms): per-run figures mean nothing for runs of a few ms, so for short
    # runs report the load over the whole batch instead (its wall time includes the gaps between runs)
    if statistics.median(walls) < SHORT:
        busy1, _ = busy_jiffies()
        span = time.perf_counter() - t_all
        whole = max(0.0, (busy1 - busy0) / HZ - sum(cpus)) / (span * NCPU) if span > 0 else 0.0
        foreign = [min(whole, 1.0)]
    print(f"{statistics.median(walls):.6f} {min(walls):.6f} {max(walls):.6f} {statistics.median(cpus):.6f} "
          f"{max(rss)} {int(statistics.median(rss))} {args.runs} {statistics.median(foreign):.3f} {max(foreign):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
