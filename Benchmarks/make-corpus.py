#!/usr/bin/env python3
"""Generate a benchmark corpus of signed AdAttributionKit postback bodies for postback-verify.

Python 3.11 with the `cryptography` package (the same as Fixtures/make-fixtures.py).

    python3 Benchmarks/make-corpus.py --out DIR [-n N] [--repeat K] [--order cycle|blocks] [--procs P]

Writes into DIR (created if missing):

  key.pem            the public key of a FRESH throw-away P-256 key (new on every run), for
                     `--key bench-apple-identifier/0=DIR/key.pem`
  key.private.pem    its private key (only so a corpus can be extended or re-checked by hand)
  kid                the kid the tokens name: bench-apple-identifier/0
  corpus.jsonl       the items: one compact postback body (JSON object with `jws-string`) per line
  single.jsonl       one item (the first body), for the single-item wall-time run

Every distinct body is a valid postback that raises no warning: winning (`did-win` true), index 0,
`download` or `redownload`, `marketplace-identifier` com.apple.AppStore, a 4-digit `source-identifier`
and a fine `conversion-value` 0-63 (tier 2; no coarse value, so no T5), `ad-interaction-type` `click` or
`view`, a distinct upper-case UUID `postback-identifier` per body, and a few other varying numbers. A compact
body is about 640 bytes (the pretty fixture bodies are ~680).

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

KID = "bench-apple-identifier/0"
NET = "bench.adattributionkit"

_KEY: ec.EllipticCurvePrivateKey | None = None
_HEADER_B64 = ""
_UUID_HI = 0
_ALG = ec.ECDSA(hashes.SHA256())


def b64u(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def cj(v) -> str:
    return json.dumps(v, separators=(",", ":"), ensure_ascii=False)


def _init(pem: bytes, uuid_hi: int) -> None:
    global _KEY, _HEADER_B64, _UUID_HI
    _KEY = serialization.load_pem_private_key(pem, password=None)
    _HEADER_B64 = b64u(cj({"kid": KID, "alg": "ES256"}).encode())
    _UUID_HI = uuid_hi


def make_body(i: int) -> str:
    """The i-th distinct body (deterministic fields from i; signature randomised)."""
    rnd = random.Random(i)
    # distinct by construction: 64 random bits fixed for the run, then a bijection of the index on the low 62
    # bits (so the UUIDs look random); version 4 and the variant only touch bits outside those 62
    low = ((i + 1) * 0x9E3779B97F4A7C15) & ((1 << 62) - 1)
    pid = str(uuid.UUID(int=(_UUID_HI << 64) | low, version=4)).upper()
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
    p = b64u(cj(payload).encode())
    signing_input = f"{_HEADER_B64}.{p}".encode("ascii")
    r, s = decode_dss_signature(_KEY.sign(signing_input, _ALG))
    sig = b64u(r.to_bytes(32, "big") + s.to_bytes(32, "big"))
    body = {
        "jws-string": f"{_HEADER_B64}.{p}.{sig}",
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
    (out / "kid").write_text(KID + "\n")

    uuid_hi = random.SystemRandom().getrandbits(64)
    n, k = args.distinct, args.repeat
    t0 = time.perf_counter()
    first = ""
    with open(out / args.name, "w", encoding="utf-8", newline="\n") as f:
        if args.procs == 1 or n < 2000:
            _init(pem, uuid_hi)
            pool = None
            parts = (_chunk(r) for r in _ranges(n, 5000))
        else:
            pool = mp.get_context("fork").Pool(args.procs, initializer=_init, initargs=(pem, uuid_hi))
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


if __name__ == "__main__":
    sys.exit(main())
