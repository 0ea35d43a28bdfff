#!/usr/bin/env python3
"""Summarise a callgrind profile of postback-verify: top functions and where the instructions go.

    python3 Benchmarks/callgrind-summary.py CALLGRIND_OUT [--top 15] [--items N]

Needs `callgrind_annotate` (valgrind) and, for readable Swift names, `swift demangle` on PATH.

Prints (Markdown):
  * the top functions by inclusive and by self cost (Ir = instructions executed). Callgrind splits one Swift
    function into several file:function entries when code from other files is inlined into it; entries are
    merged by demangled name here (self: summed; inclusive: the largest entry, so nested parts are not
    counted twice);
  * stages by inclusive cost (the pieces of the per-item work that can be optimised separately);
  * self cost by category (sums to 100%).
The categories are heuristics on function names, source files and shared objects; see CATEGORIES below.
"""
from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
from collections import defaultdict

LINE = re.compile(r"^\s*([\d,]+) \(\s*[\d.]+%\)\s+(.*)$")


def annotate(path: str, inclusive: bool) -> tuple[int, list[tuple[int, str, str, str]]]:
    cmd = ["callgrind_annotate", "--auto=no", "--threshold=100", f"--inclusive={'yes' if inclusive else 'no'}", path]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, errors="replace").stdout
    total, rows = 0, []
    for line in out.splitlines():
        m = LINE.match(line)
        if not m:
            continue
        cost, rest = int(m.group(1).replace(",", "")), m.group(2)
        if rest.startswith("PROGRAM TOTALS"):
            total = cost
            continue
        obj = ""
        om = re.search(r" \[([^\]]*)\]$", rest)
        if om:
            obj, rest = om.group(1), rest[: om.start()]
        file, _, fn = rest.partition(":")
        rows.append((cost, file, re.sub(r"'\d+$", "", fn), obj))
    if not total:
        sys.exit("callgrind-summary: no PROGRAM TOTALS in callgrind_annotate output")
    return total, rows


def demangle_all(names: set[str]) -> dict[str, str]:
    names = sorted(n for n in names if n.startswith("$s"))
    if not names or not shutil.which("swift"):
        return {}
    out = subprocess.run(["swift", "demangle", "--simplified"], input="\n".join(names) + "\n",
                         capture_output=True, text=True, check=False).stdout.splitlines()
    return dict(zip(names, out)) if len(out) == len(names) else {}


def short_obj(obj: str) -> str:
    base = obj.rsplit("/", 1)[-1]
    return "postback-verify" if base == "postback-verify" else base


# (category, regex on "function", regex on "file", regex on "object"); first match wins; None = any
CATEGORIES: list[tuple[str, str | None, str | None, str | None]] = [
    ("libcrypto (ECDSA P-256 math, SHA-256, EVP/provider/DER glue)", None, None, r"libcrypto"),
    ("dynamic loading and process start-up", None, r"/elf/|dl-", r"ld-linux"),
    ("libc malloc/free", None, r"malloc/", None),
    ("libc memcpy/memset/memchr/str*", None, r"string/|multiarch", None),
    ("libc locks, I/O and other", None, None, r"libc\.so"),
    ("Swift ARC, object alloc/dealloc (runtime)",
     r"^swift_(retain|release|allocObject|deallocObject|deallocClassInstance|slowAlloc|slowDealloc|bridgeObject|"
     r"isUniquelyReferenced|arrayDestroy|arrayInit)|RefCounts|_swift_release_dealloc|tuple_destroy|"
     r"__deallocating_deinit|swift_beginAccess|swift_endAccess", None, None),
    ("UTF-8 string comparisons (String.utf8.elementsEqual: JSON member lookup, duplicate-name check, kids)",
     r"elementsEqual", None, None),
    ("JSON output formatting (records)",
     r"JSONValue\.write|writeQuoted|JSONLinesRecord|TextRecord|RecordRenderer|render\(|OutputWriter|StandardStream|"
     r"Summary", r"Output/|Serialization", None),
    ("JSON parsing (strict parser, objects, numbers)",
     r"StrictJSONParser|JSONObject|JSONNumber|JSONValue|JWSHeader|checkUnique", r"StrictJSONParser|JSONObject|JSONNumber|JSONValue\.swift|JWSHeader", None),
    ("base64url decoding", r"Base64", r"Base64", None),
    ("compact JWS splitting", r"CompactJWS", r"CompactJWS", None),
    ("input: file reading, line splitting, batches",
     r"LineItemReader|InputReader|ItemBatch|FileDescriptor|WholeFileReader|LineKind|OversizedLine|InputItem",
     r"/Input/|Pipeline/", None),
    ("rules, models, tiers, dedupe",
     r"Rule|Tier|Payload|PostbackBody|FieldReader|MessageLayout|MessageMember|ValueDomain|Deduplicat|ConversionType|"
     r"AdInteraction|"
     r"CoarseConversion|Finding", r"/Rules/|/Model/|Dedup", None),
    ("signature glue and key lookup (Swift side)",
     r"ECPublicKey|P1363|EVPPublicKey|SHA256|KeyRing|TrustedKey|JWSVerification|OpenSSLErrorQueue|VerifiedTokenCache",
     r"/Crypto/|/Keys/|JWSVerification|VerifiedTokenCache", None),
    ("verification driver (item/batch verifier, command)", r"AttributionVerifier|ItemVerifier|BatchVerifier|Command|Verdict|Verification",
     r"/Verify/|postback-verify/", None),
    ("Swift stdlib String/Array/Dictionary (not inlined)", None, None, r"libswiftCore|postback-verify"),
    ("other", None, None, None),
]


def categorise(fn: str, file: str, obj: str) -> str:
    for name, fre, filere, objre in CATEGORIES:
        if fre is None and filere is None and objre is None:
            return name
        if objre is not None and fre is None and filere is None:
            if re.search(objre, obj):
                return name
            continue
        if fre is not None and re.search(fre, fn):
            return name
        if filere is not None and re.search(filere, file):
            return name
        if objre is not None and fre is not None and re.search(objre, obj) and fre is None:
            return name
    return "other"


# Stages by inclusive cost: (label, regex on demangled function name); the largest matching entry is shown.
STAGES: list[tuple[str, str]] = [
    ("ECDSA_do_verify (the P-256 verification itself)", r"^ECDSA_do_verify$"),
    ("EVP_DigestVerify (hash + verify via EVP, incl. ECDSA)", r"^EVP_DigestVerify$"),
    ("EVP_PKEY_verify (verify of a precomputed digest via EVP, incl. ECDSA)", r"^EVP_PKEY_verify$"),
    ("batch ES256 (P256BatchVerifier, incl. EC_POINT_mul)", r"P256BatchVerifier\.verify"),
    ("EC_POINT_mul (u1·G + u2·Q, the point multiplication)", r"^EC_POINT_mul$"),
    ("fast path, one pass before the ECDSA (FastPostbackPath.prepare)", r"FastPostbackPath\.prepare"),
    ("EVP_DigestVerifyInit (per-item context set-up)", r"^EVP_DigestVerifyInit(_ex)?$"),
    ("EVP_PKEY_verify_init (context set-up)", r"^EVP_PKEY_verify_init(_ex)?$"),
    ("EVP_PKEY_CTX_new_from_pkey", r"^EVP_PKEY_CTX_new_from_pkey$"),
    ("SHA-256 (SHA256_Update + SHA256_Final)", r"^SHA256_(Update|Final)$"),
    ("i2d_ECDSA_SIG (raw r‖s to DER)", r"^i2d_ECDSA_SIG$"),
    ("d2i_PUBKEY (public key decoding)", r"^d2i_PUBKEY$"),
    ("verified-token cache: token digest (SHA256Digest.init)", r"^(specialized )?SHA256Digest\.init"),
    ("verified-token cache: set insert / lookup", r"VerifiedTokenCache\.(insert|contains)"),
    ("JSON parsing (StrictJSONParser.parse*)", r"StrictJSONParser\.(parse|init)"),
    ("JSON object member lookup (JSONObject.subscript)", r"JSONObject\.subscript"),
    ("base64url decoding", r"Base64.*decode|decode.*Base64"),
    ("record rendering (JSONLinesRecord.render)", r"JSONLinesRecord\.render|RecordRenderer"),
    ("JSONValue serialisation (write/writeQuoted)", r"JSONValue\.write"),
    ("line reading (LineItemReader)", r"LineItemReader"),
    ("dynamic linking (_dl_relocate_object / _dl_lookup_symbol_x)", r"^_dl_(relocate_object|lookup_symbol_x)$"),
]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("profile")
    ap.add_argument("--top", type=int, default=15)
    ap.add_argument("--items", type=int, default=0, help="items in the profiled run (adds Ir/item)")
    args = ap.parse_args()

    total, incl_rows = annotate(args.profile, True)
    _, self_rows = annotate(args.profile, False)
    dm = demangle_all({fn for _, _, fn, _ in incl_rows + self_rows})

    def name(fn: str, obj: str) -> str:
        n = dm.get(fn, fn)
        if n.startswith("0x") and obj:
            n = f"(unnamed {short_obj(obj)} code)"
        return n

    pct = lambda c: f"{100 * c / total:.2f}%"
    per = lambda c: f" | {c / args.items:,.0f}" if args.items else ""
    per_head = " | Ir/item" if args.items else ""
    per_sep = "|---:" if args.items else ""

    incl: dict[str, tuple[int, str]] = {}
    for cost, file, fn, obj in incl_rows:
        key = name(fn, obj)
        if key.startswith("(unnamed"):
            continue  # anonymous addresses cannot be merged meaningfully for inclusive cost
        if cost > incl.get(key, (0, ""))[0]:
            incl[key] = (cost, short_obj(obj))
    selfc: dict[str, list] = defaultdict(lambda: [0, ""])
    cats: dict[str, int] = defaultdict(int)
    for cost, file, fn, obj in self_rows:
        key = name(fn, obj)
        selfc[key][0] += cost
        selfc[key][1] = selfc[key][1] or short_obj(obj)
        cats[categorise(dm.get(fn, fn), file, obj)] += cost

    print(f"Total: {total:,} Ir" + (f" over {args.items:,} items ({total / args.items:,.0f} Ir/item, "
                                     f"start-up included)" if args.items else ""))
    print()
    print(f"### Top {args.top} by inclusive cost\n")
    print(f"| # | inclusive | Ir{per_head} | function | object |\n|---:|---:|---:{per_sep}|---|---|")
    for i, (k, (c, o)) in enumerate(sorted(incl.items(), key=lambda kv: -kv[1][0])[: args.top], 1):
        print(f"| {i} | {pct(c)} | {c:,}{per(c)} | `{k[:110]}` | {o} |")
    print()
    print(f"### Top {args.top} by self cost\n")
    print(f"| # | self | Ir{per_head} | function | object |\n|---:|---:|---:{per_sep}|---|---|")
    for i, (k, (c, o)) in enumerate(sorted(selfc.items(), key=lambda kv: -kv[1][0])[: args.top], 1):
        print(f"| {i} | {pct(c)} | {c:,}{per(c)} | `{k[:110]}` | {o} |")
    print()
    print("### Stages by inclusive cost\n")
    print(f"| stage | inclusive | Ir{per_head} |\n|---|---:|---:{per_sep}|")
    for label, rx in STAGES:
        best = 0
        for k, (c, _) in incl.items():
            if re.search(rx, k):
                best = max(best, c)
        if rx.startswith("^SHA256_"):
            best = sum(c for k, (c, _) in incl.items() if re.search(rx, k))
        if best >= total / 10000:
            print(f"| {label} | {pct(best)} | {best:,}{per(best)} |")
    print()
    print("### Self cost by category\n")
    print(f"| category | self | Ir{per_head} |\n|---|---:|---:{per_sep}|")
    for k, c in sorted(cats.items(), key=lambda kv: -kv[1]):
        if c < total / 10000:
            continue
        print(f"| {k} | {pct(c)} | {c:,}{per(c)} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
