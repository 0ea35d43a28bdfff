#!/usr/bin/env python3
"""Where each microsecond of an item goes, and how far each part is from its own limit (issue 25 item 2).

    python3 Benchmarks/profile.py --bin .build/release/postback-verify [--items 5000] [--runs 7]

Signs a fresh Apple-shaped corpus (make-corpus.py), then:
  1. times the command over it with `--jobs 1`, every thread on one processor (`taskset -c 0`), so the process's
     CPU time is the work of one core, and once over an empty file (start-up alone); the difference divided by the
     items is the CPU time of one item;
  2. profiles the same run with callgrind (instructions, not time) and splits the item's instructions into disjoint
     parts by the inclusive cost of the functions that do them (the ECDSA, SHA-256, base64url, JSON scanning, the
     record, the token cache, deduplication, reading; the rest of the fast path's pass is "the record and the
     rules"). SHA-256 is the exception: under valgrind libcrypto cannot use the processor's SHA instructions and
     runs its portable code, several times the instructions of the real run, so its microseconds are
     `openssl speed -evp sha256` over the same number of bytes; the other parts share the rest of the item's CPU
     time by their instructions: an approximation (the ECDSA's multiplications and the parsers' branches do not
     run at the same instructions per cycle), the best there is without hardware counters, which this VM does not
     expose;
  3. measures each part's limit on this machine in the same run: `openssl speed -evp sha256` for SHA-256 over the
     item's signing input, `openssl speed ecdsap256` for a generic P-256 verification, and the copy rate of
     `dd` from /dev/zero to /dev/null for reading and writing (a bound no parser or writer can beat); for base64url and
     JSON the published rates of SIMD decoders are named (no such code on this machine to run).

Prints Markdown with a one-line header (date, machine, load): `> Benchmarks/results/profile.md` keeps it.
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def cpu_seconds(command: list[str]) -> float:
    """User + system CPU seconds of one run of `command` (its children included)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _callgrind_summary():
    """callgrind-summary.py, whose callgrind_annotate parser and Swift demangling this script shares."""
    spec = importlib.util.spec_from_file_location("callgrind_summary", HERE / "callgrind-summary.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def callgrind_inclusive(profile: Path) -> tuple[int, dict[str, int]]:
    """Total instructions and each function's inclusive instructions (largest entry per demangled name)."""
    summary = _callgrind_summary()
    total, entries = summary.annotate(str(profile), True)
    demangled = summary.demangle_all({function for _, _, function, _ in entries})
    rows: dict[str, int] = {}
    for cost, _, function, _ in entries:
        key = demangled.get(function, function)
        rows[key] = max(rows.get(key, 0), cost)
    return total, rows


def largest(rows: dict[str, int], pattern: str) -> int:
    return max((cost for name, cost in rows.items() if re.search(pattern, name)), default=0)


def summed(rows: dict[str, int], pattern: str) -> int:
    return sum(cost for name, cost in rows.items() if re.search(pattern, name))


def openssl_rate(arguments: list[str], column: int) -> float:
    """A figure from the last line of `openssl speed ARGS` (column counted from the end)."""
    out = subprocess.run(["openssl", "speed", *arguments], capture_output=True, text=True, check=True).stdout
    last = [l for l in out.splitlines() if l.strip()][-1]
    return float(last.split()[column].rstrip("k"))


def dd_rate() -> float:
    """Bytes per second dd copies from /dev/zero to /dev/null in 64 KiB blocks (the rate of read(2)/write(2))."""
    out = subprocess.run(["dd", "if=/dev/zero", "of=/dev/null", "bs=64k", "count=40000"],
                         capture_output=True, text=True, check=True).stderr
    seconds = float(re.search(r"copied, ([\d.]+) s", out).group(1))
    return 40000 * 65536 / seconds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin", required=True)
    parser.add_argument("--items", type=int, default=5000)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    binary = str(Path(args.bin).resolve())

    with tempfile.TemporaryDirectory(prefix="postback-verify-profile.") as scratch:
        work = Path(scratch)
        subprocess.run([sys.executable, str(HERE / "make-corpus.py"), "--out", str(work), "-n", str(args.items)],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        corpus = work / "corpus.jsonl"
        empty = work / "empty.jsonl"
        empty.write_bytes(b"")
        key = f"{(work / 'kid').read_text().strip()}={work / 'key.pem'}"
        base = [binary, "--quiet", "--format", "jsonl", "--key", key, "--jobs", "1"]
        pinned = ["taskset", "-c", "0"]
        data = corpus.read_bytes()
        items = data.count(b"\n")
        body_bytes = len(data) / items
        # The signing input: the jws-string's header and payload segments (base64url), what SHA-256 reads.
        first = data.split(b"\n", 1)[0].decode()
        token = re.search(r'"jws-string":"([^"]+)"', first).group(1)
        signing_input = len(token.rsplit(".", 1)[0])
        token_bytes = len(token)
        records = subprocess.run(base + [str(corpus)], capture_output=True, check=False).stdout
        record_bytes = len(records) / items

        load = os.getloadavg()
        run_cpu = statistics.median(cpu_seconds(pinned + base + [str(corpus)]) for _ in range(args.runs))
        start_cpu = statistics.median(cpu_seconds(pinned + base + [str(empty)]) for _ in range(args.runs))
        item_us = 1e6 * (run_cpu - start_cpu) / items

        profile = work / "callgrind.out"
        subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={profile}"] + base + [str(corpus)],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        total, rows = callgrind_inclusive(profile)
        empty_profile = work / "callgrind-empty.out"
        subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={empty_profile}"] + base
                       + [str(empty)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        start_total, _ = callgrind_inclusive(empty_profile)

        sha_bytes_per_s = 1000 * openssl_rate(["-evp", "sha256", "-bytes", str(signing_input), "-seconds", "2"], -1)
        verify_per_s = openssl_rate(["-seconds", "2", "ecdsap256"], -1)
        copy_rate = dd_rate()

    per_item = (total - start_total) / items
    ecdsa = largest(rows, r"P256BatchVerifier\.verify")
    tables = largest(rows, r"P256KeyTable\.fill|P256KeyTable\.init")
    # G's table, when the run starts it on a thread of its own (P256KeyTables.anticipate), is built outside the
    # ECDSA's calls; the key's table inside them.
    tables_outside_ecdsa = min(tables, largest(rows, r"P256KeyTables\.anticipate"))
    sha = summed(rows, r"^SHA256_(Update|Final)$") or largest(rows, r"SHA256Digest\.init")
    base64 = summed(rows, r"Base64Alphabet\.decodeSignificant")
    json = summed(rows, r"FlatJSONScanner\.scan\(")
    cache = summed(rows, r"VerifiedTokenCache\.(insert|contains)")
    prepare = largest(rows, r"BatchVerifier\.prepare")
    dedupe = largest(rows, r"PostbackPipeline\.claim") + largest(rows, r"PostbackPipeline\.mark")
    reading = largest(rows, r"InputReader\.nextBatch")
    complete = largest(rows, r"BatchVerifier\.complete")
    record = max(0, prepare - sha - base64 - json - largest(rows, r"VerifiedTokenCache\.contains"))
    parts = [
        ("ECDSA (batched, tables: P256BatchVerifier)", ecdsa - (tables - tables_outside_ecdsa)),
        ("SHA-256 of the signing input", sha),
        ("base64url decoding", base64),
        ("JSON scanning (body, header, payload)", json),
        ("the record and the rules (the rest of the fast path's pass)", record),
        ("completing records (BatchVerifier.complete)", complete),
        ("verified-token cache", largest(rows, r"VerifiedTokenCache\.insert")),
        ("deduplication (claims, duplicate marking)", dedupe),
        ("reading and splitting lines", reading),
        ("tables of multiples (built once per run)", tables),
    ]
    named = sum(cost for _, cost in parts)
    item_instructions = total - start_total
    parts.append(("everything else (writing records into the output, threads, batches, allocation, ARC)",
                  max(0, item_instructions - named)))
    sha_us = 1e6 * signing_input / sha_bytes_per_s
    others = item_instructions - sha

    host = os.uname()
    model = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    print(f"# postback-verify: where an item's time goes, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; "
          f"{os.cpu_count()} cores, {model}, {host.sysname} {host.release}; load {load[0]:.2f} {load[1]:.2f} "
          f"{load[2]:.2f} before the runs")
    print()
    print(f"`Benchmarks/profile.py --items {args.items} --runs {args.runs}`, {binary}: an Apple-shaped corpus of "
          f"{items:,} distinct postbacks (one key; {body_bytes:.0f} bytes a body, a {signing_input}-byte signing "
          f"input, {record_bytes:.0f}-byte records), `--jobs 1` with every thread on one processor, dedupe on, "
          f"records to /dev/null.")
    print()
    print(f"One item costs **{item_us:.2f} µs** of CPU (median of {args.runs} runs: {run_cpu:.3f} s, less "
          f"{start_cpu:.3f} s of start-up measured alone, over {items:,} items) and {per_item:,.0f} instructions "
          f"under callgrind (start-up, {start_total:,} instructions, left out). SHA-256's µs are libcrypto's own "
          f"rate on these bytes (callgrind runs its portable code, not the SHA instructions the real run uses); "
          f"each other part's µs is its share of the other instructions times the rest of the item's time.")
    print()
    print("| part | instructions/item (callgrind) | share | µs/item | its limit on this machine | how far |")
    print("|---|---:|---:|---:|---|---|")
    limits = {
        "ECDSA (batched, tables: P256BatchVerifier)":
            (f"`openssl speed ecdsap256`: {1e6 / verify_per_s:.1f} µs a verification (generic: Q's multiples "
             f"computed afresh)", lambda us: f"{us / (1e6 / verify_per_s):.2f}× openssl's time"),
        "SHA-256 of the signing input":
            (f"`openssl speed -evp sha256 -bytes {signing_input}`: {1e6 * signing_input / sha_bytes_per_s:.2f} µs",
             lambda us: "at it (the same libcrypto call; its µs are this figure)"),
        "base64url decoding":
            (f"SIMD decoders (Muła and Lemire, 2018): ~3 GB/s, {token_bytes / 3000:.2f} µs for this token",
             lambda us: f"{us / (token_bytes / 3000):.0f}× ({token_bytes / us:.0f} bytes/µs)"),
        "JSON scanning (body, header, payload)":
            (f"simdjson (Langdale and Lemire, 2019): ~2.5 GB/s, {body_bytes / 2500:.2f} µs for this body",
             lambda us: f"{us / (body_bytes / 2500):.0f}× ({body_bytes / us:.0f} bytes/µs)"),
        "reading and splitting lines":
            (f"`dd` copy rate {copy_rate / 1e9:.1f} GB/s: {1e6 * body_bytes / copy_rate:.3f} µs for a body",
             lambda us: f"{us / (1e6 * body_bytes / copy_rate):.0f}× the copy"),
    }
    for label, cost in parts:
        share = cost / item_instructions
        if label == "SHA-256 of the signing input":
            us = sha_us
        else:
            us = cost / others * (item_us - sha_us) if others > 0 else 0
        limit, how = limits.get(label, ("-", None))
        print(f"| {label} | {cost / items:,.0f} | {100 * share:.1f} % | {us:.2f} | {limit} | "
              f"{how(us) if how and us > 0 else '-'} |")
    print()
    print("Reading the table: the ECDSA is most of an item and already a fraction of libcrypto's generic "
          "verification (tables of multiples, shared inversions, `P256KeyTable`); its own floor with this field "
          "code is the field arithmetic of 52 affine additions and a share of 26 inversions per signature, nearly "
          "all of `sums`. SHA-256 runs in libcrypto at its own speed. The parsers and the record are byte-at-a-time "
          "Swift, a few times from SIMD code's rates; reading is far above the copy rate because it splits lines and "
          "makes batches, but is a small part of an item. Writing a record is a copy into the output buffer inside "
          "the writer's loop (no function of its own to count) and one write(2) per 64 KiB.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
