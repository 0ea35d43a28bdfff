#!/usr/bin/env python3
"""Derive flood corpora (what an attacker sends) from an honest corpus written by make-corpus.py.

Python 3.11 with the `cryptography` package.

    python3 Benchmarks/make-floods.py --honest DIR [--out DIR] [-n N] [--max-n M]

Reads DIR/corpus.jsonl (Apple-shaped honest bodies, `make-corpus.py --shape apple`) and writes into --out
(default DIR) one file per flood, `flood-NAME.jsonl`, each line one item, every one built on Apple's bytes (the
header exactly `{"kid":"apple-cas-identifier\\/1","alg":"ES256"}` with the escaped slash, Apple's member orders):

  forged           the honest bodies with a different, well-formed signature (64 random bytes r||s, r and s < n):
                   Apple's exact shape, `bad-signature`
  unknown-kid      the honest bodies with the kid `apple-cas-identifier\\/7` (no such key): `unknown-key`
  malformed        cheap breakage in turn: a truncated body, a stray byte in the payload segment, a padded
                   segment, two segments, a header that is not JSON: `malformed-input`
  skan-1.0, skan-2.0, skan-2.2, skan-4.0
                   SKAdNetwork bodies of that version (members in Apple's order, as Apple's examples print them)
                   with a strict-DER random signature: `bad-signature` (S3); 1.0 and 2.0 against Apple's P-192 key,
                   2.2 tried over both signed orders (S6)
  nested           16 KiB bodies: a forged token plus `"x":[[0],[0],...]` (the issue's memory amplification)
  objects          16 KiB bodies: a forged token plus `"x":[{"a":0},{"a":0},...]`
  numbers          16 KiB bodies: a forged token plus `"x":[0,0,0,...]`
  members          16 KiB bodies: a forged token plus ~1,400 members `"m1":0,"m2":0,...`
  escapes          16 KiB bodies: a genuine token plus `"x":"\\u0041\\u00e9..."` (16 KiB of \\u escapes)
  long-number      16 KiB bodies: a genuine token plus `"x":` a 16,000-digit number

The amplification and maximum-size floods have M lines (--max-n, default N/4), the others N (default: all the
honest lines). Every 16 KiB body is exactly 16,384 bytes (the item cap) or a few bytes under.
"""
from __future__ import annotations

import argparse
import base64
import json
import random
import uuid
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

N_P256 = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551
N_P192 = 0xFFFFFFFFFFFFFFFFFFFFFFFF99DEF836146BC9B1B4D22831
CAP = 16 * 1024


def b64u(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def forge(line: str, rnd: random.Random) -> str:
    """The body with its signature replaced by a random well-formed one (same length, same bytes elsewhere)."""
    body = json.loads(line)
    token = body["jws-string"]
    head, payload, _ = token.split(".")
    sig = rnd.randrange(1, N_P256).to_bytes(32, "big") + rnd.randrange(1, N_P256).to_bytes(32, "big")
    return line.replace(token, f"{head}.{payload}.{b64u(sig)}", 1)


def unknown_kid(line: str) -> str:
    token = json.loads(line)["jws-string"]
    head = b64u(b'{"kid":"apple-cas-identifier\\/7","alg":"ES256"}')
    _, payload, sig = token.split(".")
    return line.replace(token, f"{head}.{payload}.{sig}", 1)


def malformed(line: str, i: int) -> str:
    token = json.loads(line)["jws-string"]
    head, payload, sig = token.split(".")
    kind = i % 5
    if kind == 0:
        return line[: len(line) // 2]
    if kind == 1:
        return line.replace(token, f"{head}.{payload[:40]}*{payload[41:]}.{sig}", 1)
    if kind == 2:
        return line.replace(token, f"{head}.{payload}.{sig}=", 1)
    if kind == 3:
        return line.replace(token, f"{head}.{sig}", 1)
    return line.replace(token, f"{b64u(b'{not json}')}.{payload}.{sig}", 1)


def der_signature(rnd: random.Random, order: int) -> str:
    return base64.b64encode(encode_dss_signature(rnd.randrange(1, order), rnd.randrange(1, order))).decode()


def skan(version: str, i: int, rnd: random.Random) -> str:
    """An SKAdNetwork postback of `version` in Apple's member order, with a random (strict DER) signature."""
    tid = str(uuid.UUID(int=rnd.getrandbits(128), version=4))
    order = N_P192 if version in ("1.0", "2.0") else N_P256
    body: dict = {"version": version, "ad-network-id": "example123.skadnetwork"}
    if version == "4.0":
        body.update({"source-identifier": str(rnd.randrange(1000, 10000)), "app-id": 525463029,
                     "transaction-id": tid, "redownload": False, "source-domain": "example.com",
                     "fidelity-type": 1, "did-win": True, "coarse-conversion-value": "high",
                     "postback-sequence-index": 0})
    else:
        body.update({"campaign-id": rnd.randrange(1, 100), "transaction-id": tid, "app-id": 525463029})
        if version != "1.0":
            body.update({"redownload": True, "source-app-id": 1234567891})
        if version == "2.2":
            body["fidelity-type"] = 1
        if version != "1.0":
            body["conversion-value"] = rnd.randrange(0, 64)
    body["attribution-signature"] = der_signature(rnd, order)
    return json.dumps(body, separators=(",", ":"))


def padded(line: str, member: str, unit: str, opening: str = "[", closing: str = "]", sep: str = ",") -> str:
    """`line` (a compact object) with `"member": opening unit sep unit ... closing` filling it up to the cap."""
    prefix = line[:-1] + f',"{member}":{opening}'
    room = CAP - len(prefix) - len(closing) - 1
    count = max(1, (room + len(sep)) // (len(unit) + len(sep)))
    return prefix + sep.join([unit] * count) + closing + "}"


def members(line: str) -> str:
    out = line[:-1]
    i = 0
    while True:
        nxt = f',"m{i}":0'
        if len(out) + len(nxt) + 1 > CAP:
            return out + "}"
        out += nxt
        i += 1


def escapes(line: str, rnd: random.Random) -> str:
    prefix = line[:-1] + ',"x":"'
    count = (CAP - len(prefix) - 2) // 6
    units = "".join(rnd.choice(("\\u0041", "\\u00e9", "\\u4e2d", "\\u002f", "\\u0022")) for _ in range(count))
    return prefix + units + '"}'


def long_number(line: str, rnd: random.Random) -> str:
    prefix = line[:-1] + ',"x":'
    digits = min(16_000, CAP - len(prefix) - 1)
    return prefix + str(rnd.randrange(1, 10)) + "".join(rnd.choice("0123456789") for _ in range(digits - 1)) + "}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="\n".join(__doc__.splitlines()[2:]))
    ap.add_argument("--honest", required=True, type=Path, help="a make-corpus.py directory (corpus.jsonl)")
    ap.add_argument("--out", type=Path, help="output directory (default: --honest)")
    ap.add_argument("-n", type=int, default=0, help="lines of the cheap floods (default: all honest lines)")
    ap.add_argument("--max-n", type=int, default=0, help="lines of the 16 KiB floods (default: n / 4)")
    ap.add_argument("--only", default="", help="comma-separated flood names (default: all)")
    args = ap.parse_args()
    honest = (args.honest / "corpus.jsonl").read_text().splitlines()
    n = args.n or len(honest)
    max_n = args.max_n or max(1, n // 4)
    out = args.out or args.honest
    out.mkdir(parents=True, exist_ok=True)
    rnd = random.Random(15)

    def line(i: int) -> str:
        return honest[i % len(honest)]

    floods = {
        "forged": lambda: (forge(line(i), rnd) for i in range(n)),
        "unknown-kid": lambda: (unknown_kid(line(i)) for i in range(n)),
        "malformed": lambda: (malformed(line(i), i) for i in range(n)),
        "skan-1.0": lambda: (skan("1.0", i, rnd) for i in range(n)),
        "skan-2.0": lambda: (skan("2.0", i, rnd) for i in range(n)),
        "skan-2.2": lambda: (skan("2.2", i, rnd) for i in range(n)),
        "skan-4.0": lambda: (skan("4.0", i, rnd) for i in range(n)),
        "nested": lambda: (padded(forge(line(i), rnd), "x", "[0]") for i in range(max_n)),
        "objects": lambda: (padded(forge(line(i), rnd), "x", '{"a":0}') for i in range(max_n)),
        "numbers": lambda: (padded(forge(line(i), rnd), "x", "0") for i in range(max_n)),
        "members": lambda: (members(forge(line(i), rnd)) for i in range(max_n)),
        "escapes": lambda: (escapes(line(i), rnd) for i in range(max_n)),
        "long-number": lambda: (long_number(line(i), rnd) for i in range(max_n)),
    }
    only = [name for name in args.only.split(",") if name] or list(floods)
    for name in only:
        lines = list(floods[name]())
        assert all(len(item.encode()) <= CAP for item in lines), name
        (out / f"flood-{name}.jsonl").write_text("\n".join(lines) + "\n")
        print(f"{name}: {len(lines)} lines", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
