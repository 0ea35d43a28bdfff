#!/usr/bin/env python3
"""Splits a `perf record -g` profile of postback-receiver into the parts of a request (issue 35 item 2).

    perf script -i perf.data -F comm,tid,ip,sym,dso | python3 profile-parts.py CPU_US_PER_REQUEST [LABEL]

Each sample (one millisecond of a thread's CPU, `cpu-clock`: this VM exposes no hardware counters) is given to
the part that owns it: walking its call chain from the leaf up, the first frame whose symbol belongs to a part's
family (below). Frames of the Swift runtime, libc, stdlib generics not specialised for a part, and the kernel are
skipped in that walk, so that a `swift_retain`, a `malloc` or a `write(2)` counts for the part that called it; the
sample's leaf then says whether it was the part's own code, the Swift runtime/libc it called, or the kernel. A sample
with no owning frame (executor hops, idle spinning, a kernel interrupt with no user stack) counts as "runtime". The
release binaries keep frame pointers, so the chains reach `start_thread` (up to the first `swift_job_run`: an async
function's callers are not on the stack, which is why the innermost frame decides).

Prints a Markdown table: per part, its share of the samples and its µs per request (share x CPU_US_PER_REQUEST, the
receiver's task-clock over the load divided by the requests answered), split own / runtime+libc / kernel.
"""
import re
import sys
from collections import Counter, defaultdict

PARTS = [
    # (part, regex on the frame's symbol or dso); the first part matched walking from the leaf owns the sample.
    ("request log", re.compile(r"LogHandler|BatchedLineWriter|RequestLogMiddleware|RequestOutcome|LineOutput|"
                               r"7Logging|LogRequestsMiddleware")),
    ("metrics", re.compile(r"ReceiverMetrics|RelayMetrics|DecodedCounters|QueueGauges|MetricsPage|Prometheus|"
                           r"CoreMetrics|7Metrics|MetricsMiddleware")),
    ("group commit (storage)", re.compile(r"AttributionStores|sqlite3|libsqlite|libpq|PQ[a-z]|pq[a-z]+_|"
                                          r"DurableSink|GroupQueue|ReceivedPostback|InvalidQuota|PostbackSink|"
                                          r"libz\.|deflate|crc32|fdatasync|fsync|pwrite|pread")),
    ("verification", re.compile(r"11Attribution|libcrypto|sha256|SHA256|ecdsa|EC_|BN_|FastPostbackPath|"
                                r"PostbackPipeline")),
    ("HTTP (NIO, Hummingbird)", re.compile(r"NIO|Hummingbird|HTTP|DequeModule|GuardHandler|ConnectionCounter|"
                                           r"ConnectionGuard|PostbackEndpoint|ReceiverRoute|ReceivedBody|"
                                           r"Readiness|ServiceLifecycle|AsyncAlgorithms")),
]
RUNTIME = re.compile(r"^swift_|^swift::|^_swift|^\$ss|^\$sS|^__swift|malloc|free|^_int_|^mem|^__mem|^str|"
                     r"pthread|dispatch|^__GI|^__libc|futex|^__lll|^cfree|^tcache|clock_gettime|^_?_?vdso|"
                     r"\[unknown\]|^operator new|^operator delete")
# What verification's samples do: the first of these walking up from the leaf (Attribution's types, libcrypto).
VERIFY_KINDS = [
    ("ECDSA P-256", re.compile(r"P256|JacobianPoint|ES256Signature|BatchVerifier|ecdsa|EC_|BN_")),
    ("token cache", re.compile(r"VerifiedTokenCache")),
    ("base64url", re.compile(r"Base64")),
    ("JSON and JWS parsing", re.compile(r"JSONScanner|JSONValue|JSONParser|CompactJWS|JWSHeader|ByteCursor")),
    ("SHA-256", re.compile(r"sha256|SHA256_|ThreadVerificationContextsC6sha256|SHA256DigestV2of|ContentFingerprint")),
    ("rules and records", re.compile(r"JSONLinesRecord|appendRecord|PostbackRules|Verdict|PostbackFacts|"
                                     r"DecodedConversion|Schema")),
]
NET = re.compile(r"tcp|inet|ip_|ipv4|sock|skb|net|ep_|epoll|loopback|__dev|napi|eth|sk_|dst_|nf_|neigh|xmit|"
                 r"syscall|vfs_|ksys_|iov|copy_|_copy|rw_verify")


def part_of(symbol, dso):
    text = symbol + " " + dso
    for name, pattern in PARTS:
        if pattern.search(text):
            return name
    return None


def samples(stream):
    frames, header = [], None
    for line in stream:
        line = line.rstrip("\n")
        if not line.strip():
            if header is not None:
                yield header, frames
            frames, header = [], None
            continue
        if not line.startswith(("\t", " ")):
            header = line
            frames = []
            continue
        match = re.match(r"^\s+([0-9a-f]+)\s+(.*?)\s+\((.*)\)$", line)
        if match:
            symbol = re.sub(r"\+0x[0-9a-f]+$", "", match.group(2))
            frames.append((symbol, match.group(3)))
    if header is not None:
        yield header, frames


def main():
    cpu_us = float(sys.argv[1])
    label = sys.argv[2] if len(sys.argv) > 2 else ""
    owner_kind = defaultdict(Counter)
    total = 0
    leaves = defaultdict(Counter)
    threads = Counter()
    thread_parts = defaultdict(Counter)
    records = []
    verify_kinds = Counter()
    for header, frames in samples(sys.stdin):
        if not frames:
            continue
        total += 1
        thread = " ".join(header.split()[:2]) if header else "?"
        leaf_symbol, leaf_dso = frames[0]
        kernel = "kernel" in leaf_dso
        owner = None
        for symbol, dso in frames:
            if "kernel" in dso:
                continue
            owner = part_of(symbol, dso)
            if owner:
                break
            # Any other frame (runtime, libc, a stdlib generic, an unnamed one): its caller decides.
        if owner is None:
            if kernel and NET.search(leaf_symbol) and not any("kernel" not in d for _, d in frames):
                owner = "HTTP (NIO, Hummingbird)"   # softirq/network with no user stack
            else:
                owner = "runtime (executor, scheduler, unowned)"
        if kernel:
            kind = "kernel"
        elif RUNTIME.search(leaf_symbol) or "libc" in leaf_dso or "libstdc++" in leaf_dso:
            kind = "runtime"
        elif part_of(leaf_symbol, leaf_dso) == owner or owner.startswith("runtime"):
            kind = "own"
        else:
            kind = "runtime"   # a stdlib/generic frame called by the part
        what = None
        if owner == "verification":
            for symbol, dso in frames:
                if "kernel" in dso:
                    continue
                what = next((name for name, pattern in VERIFY_KINDS if pattern.search(symbol + " " + dso)), None)
                if what:
                    break
            verify_kinds[what or "the fast path, pipeline, batching"] += 1
        records.append((thread, owner, kind, leaf_symbol[:70]))
    # A Dispatch thread for blocking work (*qos.overcommit) runs the stores' commits, in libraries without frame
    # pointers (libsqlite3, libpq): its samples whose chain stops before an owner go to the part that owns most of
    # its other samples.
    dominant = {}
    for thread, owner, _, _ in records:
        if "overcommit" in thread and not owner.startswith("runtime"):
            dominant.setdefault(thread, Counter())[owner] += 1
    for thread, owner, kind, leaf in records:
        if owner.startswith("runtime") and thread in dominant:
            owner = dominant[thread].most_common(1)[0][0]
        owner_kind[owner][kind] += 1
        threads[thread] += 1
        thread_parts[thread][owner] += 1
        leaves[owner][leaf] += 1
    order = [name for name, _ in PARTS] + ["runtime (executor, scheduler, unowned)"]
    print(f"{label}: {total} samples, {cpu_us:.1f} µs CPU per request\n")
    print("| part | share | µs/request | own code | Swift runtime + libc | kernel |")
    print("|---|---:|---:|---:|---:|---:|")
    for name in order:
        kinds = owner_kind.get(name, Counter())
        n = sum(kinds.values())
        if total == 0:
            continue
        us = lambda k: cpu_us * kinds[k] / total
        print(f"| {name} | {100 * n / total:.1f} % | {cpu_us * n / total:.2f} | {us('own'):.2f} | "
              f"{us('runtime'):.2f} | {us('kernel'):.2f} |")
    all_kinds = Counter()
    for kinds in owner_kind.values():
        all_kinds.update(kinds)
    print(f"| **total** | 100 % | {cpu_us:.2f} | {cpu_us * all_kinds['own'] / max(total, 1):.2f} | "
          f"{cpu_us * all_kinds['runtime'] / max(total, 1):.2f} | {cpu_us * all_kinds['kernel'] / max(total, 1):.2f} |")
    print()
    for name in order:
        top = leaves.get(name)
        if not top:
            continue
        items = ", ".join(f"`{s}` {100 * c / total:.1f} %" for s, c in top.most_common(4))
        print(f"- {name}, hottest leaves: {items}")
    print()
    if verify_kinds:
        items = ", ".join(f"{name} {cpu_us * n / total:.2f}" for name, n in verify_kinds.most_common())
        print(f"Verification by what it does (µs per request, with the runtime and kernel work each calls): {items}")
        print()
    print("By thread (name and id, as perf names them: NIO-SGLTN-* are the event loops, *default-qos the Swift")
    print("concurrency pool, *qos.overcommit Dispatch threads for blocking work such as the stores' commits):\n")
    print("| thread | share | µs/request | mostly |")
    print("|---|---:|---:|---|")
    for thread, n in threads.most_common(8):
        if n < 0.01 * total:
            break
        top = ", ".join(f"{p} {100 * c / n:.0f} %" for p, c in thread_parts[thread].most_common(2))
        print(f"| `{thread}` | {100 * n / total:.1f} % | {cpu_us * n / total:.2f} | {top} |")
    print()


if __name__ == "__main__":
    main()
