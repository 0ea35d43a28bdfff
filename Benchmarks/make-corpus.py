#!/usr/bin/env python3
"""Generate a benchmark corpus of signed AdAttributionKit postback bodies for postback-verify.

Python 3.11 with the `cryptography` package (the same as Fixtures/make-fixtures.py).

    python3 Benchmarks/make-corpus.py --out DIR [-n N] [--repeat K] [--order cycle|blocks] [--procs P]

Writes into DIR (created if missing):

  key.pem            the public key of a FRESH throw-away P-256 key (new on every run), for
                     `--key KID=DIR/key.pem`
  key.private.pem    its private key (only so a corpus can be extended or re-checked by hand)
  kid                the kid the tokens name (--kid, default apple-cas-identifier/1: production-like, a kid
                     Apple has not published, so the CLI accepts it with --key)
  corpus.jsonl       the items: one compact postback body (JSON object with `jws-string`) per line
  single.jsonl       one item (the first body), for the single-item wall-time run

--shape apple (default): the bytes as Apple serialises them (Apple's example postback, "Verifying a postback"):
the header exactly `{"kid":"apple-cas-identifier\/1","alg":"ES256"}` (the slash escaped, kid first), the
payload members in Apple's order (postback-identifier, publisher-item-identifier, marketplace-identifier,
impression-type, ad-network-identifier, did-win, postback-sequence-index, conversion-type, source-identifier,
advertised-item-identifier; absent ones left out) and the body's as in Apple's example (jws-string, the
conversion value, ad-interaction-type, country-code). The postbacks vary as real traffic does, every one valid
without warnings: tier 2 with a fine value (40 %), tier 3 with publisher item and country code (15 %), tier 1
with a coarse value (15 %), tier 0 without marketplace or values (5 %), windows 1 and 2 with a coarse value or
none (10 %), re-engagement (click, 8 %), nonwinning (7 %); `download`/`redownload`, a distinct upper-case UUID
`postback-identifier` per body, varying numbers. About 600-700 bytes a body.

--shape plain: the previous corpus (kid first but no escape, all tier 2 `download`/`redownload`, the
payload in this script's old member order), to compare with figures measured on it.

--mixed: a day's traffic as a receiver sees it: of the N lines, ~10 % are exact retries of an earlier line (Apple
retries a delivery with the same bytes; --retries SHARE changes the share, e.g. 0.03) and ~1 % forged (one
signature character changed); the rest distinct.

Repetition: `-n N --repeat K` signs N distinct bodies and writes N*K lines.
  --order cycle   (default) all N bodies, then all N again, ... (K rounds): every repeat is far from its first
                  occurrence, so a deduplicating run has to hold all N identifiers at once.
  --order blocks  each body K times in a row.
A repeated line is byte-identical to its first occurrence (same token, same signature), so with dedupe on
every repeat is a `duplicate` (D1) record; with `--no-dedupe` every line is a valid item again, but the CLI's
verified-token cache lets an exact repeat skip the ECDSA, so a repeated corpus is cheaper than a distinct one
and can hide memory that grows with distinct input. Use `--repeat 1` (default) with a large N when every line
must be distinct; signing runs at about 10,000-20,000 bodies per second per process (see --procs).
"""
from __future__ import annotations

import argparse
import base64
import json
import multiprocessing as mp
import os
import random
import sys
import time
import uuid
from pathlib import Path

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature

NET = "bench.adattributionkit"

_KEY: ec.EllipticCurvePrivateKey | None = None
_HEADER_B64 = ""
_UUID_HI = 0
_SHAPE = "apple"
_ALG = ec.ECDSA(hashes.SHA256())


def b64u(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def cj(v) -> str:
    return json.dumps(v, separators=(",", ":"), ensure_ascii=False)


def _init(pem: bytes, uuid_hi: int, kid: str, shape: str) -> None:
    global _KEY, _HEADER_B64, _UUID_HI, _SHAPE
    _KEY = serialization.load_pem_private_key(pem, password=None)
    header = cj({"kid": kid, "alg": "ES256"})
    if shape == "apple":
        header = header.replace("/", "\\/")  # Apple's serialiser escapes the solidus
    _HEADER_B64 = b64u(header.encode())
    _UUID_HI = uuid_hi
    _SHAPE = shape


def sign(payload: dict) -> str:
    p = b64u(cj(payload).encode())
    signing_input = f"{_HEADER_B64}.{p}".encode("ascii")
    r, s = decode_dss_signature(_KEY.sign(signing_input, _ALG))
    return f"{_HEADER_B64}.{p}.{b64u(r.to_bytes(32, 'big') + s.to_bytes(32, 'big'))}"


def apple_body(i: int, pid: str, rnd: random.Random) -> str:
    """A postback as Apple serialises it, of the kind `rnd` picks (every kind valid without warnings)."""
    roll = rnd.random()
    kind = ("tier2" if roll < 0.40 else "tier3" if roll < 0.55 else "tier1" if roll < 0.70 else
            "tier0" if roll < 0.75 else "window" if roll < 0.85 else "reengagement" if roll < 0.93 else "nonwinning")
    index = rnd.choice((1, 2)) if kind == "window" else 0
    digits = 2 if kind in ("tier1", "tier0", "window") else 4
    payload = {"postback-identifier": pid}
    if kind == "tier3":
        payload["publisher-item-identifier"] = rnd.choice((0, rnd.randrange(100_000_000, 10_000_000_000)))
    if kind != "tier0":
        payload["marketplace-identifier"] = "com.apple.AppStore"
    payload.update({
        "impression-type": "app-impression",
        "ad-network-identifier": NET,
        "did-win": kind != "nonwinning",
        "postback-sequence-index": index,
        "conversion-type": "re-engagement" if kind == "reengagement" else
        ("download" if rnd.random() < 0.8 else "redownload"),
        "source-identifier": str(rnd.randrange(10 ** (digits - 1), 10 ** digits)),
        "advertised-item-identifier": rnd.randrange(100_000_000, 10_000_000_000),
    })
    body = {"jws-string": sign(payload)}
    if kind in ("tier2", "tier3", "reengagement"):
        body["conversion-value"] = rnd.randrange(0, 64)
    elif kind == "tier1" or (kind == "window" and rnd.random() < 0.7):
        body["coarse-conversion-value"] = rnd.choice(("low", "medium", "high"))
    body["ad-interaction-type"] = "click" if kind == "reengagement" or i % 2 else "view"
    if kind == "tier3":
        body["country-code"] = rnd.choice(("US", "GB", "DE", "JP", "FR"))
    return cj(body)


def make_body(i: int) -> str:
    """The i-th distinct body (deterministic fields from i; signature randomised)."""
    rnd = random.Random(i)
    # distinct by construction: 64 random bits fixed for the run, then a bijection of the index on the low 62
    # bits (so the UUIDs look random); version 4 and the variant only touch bits outside those 62
    low = ((i + 1) * 0x9E3779B97F4A7C15) & ((1 << 62) - 1)
    pid = str(uuid.UUID(int=(_UUID_HI << 64) | low, version=4)).upper()
    if _SHAPE == "apple":
        return apple_body(i, pid, rnd)
    payload = {
        "postback-identifier": pid,
        "ad-network-identifier": NET,
        "advertised-item-identifier": rnd.randrange(100_000_000, 10_000_000_000),
        "conversion-type": "download" if rnd.random() < 0.8 else "redownload",
        "impression-type": "app-impression",
        "did-win": True,
        "postback-sequence-index": 0,
        "source-identifier": str(rnd.randrange(1000, 10000)),
        "marketplace-identifier": "com.apple.AppStore",
    }
    body = {
        "jws-string": sign(payload),
        "ad-interaction-type": "click" if i % 2 else "view",
        "conversion-value": rnd.randrange(0, 64),
    }
    return cj(body)


def _chunk(bounds: tuple[int, int]) -> list[str]:
    lo, hi = bounds
    return [make_body(i) for i in range(lo, hi)]


def _ranges(n: int, step: int) -> list[tuple[int, int]]:
    return [(lo, min(n, lo + step)) for lo in range(0, n, step)]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="\n".join(__doc__.splitlines()[2:]))
    ap.add_argument("--out", required=True, type=Path, help="output directory")
    ap.add_argument("-n", "--distinct", type=int, default=20_000, help="distinct bodies to sign (default 20000)")
    ap.add_argument("--repeat", type=int, default=1, help="write each distinct body K times (default 1)")
    ap.add_argument("--order", choices=("cycle", "blocks"), default="cycle",
                    help="how repeats are laid out (default cycle: 1..N, 1..N, ...)")
    ap.add_argument("--procs", type=int, default=os.cpu_count() or 1,
                    help="signing processes (default: all cores)")
    ap.add_argument("--name", default="corpus.jsonl", help="corpus file name inside --out")
    ap.add_argument("--kid", default="apple-cas-identifier/1", help="the kid the tokens name")
    ap.add_argument("--shape", choices=("apple", "plain"), default="apple",
                    help="apple (default): Apple's serialisation and a mix of postbacks; plain: the old corpus")
    ap.add_argument("--mixed", action="store_true",
                    help="~10%% of the lines exact retries of earlier ones, ~1%% forged signatures")
    ap.add_argument("--retries", type=float, default=0.10,
                    help="with --mixed: the share of lines that are exact retries (default 0.10)")
    ap.add_argument("--reuse-key", action="store_true",
                    help="sign with DIR/key.private.pem if it exists instead of a fresh key")
    args = ap.parse_args()
    if args.distinct < 1 or args.repeat < 1 or args.procs < 1:
        ap.error("-n, --repeat and --procs must be at least 1")

    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    priv_path = out / "key.private.pem"
    if args.reuse_key and priv_path.exists():
        pem = priv_path.read_bytes()
        key = serialization.load_pem_private_key(pem, password=None)
    else:
        key = ec.generate_private_key(ec.SECP256R1())
        pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption())
        priv_path.write_bytes(pem)
    (out / "key.pem").write_bytes(key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))
    (out / "kid").write_text(args.kid + "\n")

    uuid_hi = random.SystemRandom().getrandbits(64)
    init_args = (pem, uuid_hi, args.kid, args.shape)
    if args.mixed:
        return write_mixed(out / args.name, out / "single.jsonl", args.distinct, init_args, args.retries)
    n, k = args.distinct, args.repeat
    t0 = time.perf_counter()
    first = ""
    with open(out / args.name, "w", encoding="utf-8", newline="\n") as f:
        if args.procs == 1 or n < 2000:
            _init(*init_args)
            pool = None
            parts = (_chunk(r) for r in _ranges(n, 5000))
        else:
            pool = mp.get_context("fork").Pool(args.procs, initializer=_init, initargs=init_args)
            parts = pool.imap(_chunk, _ranges(n, 2000))  # in order, streamed: memory stays small for big N
        kept: list[str] = []
        try:
            for part in parts:
                first = first or part[0]
                if args.order == "blocks" or k == 1:
                    f.write("".join((b + "\n") * k for b in part))
                else:
                    kept.extend(part)  # cycle with repeats: needs all N before the second round
        finally:
            if pool is not None:
                pool.close()
                pool.join()
        t_sign = time.perf_counter() - t0
        if kept:
            block = "\n".join(kept) + "\n"
            for _ in range(k):
                f.write(block)
    (out / "single.jsonl").write_text(first + "\n", encoding="utf-8")
    t_all = time.perf_counter() - t0
    size = (out / args.name).stat().st_size
    print(f"make-corpus: {n} distinct x {args.repeat} ({args.order}) = {n * k} items, "
          f"{size / n / k:.0f} B/item, {size / 2**20:.1f} MiB -> {out / args.name}; "
          f"signed in {t_sign:.1f} s ({n / t_sign:,.0f}/s, {args.procs} procs), total {t_all:.1f} s",
          file=sys.stderr)
    return 0


def write_mixed(path: Path, single: Path, lines: int, init_args: tuple, retries: float = 0.10) -> int:
    """`lines` lines: distinct bodies, a `retries` share of exact retries of an earlier line, ~1 % forged (see
    --mixed). Written as signed, in order: memory holds the retries waiting for their turn, not the corpus."""
    if not 0 <= retries < 1:
        sys.exit("make-corpus: --retries must be at least 0 and below 1")
    rnd = random.Random(0x5EED)
    distinct = round(lines * (1 - retries))
    t0 = time.perf_counter()
    # A retry follows its original a few hundred lines later, as Apple retries after a failed delivery: waiting
    # retries by the line they are due at.
    waiting: dict[int, list[str]] = {}
    written = forged = repeated = 0
    first = ""
    with open(path, "w", encoding="utf-8", newline="\n") as f, \
            mp.get_context("fork").Pool(os.cpu_count() or 1, initializer=_init, initargs=init_args) as pool:
        def emit(body: str, retry: bool = False) -> None:
            nonlocal written, first, repeated
            if written < lines:
                f.write(body + "\n")
                first = first or body
                written += 1
                repeated += retry
            for due in waiting.pop(written, []):
                emit(due, True)
        for part in pool.imap(_chunk, _ranges(distinct, 2000)):
            for body in part:
                if rnd.random() < 0.01:
                    # One character of the signature segment changed (kept canonical base64url: not its last).
                    at = body.index('"', body.index('"jws-string":"') + 14) - 10
                    body = body[:at] + ("A" if body[at] != "A" else "B") + body[at + 1:]
                    forged += 1
                if rnd.random() < retries / (1 - retries):
                    waiting.setdefault(written + rnd.randrange(1, 500), []).append(body)
                emit(body)
        for due in sorted(waiting):
            for body in waiting[due]:
                if written < lines:
                    f.write(body + "\n")
                    written += 1
                    repeated += 1
    single.write_text(first + "\n", encoding="utf-8")
    print(f"make-corpus: mixed day, {written} lines: {written - repeated} distinct, {repeated} retries, "
          f"{forged} forged; {time.perf_counter() - t0:.1f} s -> {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
