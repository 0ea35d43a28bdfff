#!/usr/bin/env python3
"""Generate the postback-verify test fixtures.

Run from anywhere (Python 3.11, needs only the `cryptography` package):

    python3 Fixtures/make-fixtures.py [--vectors DIR]

What it does
  * Fixtures/keys/: creates three P-256 and one P-192 TEST-ONLY key pairs, but only if the files are
    missing, so re-running keeps the same keys (delete the files to rotate them).
  * Fixtures/valid/, Fixtures/invalid/, Fixtures/dedupe/, Fixtures/skadnetwork/: deleted and written
    again. ECDSA signatures are randomised, so the tokens change on every run; names, payloads, manifest
    and README do not.
  * Fixtures/{valid,invalid}/apple/ and Fixtures/{valid,invalid}/skadnetwork-apple/: byte-exact copies of
    Apple's documentation examples from DIR/apple and DIR/skadnetwork (default: the in-repository copy
    Tests/AttributionTests/Vectors/reference, or $POSTBACK_VERIFY_VECTORS). If DIR is not there, the copies already in Fixtures/ are
    kept; either way their SHA-256 is checked.
  * Fixtures/skadnetwork/: SKAdNetwork 1.0 to 4.0 postbacks signed with the test-only SKAdNetwork keys,
    which the verifier loads with --skadnetwork-key-p256 / --skadnetwork-key-p192 (Apple's private keys
    are not available). The signed strings are built here from the spec's section 9 table, not by the
    verifier.
  * Fixtures/manifest.json and Fixtures/README.md: the expected result of every item, from one table.

The expected results are written down by hand below, from the specification
(the product specification of AdAttributionKit and the CLI contract), not computed by any verifier.
"""
from __future__ import annotations

import argparse
import base64
import hashlib
import json
import os
import shutil
import sys
import uuid
from pathlib import Path

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature, encode_dss_signature

HERE = Path(__file__).resolve().parent
KEYS = HERE / "keys"

# P-256 group order
N = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551
# P-192 group order
N192 = 0xFFFFFFFFFFFFFFFFFFFFFFFF99DEF836146BC9B1B4D22831

NET = "fixture.adattributionkit"            # ad network ID = impression kid
APPLE_KID = "fixture-apple-identifier/0"    # stands in for Apple's postback kid
U64_MAX = 2**64 - 1
TS = 1719599957239                          # 2024-06-28T18:39:17.239Z (Apple's example timestamp)
TS_2100 = 4102444800000                     # 2100-01-01T00:00:00Z

APPLE_COPIES = {
    # source file in vectors/apple -> (destination, sha256)
    "postback-development-valid.json": (
        "valid/apple/postback-development-valid.json",
        "cf33800d98584d08f3ca066bb0786c94b2c888146bb1e40de6893add40ee4fe8"),
    "postback-production-bad-signature.json": (
        "invalid/apple/postback-production-bad-signature.json",
        "261832025f9cd3a5fa62c0f0d56b4a889618a28c3803de13ac87c0cf04c6d436"),
    "impression-example.jws": (
        "invalid/apple/impression-example.jws",
        "5c46322b04265127722bbd4bb2610921b15b98125416b7ee0917c1daf18b660a"),
}

SKAN_COPIES = {
    # source file in vectors/skadnetwork -> (destination, sha256)
    "4.0-fine-value-valid.json": (
        "valid/skadnetwork-apple/4.0-fine-value-valid.json",
        "a667e2374206eafb083f9df41e0494557570c0e0ca6fc4005ba06dfe7e06f475"),
    "4.0-coarse-value-valid.json": (
        "valid/skadnetwork-apple/4.0-coarse-value-valid.json",
        "e16b79fa2a6b4730ecebc56a62c914fa34b6705fe83bf1bc97c918b86b89afb4"),
    "3.0-winning-valid.json": (
        "valid/skadnetwork-apple/3.0-winning-valid.json",
        "ca5818f55ba7d35c69df74a1b1f5c729915d2e48c81c1409808a5bfc8b67bb7f"),
    "3.0-nonwinning-valid.json": (
        "valid/skadnetwork-apple/3.0-nonwinning-valid.json",
        "a44d53824265c35859ff99184016f2f3f49263f771fa1ed72764cecd995622a4"),
    "2.2-valid.json": (
        "valid/skadnetwork-apple/2.2-valid.json",
        "2f022382071d0717fb39054da403e41832ed57fd62b370145ec12c630daac6fd"),
    "2.1-valid.json": (
        "valid/skadnetwork-apple/2.1-valid.json",
        "d972cc8399a70ff35fb76a5e3403efd0b69ec61af98591d84a1df55c38ab420f"),
    "2.0-placeholder-signature-invalid.json": (
        "invalid/skadnetwork-apple/2.0-placeholder-signature-invalid.json",
        "1bac82c031e5fc9b4338989c1051c20d6d835cc4020e61b1bf3af04afb5d6e66"),
    "1.0-placeholder-signature-invalid.json": (
        "invalid/skadnetwork-apple/1.0-placeholder-signature-invalid.json",
        "4fb710c459d8934e9bf9a560c302b38657ae42e75e4d78f34ce027306d3a5bda"),
}

CODES = {
    "J1": "malformed-input", "J2": "unsupported-algorithm", "J3": "unknown-key",
    "J4": "untrusted-key", "J5": "bad-signature",
    "P1": "invalid-field", "P2": "invalid-field", "P3": "invalid-field", "P4": "invalid-field",
    "U1": "invalid-unsigned-field", "U2": "invalid-unsigned-field", "U3": "invalid-unsigned-field",
    "I1": "invalid-field", "D1": "duplicate",
    "S1": "unsupported-version", "S2": "invalid-field", "S3": "bad-signature", "S4": "invalid-field",
    "S5": "invalid-unsigned-field",
}
WARN_RULES = {"P5", "U4", "U5", "T1", "T2", "T3", "T4", "T5", "T6", "I2", "I3", "S6", "D2"}

KEY_FLAGS = (f"--key {NET}=Fixtures/keys/{NET}.pem "
             f"--key {APPLE_KID}=Fixtures/keys/fixture-apple-identifier-0.pem")
CMD_VALID = f"postback-verify --allow-development {KEY_FLAGS} --expect valid Fixtures/valid"
CMD_INVALID = f"postback-verify {KEY_FLAGS} --expect invalid Fixtures/invalid"
CMD_DEDUPE = f"postback-verify --format jsonl {KEY_FLAGS} Fixtures/dedupe"
SKAN_KEY_FLAGS = ("--skadnetwork-key-p256 Fixtures/keys/fixture-skadnetwork-p256.pem "
                  "--skadnetwork-key-p192 Fixtures/keys/fixture-skadnetwork-p192.pem")
CMD_SKAN_VALID = f"postback-verify {SKAN_KEY_FLAGS} --expect valid Fixtures/skadnetwork/valid"
CMD_SKAN_INVALID = f"postback-verify {SKAN_KEY_FLAGS} --expect invalid Fixtures/skadnetwork/invalid"
CMD_SKAN_DEDUPE = f"postback-verify --format jsonl {SKAN_KEY_FLAGS} Fixtures/skadnetwork/dedupe"


# ----------------------------------------------------------------------------------------- keys

def load_or_create(stem: str, curve: ec.EllipticCurve = ec.SECP256R1()) -> ec.EllipticCurvePrivateKey:
    priv_path = KEYS / f"{stem}.private.pem"
    pub_path = KEYS / f"{stem}.pem"
    KEYS.mkdir(parents=True, exist_ok=True)
    if priv_path.exists():
        key = serialization.load_pem_private_key(priv_path.read_bytes(), password=None)
        assert isinstance(key, ec.EllipticCurvePrivateKey) and key.curve.name == curve.name, priv_path
    else:
        key = ec.generate_private_key(curve)
        priv_path.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                                serialization.PrivateFormat.PKCS8,
                                                serialization.NoEncryption()))
        print(f"created {priv_path.relative_to(HERE)}")
    pub = key.public_key().public_bytes(serialization.Encoding.PEM,
                                        serialization.PublicFormat.SubjectPublicKeyInfo)
    if not pub_path.exists() or pub_path.read_bytes() != pub:
        pub_path.write_bytes(pub)
        print(f"wrote {pub_path.relative_to(HERE)}")
    return key


# ------------------------------------------------------------------------------- JSON and JWS

class Raw(str):
    """JSON text inserted verbatim (for numbers like 1e0, 01, escaped slashes, ...)."""


class Pairs(list):
    """An object as an ordered list of (name, value) pairs; allows duplicate names."""


DROP = object()  # marks a member to leave out


def cj(v) -> str:
    """Compact JSON."""
    if isinstance(v, Raw):
        return str(v)
    if isinstance(v, Pairs):
        return "{" + ",".join(json.dumps(k, ensure_ascii=False) + ":" + cj(x) for k, x in v) + "}"
    if isinstance(v, dict):
        return cj(Pairs(v.items()))
    if isinstance(v, list):
        return "[" + ",".join(cj(x) for x in v) + "]"
    return json.dumps(v, ensure_ascii=False)


def pj(v) -> str:
    """Pretty JSON for a flat top-level object (bodies): one member per line, values compact."""
    items = list(v) if isinstance(v, Pairs) else list(v.items())
    if not items:
        return "{}\n"
    return "{\n" + ",\n".join(f"  {json.dumps(k, ensure_ascii=False)}: {cj(x)}" for k, x in items) + "\n}\n"


def b64u(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


def sign_rs(key, message: bytes) -> tuple[int, int]:
    return decode_dss_signature(key.sign(message, ec.ECDSA(hashes.SHA256())))


def raw_sig(r: int, s: int, *, high_s: bool | None = None) -> bytes:
    if high_s is True and s <= N // 2:
        s = N - s
    if high_s is False and s > N // 2:
        s = N - s
    return r.to_bytes(32, "big") + s.to_bytes(32, "big")


def header_text(kid=APPLE_KID, alg="ES256") -> str:
    return cj({"kid": kid, "alg": alg})


def as_bytes(x) -> bytes:
    if isinstance(x, bytes):
        return x
    if isinstance(x, str):
        return x.encode("utf-8")
    return cj(x).encode("utf-8")


def segments(header, payload) -> tuple[str, str]:
    return b64u(as_bytes(header)), b64u(as_bytes(payload))


def sign_segments(key, h: str, p: str, *, high_s=None) -> str:
    r, s = sign_rs(key, f"{h}.{p}".encode("ascii"))
    return b64u(raw_sig(r, s, high_s=high_s))


def jws(payload, *, key=None, header=None, high_s=None) -> str:
    key = key or APPLE
    h, p = segments(header if header is not None else header_text(), payload)
    return f"{h}.{p}.{sign_segments(key, h, p, high_s=high_s)}"


def uid(name: str, upper=True) -> str:
    u = str(uuid.uuid5(uuid.NAMESPACE_URL, "postback-verify-fixture:" + name))
    return u.upper() if upper else u


def merge(base: dict, over: dict) -> dict:
    out = dict(base)
    for k, v in over.items():
        if v is DROP:
            out.pop(k, None)
        else:
            out[k] = v
    return out


def postback(name: str, **over) -> dict:
    """A signed postback payload; keyword names use _ for -, DROP removes a member."""
    base = {
        "postback-identifier": uid(name),
        "ad-network-identifier": NET,
        "advertised-item-identifier": 1108187390,
        "conversion-type": "download",
        "impression-type": "app-impression",
        "did-win": True,
        "postback-sequence-index": 0,
        "source-identifier": "12",
        "marketplace-identifier": "com.apple.AppStore",
    }
    return merge(base, {k.replace("_", "-"): v for k, v in over.items()})


def impression(name: str, **over) -> dict:
    base = {
        "impression-identifier": uid(name),
        "publisher-item-identifier": 5838492,
        "impression-type": "app-impression",
        "ad-network-identifier": NET,
        "source-identifier": 5239,
        "timestamp": TS,
        "advertised-item-identifier": 1108187390,
    }
    return merge(base, {k.replace("_", "-"): v for k, v in over.items()})


def body(token, **unsigned) -> dict:
    """A postback body: jws-string first, then the unsigned members (default ad-interaction-type view)."""
    out = {"jws-string": token, "ad-interaction-type": "view"}
    return merge(out, {k.replace("_", "-"): v for k, v in unsigned.items()})


# ------------------------------------------------------------------------------------ registry

ENTRIES: list[dict] = []
FILES: dict[str, bytes] = {}


def add(path: str, content, *, rule=None, warnings=(), kind="postback", what: str, tier=None,
        signature=None, kind_certain=True, line=1, environment=None, duplicate_of=None, verdict=None,
        key_id=None, signed_string=None):
    if isinstance(content, str):
        content = content.encode("utf-8")
    if content is not None:
        assert path not in FILES, f"duplicate fixture path {path}"
        FILES[path] = content
    top = path.split("/")[0]
    skan_test_keys = top == "skadnetwork"
    folder = path.split("/")[1] if skan_test_keys else top  # skadnetwork/valid/... is checked like valid/
    if verdict is None:
        verdict = "valid" if rule is None else "invalid"
    if folder == "valid":
        assert verdict == "valid", path
    if folder == "invalid":
        assert verdict == "invalid", path
    assert all(w in WARN_RULES for w in warnings), path
    if signature is None:
        if rule is None or rule[0] in "PUID" or rule in ("S4", "S5"):
            signature = "verified"
        elif rule in ("J5", "S3"):
            signature = "failed"
        else:
            signature = "not-checked"  # J1 before the signature (pass signature= for payload J1), J2-J4
    if verdict == "valid":
        assert rule is None
        environment = environment or "custom"
        if kind == "postback":
            assert tier is not None, f"{path}: a valid postback needs its tier"
    entry = {
        "path": path,
        "line": line,
        "verdict": verdict,
        "code": CODES[rule] if rule else None,
        "rule": rule,
        "warnings": sorted(warnings),
        "allowDevelopment": top == "valid",
        "kind": kind,
        "kindCertain": kind_certain,
        "signature": signature,
        "tier": tier if verdict == "valid" and kind == "postback" else None,
        "what": what,
    }
    if environment and verdict == "valid":
        entry["environment"] = environment
    if duplicate_of is not None:
        entry["duplicateOf"] = duplicate_of
    if skan_test_keys:
        entry["skadnetworkTestKeys"] = True
    if key_id is not None:
        entry["keyID"] = key_id
    if signed_string is not None:
        entry["signedString"] = signed_string
    ENTRIES.append(entry)


def jws_file(token: str) -> str:
    return token + "\n"


# =========================================================================================== VALID

def valid_postback_bodies():
    d = "valid/postback/"

    def vb(name, tier, what, *, warnings=(), payload=None, unsigned=None, high_s=None, header=None,
           content=None):
        p = payload if payload is not None else postback(d + name)
        tok = jws(p, high_s=high_s, header=header)
        b = body(tok, **(unsigned or {}))
        add(d + name, content(b) if content else pj(b), tier=tier, warnings=warnings, what=what)

    n = "tier0-index0-download-no-marketplace.json"
    vb(n, 0, "tier 0: no marketplace-identifier, 2-digit source, no value",
       payload=postback(d + n, marketplace_identifier=DROP))
    n = "tier0-index1-no-marketplace.json"
    vb(n, 0, "index 1 without marketplace-identifier: no rule forbids it, lowest tier 0",
       payload=postback(d + n, marketplace_identifier=DROP, postback_sequence_index=1))
    vb("tier1-index0-no-value.json", 1, "tier 1: marketplace, 2-digit source, no value")
    vb("tier1-index0-coarse-low.json", 1, "coarse low at index 0", unsigned={"coarse-conversion-value": "low"})
    n = "tier1-index0-coarse-medium-redownload.json"
    vb(n, 1, "redownload, coarse medium", payload=postback(d + n, conversion_type="redownload"),
       unsigned={"coarse-conversion-value": "medium"})
    n = "tier1-index1-coarse-high.json"
    vb(n, 1, "second postback (index 1), coarse high", payload=postback(d + n, postback_sequence_index=1),
       unsigned={"coarse-conversion-value": "high"})
    n = "tier1-index2-coarse-low.json"
    vb(n, 1, "third postback (index 2), coarse low", payload=postback(d + n, postback_sequence_index=2),
       unsigned={"coarse-conversion-value": "low"})
    n = "tier1-index2-no-value-click.json"
    vb(n, 1, "index 2, no value, ad-interaction-type click",
       payload=postback(d + n, postback_sequence_index=2), unsigned={"ad-interaction-type": "click"})
    n = "tier2-index0-fine-0-source-123.json"
    vb(n, 2, "fine value 0 (lower bound), 3-digit source", payload=postback(d + n, source_identifier="123"),
       unsigned={"conversion-value": 0})
    n = "tier2-index0-fine-63-source-1234.json"
    vb(n, 2, "fine value 63 (upper bound), 4-digit source", payload=postback(d + n, source_identifier="1234"),
       unsigned={"conversion-value": 63})
    vb("tier2-index0-fine-2digit-source.json", 2, "fine value with a 2-digit source id",
       unsigned={"conversion-value": 17})
    n = "tier2-index0-4digit-source-no-value.json"
    vb(n, 2, "4-digit source id, no conversion value", payload=postback(d + n, source_identifier="9876"))
    n = "tier3-index0-publisher-item-and-country.json"
    vb(n, 3, "tier 3: publisher-item-identifier (signed), country-code US (unsigned), fine 24",
       payload=postback(d + n, source_identifier="1234", publisher_item_identifier=5838492),
       unsigned={"conversion-value": 24, "country-code": "US"})
    n = "tier3-index0-country-only.json"
    vb(n, 3, "tier 3 by country-code alone (DE), fine value",
       payload=postback(d + n, source_identifier="1234"), unsigned={"conversion-value": 5, "country-code": "DE"})
    n = "tier3-index0-publisher-item-0.json"
    vb(n, 3, "publisher-item-identifier 0 (as in development postbacks)",
       payload=postback(d + n, source_identifier="4321", publisher_item_identifier=0),
       unsigned={"conversion-value": 9})
    n = "tier3-index0-publisher-item-max.json"
    vb(n, 3, "publisher-item-identifier 2^64-1 (upper bound)",
       payload=postback(d + n, source_identifier="4321", publisher_item_identifier=U64_MAX),
       unsigned={"conversion-value": 9})
    n = "tier3-index0-publisher-item-no-value.json"
    vb(n, 3, "publisher-item-identifier, 2-digit source, no value",
       payload=postback(d + n, publisher_item_identifier=77))
    n = "re-engagement-click-fine.json"
    vb(n, 2, "conversion-type re-engagement, did-win true, click, fine value",
       payload=postback(d + n, conversion_type="re-engagement", source_identifier="1234"),
       unsigned={"ad-interaction-type": "click", "conversion-value": 3})
    n = "re-engagement-click-coarse.json"
    vb(n, 1, "re-engagement, click, coarse high",
       payload=postback(d + n, conversion_type="re-engagement"),
       unsigned={"ad-interaction-type": "click", "coarse-conversion-value": "high"})
    n = "nonwinning-index0-download.json"
    vb(n, 1, "did-win false, index 0, no value", payload=postback(d + n, did_win=False))
    n = "nonwinning-index0-redownload-4digit-source.json"
    vb(n, 2, "did-win false, redownload, 4-digit source, no value",
       payload=postback(d + n, did_win=False, conversion_type="redownload", source_identifier="4321"))
    n = "advertised-item-above-2-32.json"
    vb(n, 1, "advertised-item-identifier 10738027756 (> 2^32)",
       payload=postback(d + n, advertised_item_identifier=10738027756))
    n = "advertised-item-max.json"
    vb(n, 1, "advertised-item-identifier 2^64-1", payload=postback(d + n, advertised_item_identifier=U64_MAX))
    n = "advertised-item-0.json"
    vb(n, 1, "advertised-item-identifier 0", payload=postback(d + n, advertised_item_identifier=0))
    n = "unknown-extra-signed-field.json"
    vb(n, 1, "unknown extra signed payload field (kept, not an error)",
       payload=postback(d + n, fixture_future_field={"nested": [1, "two", True, None]}))
    vb("unknown-extra-unsigned-member.json", 1, "unknown extra unsigned body member (kept, not an error)",
       unsigned={"fixture-extra-unsigned": {"note": "unsigned extra", "n": 1}})
    n = "non-ascii-extra-signed-field.json"
    vb(n, 1, "UTF-8 (non-ASCII) text in an extra signed field",
       payload=postback(d + n, fixture_note="caf\u00e9 \u2603 \U0001F600"))
    n = "postback-identifier-lowercase.json"
    vb(n, 1, "lowercase UUID postback-identifier", payload=postback(d + n, postback_identifier=uid(d + n, False)))
    vb("kid-escaped-slash-in-header.json", 1,
       "header kid written \"fixture-apple-identifier\\/0\": compared after JSON decoding",
       header=Raw('{"kid":"fixture-apple-identifier\\/0","alg":"ES256"}'))
    vb("header-extra-members-ignored.json", 1,
       "header with typ and jku members: ignored, the jku key is never fetched",
       header=Raw('{"kid":"fixture-apple-identifier/0","typ":"JWT",'
                  '"jku":"https://attacker.invalid/keys.json","alg":"ES256"}'))
    vb("high-s-signature.json", 1, "signature with s > n/2 (high-S is valid)", high_s=True)
    vb("low-s-signature.json", 1, "signature with s <= n/2", high_s=False)
    n = "payload-nesting-16.json"
    vb(n, 1, "payload nesting depth exactly 16 (object + 15 arrays): allowed",
       payload=postback(d + n, fixture_nesting=Raw("[" * 15 + "0" + "]" * 15)))
    vb("compact-one-line-body.json", 1, "body as compact one-line JSON", content=lambda b: cj(b) + "\n")
    vb("body-no-trailing-newline.json", 1, "body file without a trailing newline",
       content=lambda b: pj(b).rstrip("\n"))
    # exactly 16 KiB: allowed (only "over 16 KiB" is rejected)
    n = "size-exactly-16384-bytes.json"
    b = body(jws(postback(d + n)), fixture_padding="")
    pad = 16384 - len(pj(b).encode())
    b["fixture-padding"] = "x" * pad
    text = pj(b)
    assert len(text.encode()) == 16384
    add(d + n, text, tier=1, what="body of exactly 16384 bytes (padded by an unsigned extra): not over the cap")

    # warnings (never change the verdict)
    n = "u4-no-ad-interaction-type.json"
    add(d + n, pj(body(jws(postback(d + n)), ad_interaction_type=DROP)), tier=1, warnings=["U4"],
        what="U4: no ad-interaction-type")
    n = "u5-nonwinning-fine-value.json"
    vb(n, 2, "U5: did-win false with a fine conversion value", warnings=["U5"],
       payload=postback(d + n, did_win=False, source_identifier="1234"), unsigned={"conversion-value": 10})
    n = "u5-nonwinning-coarse-value.json"
    vb(n, 1, "U5: did-win false with a coarse conversion value", warnings=["U5"],
       payload=postback(d + n, did_win=False), unsigned={"coarse-conversion-value": "low"})
    n = "t1-index1-4digit-source.json"
    vb(n, 2, "T1: index 1 with a 4-digit source id", warnings=["T1"],
       payload=postback(d + n, postback_sequence_index=1, source_identifier="1234"))
    n = "t1-index2-3digit-source.json"
    vb(n, 2, "T1: index 2 with a 3-digit source id", warnings=["T1"],
       payload=postback(d + n, postback_sequence_index=2, source_identifier="123"))
    n = "t2-index1-fine-value.json"
    vb(n, 2, "T2: index 1 with a fine conversion value", warnings=["T2"],
       payload=postback(d + n, postback_sequence_index=1), unsigned={"conversion-value": 7})
    n = "t3-index1-publisher-item.json"
    vb(n, 1, "T3: index 1 with publisher-item-identifier", warnings=["T3"],
       payload=postback(d + n, postback_sequence_index=1, publisher_item_identifier=123))
    n = "t3-index2-country-code.json"
    vb(n, 1, "T3: index 2 with country-code", warnings=["T3"],
       payload=postback(d + n, postback_sequence_index=2), unsigned={"country-code": "FR"})
    n = "t1-t2-t3-index1-tier3-fields.json"
    vb(n, 2, "T1+T2+T3: index 1 with 4-digit source, fine value, publisher item and country",
       warnings=["T1", "T2", "T3"],
       payload=postback(d + n, postback_sequence_index=1, source_identifier="1234", publisher_item_identifier=5),
       unsigned={"conversion-value": 12, "country-code": "JP"})
    n = "t4-publisher-item-with-coarse.json"
    vb(n, 3, "T4: publisher-item-identifier with a coarse value", warnings=["T4"],
       payload=postback(d + n, publisher_item_identifier=42), unsigned={"coarse-conversion-value": "high"})
    n = "t4-country-with-coarse.json"
    vb(n, 3, "T4: country-code with a coarse value", warnings=["T4"],
       unsigned={"coarse-conversion-value": "medium", "country-code": "GB"})
    n = "t5-4digit-source-coarse.json"
    vb(n, 2, "T5: 4-digit source id at index 0 with a coarse value", warnings=["T5"],
       payload=postback(d + n, source_identifier="1234"), unsigned={"coarse-conversion-value": "low"})
    n = "t5-3digit-source-coarse.json"
    vb(n, 2, "T5: 3-digit source id at index 0 with a coarse value", warnings=["T5"],
       payload=postback(d + n, source_identifier="321"), unsigned={"coarse-conversion-value": "medium"})
    n = "t6-no-marketplace-4digit-source.json"
    vb(n, 0, "T6: no marketplace-identifier but a 4-digit source id", warnings=["T6"],
       payload=postback(d + n, marketplace_identifier=DROP, source_identifier="1234"))
    n = "t6-no-marketplace-fine-value.json"
    vb(n, 0, "T6: no marketplace-identifier but a fine value", warnings=["T6"],
       payload=postback(d + n, marketplace_identifier=DROP), unsigned={"conversion-value": 5})
    n = "t6-no-marketplace-coarse-value.json"
    vb(n, 0, "T6: no marketplace-identifier but a coarse value", warnings=["T6"],
       payload=postback(d + n, marketplace_identifier=DROP), unsigned={"coarse-conversion-value": "low"})
    n = "t6-no-marketplace-publisher-item.json"
    vb(n, 0, "T6: no marketplace-identifier but a publisher-item-identifier", warnings=["T6"],
       payload=postback(d + n, marketplace_identifier=DROP, publisher_item_identifier=42))


def valid_postback_jws():
    d = "valid/postback-jws/"

    def vt(name, tier, what, *, warnings=(), payload=None, high_s=None, header=None):
        p = payload if payload is not None else postback(d + name)
        add(d + name, jws_file(jws(p, high_s=high_s, header=header)), tier=tier, warnings=warnings, what=what)

    n = "tier0-index0.jws"
    vt(n, 0, "bare postback JWS, tier 0 (no marketplace)", payload=postback(d + n, marketplace_identifier=DROP))
    vt("tier1-index0.jws", 1, "bare postback JWS, tier 1")
    n = "tier1-index1.jws"
    vt(n, 1, "bare postback JWS, index 1", payload=postback(d + n, postback_sequence_index=1))
    n = "tier1-index2-redownload.jws"
    vt(n, 1, "bare postback JWS, index 2, redownload",
       payload=postback(d + n, postback_sequence_index=2, conversion_type="redownload"))
    n = "tier2-index0-4digit-source.jws"
    vt(n, 2, "bare postback JWS, 4-digit source", payload=postback(d + n, source_identifier="1234"))
    n = "tier3-index0-publisher-item.jws"
    vt(n, 3, "bare postback JWS, publisher-item-identifier (tier 3)",
       payload=postback(d + n, source_identifier="1234", publisher_item_identifier=5838492))
    n = "re-engagement-no-unsigned-rules.jws"
    vt(n, 1, "bare re-engagement JWS: no body, so no U3/U4 (U rules apply only to a body)",
       payload=postback(d + n, conversion_type="re-engagement"))
    n = "nonwinning-index0.jws"
    vt(n, 1, "bare postback JWS, did-win false, index 0", payload=postback(d + n, did_win=False))
    n = "advertised-item-above-2-32.jws"
    vt(n, 1, "advertised-item-identifier 10738027756 (> 2^32)",
       payload=postback(d + n, advertised_item_identifier=10738027756))
    vt("high-s-signature.jws", 1, "bare JWS with a high-S signature", high_s=True)
    vt("kid-escaped-slash-in-header.jws", 1, "header kid with an escaped slash",
       header=Raw('{"kid":"fixture-apple-identifier\\/0","alg":"ES256"}'))
    n = "t1-index1-4digit-source.jws"
    vt(n, 2, "T1 on a bare JWS", warnings=["T1"],
       payload=postback(d + n, postback_sequence_index=1, source_identifier="1234"))
    n = "t3-index2-publisher-item.jws"
    vt(n, 1, "T3 on a bare JWS: index 2 with publisher-item-identifier", warnings=["T3"],
       payload=postback(d + n, postback_sequence_index=2, publisher_item_identifier=9))
    n = "t6-no-marketplace-3digit-source.jws"
    vt(n, 0, "T6 on a bare JWS: no marketplace, 3-digit source", warnings=["T6"],
       payload=postback(d + n, marketplace_identifier=DROP, source_identifier="123"))
    # line handling: comment, blank and whitespace-only lines, CRLF terminators; the item is on line 4
    n = "crlf-comment-and-blank-lines.jws"
    tok = jws(postback(d + n))
    add(d + n, "# fixture: comment, blank and blank-ish lines are skipped\r\n\r\n \t \r\n" + tok + "\r\n",
        line=4, tier=1, what="CRLF lines; comment, empty and whitespace-only lines skipped; item on line 4")
    n = "no-trailing-newline.jws"
    add(d + n, jws(postback(d + n)), tier=1, what="last line without a terminator is still an item")


def valid_impressions():
    d = "valid/impression/"

    def vi(name, what, *, warnings=(), payload=None, high_s=None):
        p = payload if payload is not None else impression(d + name)
        add(d + name, jws_file(jws(p, key=IMPR, header=header_text(NET), high_s=high_s)),
            kind="impression", warnings=warnings, what=what)

    n = "eligible-for-re-engagement-true.jws"
    vi(n, "impression with eligible-for-re-engagement true", payload=impression(d + n, eligible_for_re_engagement=True))
    n = "eligible-for-re-engagement-false.jws"
    vi(n, "impression with eligible-for-re-engagement false",
       payload=impression(d + n, eligible_for_re_engagement=False))
    vi("without-eligible-for-re-engagement.jws", "impression without the optional eligible-for-re-engagement")
    n = "publisher-item-0-development.jws"
    vi(n, "publisher-item-identifier 0 (development impression)", payload=impression(d + n, publisher_item_identifier=0))
    n = "publisher-item-max.jws"
    vi(n, "publisher-item-identifier 2^64-1", payload=impression(d + n, publisher_item_identifier=U64_MAX))
    n = "advertised-item-above-2-32.jws"
    vi(n, "advertised-item-identifier 10738027756 (> 2^32)",
       payload=impression(d + n, advertised_item_identifier=10738027756))
    n = "advertised-item-max.jws"
    vi(n, "advertised-item-identifier 2^64-1", payload=impression(d + n, advertised_item_identifier=U64_MAX))
    n = "source-identifier-0.jws"
    vi(n, "source-identifier 0 (lower bound)", payload=impression(d + n, source_identifier=0))
    n = "source-identifier-9999.jws"
    vi(n, "source-identifier 9999 (upper bound)", payload=impression(d + n, source_identifier=9999))
    n = "uuid-lowercase.jws"
    vi(n, "lowercase impression-identifier UUID", payload=impression(d + n, impression_identifier=uid(d + n, False)))
    n = "unknown-extra-field.jws"
    vi(n, "unknown extra signed field", payload=impression(d + n, fixture_future_field="kept"))
    vi("high-s-signature.jws", "impression with a high-S signature", high_s=True)
    n = "i2-network-id-differs-from-kid.jws"
    vi(n, "I2: ad-network-identifier other.adattributionkit, kid fixture.adattributionkit", warnings=["I2"],
       payload=impression(d + n, ad_network_identifier="other.adattributionkit"))
    n = "i3-timestamp-year-2100.jws"
    vi(n, "I3: timestamp 4102444800000 (2100-01-01, in the future)", warnings=["I3"],
       payload=impression(d + n, timestamp=TS_2100))


# ========================================================================================= INVALID

def token_parts(payload, key=None, header=None):
    h, p = segments(header if header is not None else header_text(), payload)
    return h, p, sign_segments(key or APPLE, h, p)


def not_multiple_of_3(payload: dict) -> bytes:
    """The payload's compact JSON, with a short extra field if needed so its length is not a multiple of 3
    (then its base64url form has unused bits in the last character and would need '=' padding)."""
    for k in range(3):
        b = as_bytes(payload if k == 0 else merge(payload, {"fixture-pad": "x" * k}))
        if len(b) % 3:
            return b
    raise AssertionError


def j1_tokens(d: str, name_prefix: str, make_payload):
    """Envelope and JSON (J1) breakages of a token. Returns list of (name, token, what, signature)."""
    out = []

    def P(n):
        return make_payload(d + name_prefix + n)

    # padded signature segment (the decoded bytes are a good signature)
    h, p, s = token_parts(P("padded-signature"))
    out.append(("padded-signature", f"{h}.{p}.{s}==", "signature segment with '==' padding", "not-checked"))
    # padded payload segment, signature computed over the padded text as received
    pl = not_multiple_of_3(P("padded-payload"))
    h = b64u(as_bytes(header_text()))
    ppad = b64u(pl) + "=" * (-len(b64u(pl)) % 4)
    out.append(("padded-payload", f"{h}.{ppad}.{sign_segments(APPLE, h, ppad)}",
                "payload segment with '=' padding (signed as received)", "not-checked"))
    # '+' (standard base64) in the signature segment
    while True:
        h, p, s = token_parts(P("plus-in-segment"))
        if "-" in s:
            break
    out.append(("plus-in-segment", f"{h}.{p}.{s.replace('-', '+', 1)}",
                "'+' (standard base64 alphabet) instead of '-' in the signature segment", "not-checked"))
    while True:
        h, p, s = token_parts(P("slash-in-segment"))
        if "_" in s:
            break
    out.append(("slash-in-segment", f"{h}.{p}.{s.replace('_', '/', 1)}",
                "'/' (standard base64 alphabet) instead of '_' in the signature segment", "not-checked"))
    h, p, s = token_parts(P("four-segments"))
    out.append(("four-segments", f"{h}.{p}.{s}.{s}", "four segments", "not-checked"))
    h, p, s = token_parts(P("two-segments"))
    out.append(("two-segments", f"{h}.{p}", "two segments (no signature part)", "not-checked"))
    h = b64u(as_bytes(header_text()))
    out.append(("empty-payload-segment", f"{h}..{sign_segments(APPLE, h, '')}",
                "empty payload segment (signed as received)", "not-checked"))
    h, p, s = token_parts(P("empty-signature-segment"))
    out.append(("empty-signature-segment", f"{h}.{p}.", "empty signature segment (alg-none shape)", "not-checked"))
    # non-canonical last character of the signature: 64 bytes -> 86 chars, the last holds 4 unused bits
    h, p, s = token_parts(P("noncanonical-signature-last-char"))
    alpha = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    last = alpha.index(s[-1])
    assert last & 0x0F == 0
    out.append(("noncanonical-signature-last-char", f"{h}.{p}.{s[:-1]}{alpha[last | 1]}",
                "signature's last base64url char has nonzero unused bits (decodes to the same bytes)",
                "not-checked"))
    # non-canonical last character of the payload, signed as received
    pl = not_multiple_of_3(P("noncanonical-payload-last-char"))
    p = b64u(pl)
    last = alpha.index(p[-1])
    assert last & 1 == 0
    p = p[:-1] + alpha[last | 1]
    h = b64u(as_bytes(header_text()))
    out.append(("noncanonical-payload-last-char", f"{h}.{p}.{sign_segments(APPLE, h, p)}",
                "payload's last base64url char has nonzero unused bits (signed as received)", "not-checked"))
    # segment length mod 4 == 1
    h, p, s = token_parts(P("signature-length-mod4-1"))
    assert len(s) == 86
    out.append(("signature-length-mod4-1", f"{h}.{p}.{s[:-1]}",
                "signature segment of 85 characters (length mod 4 = 1)", "not-checked"))
    # whitespace inside
    h, p, s = token_parts(P("space-inside-token"))
    k = len(p) // 2
    out.append(("space-inside-token", f"{h}.{p[:k]} {p[k:]}.{s}",
                "a space inside the payload segment (token otherwise valid)", "not-checked"))
    # header JSON problems
    hdr = Raw('{"kid":"fixture-apple-identifier/0","alg":"ES256","kid":"fixture-apple-identifier/0"}')
    h, p, s = token_parts(P("duplicate-kid-in-header"), header=hdr)
    out.append(("duplicate-kid-in-header", f"{h}.{p}.{s}", "header repeats kid (same value), validly signed",
                "not-checked"))
    hdr = Raw('{"kid":"fixture-apple-identifier/0","alg":"ES256","kid":"fixture.adattributionkit"}')
    h, p, s = token_parts(P("duplicate-kid-in-header-differential"), header=hdr)
    out.append(("duplicate-kid-in-header-differential", f"{h}.{p}.{s}",
                "header kid twice with different values (first-wins parser would verify it)", "not-checked"))
    h, p, s = token_parts(P("header-not-json"), header="kid=fixture-apple-identifier/0;alg=ES256")
    out.append(("header-not-json", f"{h}.{p}.{s}", "header segment is not JSON", "not-checked"))
    h, p, s = token_parts(P("header-json-array"), header=Raw('["ES256","fixture-apple-identifier/0"]'))
    out.append(("header-json-array", f"{h}.{p}.{s}", "header is a JSON array, not an object", "not-checked"))
    h, p, s = token_parts(P("header-bom"), header=b"\xef\xbb\xbf" + as_bytes(header_text()))
    out.append(("header-bom", f"{h}.{p}.{s}", "header JSON starts with a UTF-8 BOM", "not-checked"))
    # payload JSON problems, all validly signed (J1 after the signature holds)
    pl = P("duplicate-member-in-payload")
    pairs = Pairs(pl.items())
    pairs.append(("postback-identifier", pl["postback-identifier"]) if "postback-identifier" in pl
                 else ("impression-identifier", pl["impression-identifier"]))
    out.append(("duplicate-member-in-payload", jws(pairs),
                "payload repeats its identifier member (same value), validly signed", "verified"))
    if "did-win" in pl:
        pl = P("duplicate-member-in-payload-differential")
        pairs = Pairs(pl.items())
        pairs.append(("did-win", False))
        out.append(("duplicate-member-in-payload-differential", jws(pairs),
                    "payload has did-win true then did-win false (both legal at index 0), validly signed",
                    "verified"))
    out.append(("bom-in-payload", jws(b"\xef\xbb\xbf" + as_bytes(P("bom-in-payload"))),
                "payload JSON starts with a UTF-8 BOM, validly signed", "verified"))
    pl = merge(P("nesting-17-in-payload"), {"fixture-nesting": Raw("[" * 16 + "0" + "]" * 16)})
    out.append(("nesting-17-in-payload", jws(pl),
                "payload nesting depth 17 (object + 16 arrays in an extra field), validly signed", "verified"))
    pl = merge(P("leading-zero-number-in-payload"), {"fixture-number": Raw("01")})
    out.append(("leading-zero-number-in-payload", jws(pl),
                "payload holds the number 01 (leading zero is not JSON) in an extra field, validly signed",
                "verified"))
    pl = as_bytes(merge(P("invalid-utf8-in-payload"), {"fixture-text": "PLACEHOLDER"}))
    pl = pl.replace(b"PLACEHOLDER", b"caf\xe9")
    out.append(("invalid-utf8-in-payload", jws(pl),
                "payload has a Latin-1 byte (invalid UTF-8) in an extra string, validly signed", "verified"))
    out.append(("payload-not-json", jws(b"this payload is not JSON"),
                "payload is not JSON, validly signed", "verified"))
    return out


def invalid_postback_jws():
    d = "invalid/postback-jws/"
    for name, tok, what, sig in j1_tokens(d, "j1-", postback):
        add(d + f"j1-{name}.jws", jws_file(tok), rule="J1", kind="unknown", signature=sig, what="J1: " + what)
    # over 16 KiB on one line
    n = "j1-line-over-16kib.jws"
    tok = jws(postback(d + n, fixture_padding="x" * 13000))
    assert len(tok) > 16384
    add(d + n, jws_file(tok), rule="J1", kind="unknown", what=f"J1: one token line of {len(tok)} bytes (> 16 KiB)")

    def it(name, rule, what, token, *, warnings=(), kind_certain=None):
        if kind_certain is None:
            kind_certain = rule[0] not in "J"  # kind read from an unauthenticated payload
        add(d + name, jws_file(token), rule=rule, warnings=warnings, kind="postback",
            kind_certain=kind_certain, what=f"{rule}: {what}")

    # J2
    for n, alg, what in [("j2-alg-none.jws", "none", "alg none (ES256 signature kept)"),
                         ("j2-alg-hs256.jws", "HS256", "alg HS256"),
                         ("j2-alg-es384.jws", "ES384", "alg ES384"),
                         ("j2-alg-lowercase-es256.jws", "es256", "alg es256 (case matters)")]:
        it(n, "J2", what, jws(postback(d + n), header=header_text(alg=alg)))
    n = "j2-alg-number.jws"
    it(n, "J2", "alg is the number 256", jws(postback(d + n), header=Raw('{"kid":"fixture-apple-identifier/0","alg":256}')))
    n = "j2-alg-missing.jws"
    it(n, "J2", "no alg member", jws(postback(d + n), header=Raw('{"kid":"fixture-apple-identifier/0"}')))
    n = "j2-crit-present.jws"
    it(n, "J2", "crit member present", jws(postback(d + n), header=Raw(
        '{"kid":"fixture-apple-identifier/0","alg":"ES256","crit":["fixture-ext"],"fixture-ext":true}')))
    # J3
    n = "j3-unknown-kid.jws"
    it(n, "J3", "kid fixture-apple-identifier/1 (no key loaded for it)",
       jws(postback(d + n), header=header_text("fixture-apple-identifier/1")))
    n = "j3-missing-kid.jws"
    it(n, "J3", "no kid member", jws(postback(d + n), header=Raw('{"alg":"ES256"}')))
    # J4 (invalid/ runs without --allow-development; J4 comes before the signature)
    n = "j4-apple-development-identifier-0.jws"
    it(n, "J4", "kid apple-development-identifier/0 without --allow-development (signature arbitrary)",
       jws(postback(d + n), header=header_text("apple-development-identifier/0")))
    n = "j4-apple-development-identifier-1.jws"
    it(n, "J4", "kid apple-development-identifier/1 without --allow-development (signature arbitrary)",
       jws(postback(d + n, ad_network_identifier="development.adattributionkit"),
           header=header_text("apple-development-identifier/1")))
    # J5
    n = "j5-tampered-payload.jws"
    good = jws(postback(d + n))
    h, _, s = good.split(".")
    _, p2 = segments("", postback(d + n, conversion_type="redownload"))
    it(n, "J5", "payload changed (download -> redownload) after signing", f"{h}.{p2}.{s}")
    n = "j5-signature-63-bytes.jws"
    h, p, s = token_parts(postback(d + n))
    sig = base64.urlsafe_b64decode(s + "==")
    it(n, "J5", "signature segment decodes to 63 bytes (a valid signature without its last byte)",
       f"{h}.{p}.{b64u(sig[:63])}")
    n = "j5-signature-65-bytes.jws"
    h, p, s = token_parts(postback(d + n))
    sig = base64.urlsafe_b64decode(s + "==")
    it(n, "J5", "signature segment decodes to 65 bytes (valid signature + one zero byte)",
       f"{h}.{p}.{b64u(sig + bytes(1))}")
    n = "j5-der-signature.jws"
    h, p = segments(header_text(), postback(d + n))
    der = APPLE.sign(f"{h}.{p}".encode(), ec.ECDSA(hashes.SHA256()))
    it(n, "J5", "a correct signature in DER form (70-72 bytes) instead of raw r||s", f"{h}.{p}.{b64u(der)}")
    for n, what, f in [("j5-r-zero.jws", "r = 0", lambda r, s: (0, s)),
                       ("j5-s-n.jws", "s = n (group order)", lambda r, s: (r, N)),
                       ("j5-r-n.jws", "r = n (group order)", lambda r, s: (N, s)),
                       ("j5-s-zero.jws", "s = 0", lambda r, s: (r, 0))]:
        h, p = segments(header_text(), postback(d + n))
        r, s = sign_rs(APPLE, f"{h}.{p}".encode())
        r, s = f(r, s)
        it(n, "J5", what, f"{h}.{p}.{b64u(r.to_bytes(32, 'big') + s.to_bytes(32, 'big'))}")
    n = "j5-signed-by-impression-key.jws"
    it(n, "J5", "kid fixture-apple-identifier/0 but signed with the fixture.adattributionkit key",
       jws(postback(d + n), key=IMPR))
    n = "j5-forged-apple-cas-identifier-0.jws"
    it(n, "J5", "kid apple-cas-identifier/0 (Apple's built-in production key) signed with a fixture key",
       jws(postback(d + n), header=header_text("apple-cas-identifier/0")))
    # P rules on a bare JWS
    n = "p1-missing-postback-identifier.jws"
    it(n, "P1", "no postback-identifier", jws(postback(d + n, postback_identifier=DROP)))
    n = "p2-postback-sequence-index-3.jws"
    it(n, "P2", "postback-sequence-index 3", jws(postback(d + n, postback_sequence_index=3)))
    n = "p3-re-engagement-not-winning.jws"
    it(n, "P3", "re-engagement with did-win false",
       jws(postback(d + n, conversion_type="re-engagement", did_win=False)))
    n = "p4-nonwinning-index-1.jws"
    it(n, "P4", "did-win false at index 1", jws(postback(d + n, did_win=False, postback_sequence_index=1)))


def invalid_postback_bodies():
    d = "invalid/postback/"
    # token-level J1 inside a body (the body itself is fine, so the kind is postback)
    keep = {"padded-signature", "plus-in-segment", "four-segments", "empty-signature-segment",
            "noncanonical-signature-last-char", "space-inside-token", "duplicate-kid-in-header",
            "duplicate-member-in-payload", "duplicate-member-in-payload-differential", "bom-in-payload",
            "nesting-17-in-payload", "leading-zero-number-in-payload", "invalid-utf8-in-payload"}
    for name, tok, what, sig in j1_tokens(d, "j1-jws-", postback):
        if name in keep:
            add(d + f"j1-jws-{name}.json", pj(body(tok)), rule="J1", signature=sig, what="J1 (jws-string): " + what)
    n = "j1-jws-newline-inside-token.json"
    h, p, s = token_parts(postback(d + n))
    add(d + n, pj(body(f"{h}.{p}\n.{s}")), rule="J1", what="J1: jws-string holds a newline (\\n) inside the token")
    n = "j1-jws-string-empty.json"
    add(d + n, pj(body("")), rule="J1", what="J1: jws-string is the empty string")

    # body-level J1
    add(d + "j1-body-not-json.json", "this is not JSON, it is a fixture\n", rule="J1", kind="unknown",
        what="J1: body is not JSON")
    n = "j1-body-truncated-json.json"
    add(d + n, pj(body(jws(postback(d + n))))[:-40], rule="J1", kind="unknown", what="J1: body JSON cut short")
    add(d + "j1-body-without-jws-string.json", pj({"ad-interaction-type": "view", "conversion-value": 3}),
        rule="J1", kind="unknown", what="J1: JSON object without jws-string (nor attribution-signature)")
    add(d + "j1-body-jws-string-number.json", pj({"jws-string": 12345, "ad-interaction-type": "view"}),
        rule="J1", what="J1: jws-string is a number")
    add(d + "j1-body-jws-string-null.json", pj({"jws-string": None, "ad-interaction-type": "view"}),
        rule="J1", what="J1: jws-string is null")
    n = "j1-body-json-array.json"
    add(d + n, "[" + cj(body(jws(postback(d + n)))) + "]\n", rule="J1", kind="unknown",
        what="J1: body is a JSON array holding a body object")
    n = "j1-body-duplicate-member.json"
    pairs = Pairs(body(jws(postback(d + n)), conversion_value=42).items())
    pairs.append(("conversion-value", 42))
    add(d + n, pj(pairs), rule="J1", kind="unknown", kind_certain=False,
        what="J1: body repeats conversion-value (same value)")
    n = "j1-body-duplicate-jws-string.json"
    t1, t2 = jws(postback(d + n)), jws(postback(d + n + "#2"))
    add(d + n, pj(Pairs([("jws-string", t1), ("ad-interaction-type", "view"), ("jws-string", t2)])),
        rule="J1", kind="unknown", kind_certain=False,
        what="J1: body has two jws-string members (two different valid tokens)")
    n = "j1-body-bom.json"
    add(d + n, b"\xef\xbb\xbf" + pj(body(jws(postback(d + n)))).encode(), rule="J1", kind="unknown",
        kind_certain=False, what="J1: body starts with a UTF-8 BOM")
    n = "j1-body-nesting-17.json"
    add(d + n, pj(body(jws(postback(d + n)), fixture_nesting=Raw("[" * 16 + "0" + "]" * 16))), rule="J1",
        kind="unknown", kind_certain=False, what="J1: body nesting depth 17 (unsigned extra of 16 arrays)")
    n = "j1-body-over-16kib.json"
    b = body(jws(postback(d + n)), fixture_padding="")
    b["fixture-padding"] = "x" * (17000 - len(pj(b).encode()))
    text = pj(b)
    assert len(text.encode()) == 17000
    add(d + n, text, rule="J1", kind="unknown",
        what="J1: 17000-byte body (valid postback padded by a long unsigned extra string): over 16 KiB")

    def ib(name, rule, what, payload=None, *, unsigned=None, warnings=(), header=None, key=None, token=None):
        tok = token or jws(payload if payload is not None else postback(d + name), header=header, key=key)
        add(d + name, pj(body(tok, **(unsigned or {}))), rule=rule, warnings=warnings, what=f"{rule}: {what}")

    # J2-J5 inside a body
    n = "j2-alg-none.json"
    ib(n, "J2", "alg none", header=header_text(alg="none"))
    n = "j2-crit-present.json"
    ib(n, "J2", "crit member present", header=Raw(
        '{"kid":"fixture-apple-identifier/0","alg":"ES256","crit":["exp"],"exp":1}'))
    n = "j3-unknown-kid.json"
    ib(n, "J3", "kid unknown.adattributionkit/0", header=header_text("unknown.adattributionkit/0"))
    n = "j4-apple-development-identifier-1.json"
    ib(n, "J4", "kid apple-development-identifier/1 without --allow-development",
       postback(d + n, ad_network_identifier="development.adattributionkit"),
       header=header_text("apple-development-identifier/1"))
    n = "j5-tampered-payload.json"
    h, _, s = jws(postback(d + n)).split(".")
    _, p2 = segments("", postback(d + n, did_win=False))
    ib(n, "J5", "did-win changed to false after signing", token=f"{h}.{p2}.{s}")
    n = "j5-signed-by-impression-key.json"
    ib(n, "J5", "signed with the wrong (impression) key", key=IMPR)

    # P1: each required field missing, and wrong JSON types
    for f in ["postback-identifier", "ad-network-identifier", "advertised-item-identifier", "conversion-type",
              "impression-type", "did-win", "postback-sequence-index", "source-identifier"]:
        n = f"p1-missing-{f}.json"
        ib(n, "P1", f"required {f} missing", postback(d + n, **{f: DROP}))
    for n, f, v, what in [
        ("p1-source-identifier-integer.json", "source-identifier", 1234, "source-identifier is the integer 1234"),
        ("p1-did-win-string.json", "did-win", "true", "did-win is the string \"true\""),
        ("p1-did-win-null.json", "did-win", None, "did-win is null"),
        ("p1-postback-sequence-index-string.json", "postback-sequence-index", "0",
         "postback-sequence-index is the string \"0\""),
        ("p1-advertised-item-identifier-string.json", "advertised-item-identifier", "1108187390",
         "advertised-item-identifier is a string"),
        ("p1-postback-identifier-number.json", "postback-identifier", 12345, "postback-identifier is a number"),
        ("p1-conversion-type-array.json", "conversion-type", ["download"], "conversion-type is an array"),
    ]:
        ib(n, "P1", what, postback(d + n, **{f: v}))

    # P2: enumerations and ranges
    for n, over, what in [
        ("p2-conversion-type-install.json", {"conversion-type": "install"}, "conversion-type install"),
        ("p2-conversion-type-capitalised.json", {"conversion-type": "Download"}, "conversion-type Download"),
        ("p2-impression-type-web.json", {"impression-type": "web-impression"}, "impression-type web-impression"),
        ("p2-postback-sequence-index-3.json", {"postback-sequence-index": 3}, "postback-sequence-index 3"),
        ("p2-postback-sequence-index-negative.json", {"postback-sequence-index": -1}, "postback-sequence-index -1"),
        ("p2-postback-sequence-index-0.0.json", {"postback-sequence-index": Raw("0.0")},
         "postback-sequence-index 0.0 (fraction in an integer field)"),
        ("p2-source-identifier-1-digit.json", {"source-identifier": "7"}, "source-identifier of 1 digit"),
        ("p2-source-identifier-5-digits.json", {"source-identifier": "12345"}, "source-identifier of 5 digits"),
        ("p2-source-identifier-non-digit.json", {"source-identifier": "12a4"}, "source-identifier 12a4"),
        ("p2-source-identifier-non-ascii-digits.json", {"source-identifier": "\u0661\u0662"},
         "source-identifier of two Arabic-Indic digits (not ASCII)"),
        ("p2-advertised-item-identifier-2-64.json", {"advertised-item-identifier": 2**64},
         "advertised-item-identifier 2^64 (one over the range)"),
        ("p2-advertised-item-identifier-1.0.json", {"advertised-item-identifier": Raw("1.0")},
         "advertised-item-identifier 1.0 (fraction in an integer field)"),
        ("p2-advertised-item-identifier-negative.json", {"advertised-item-identifier": -1},
         "advertised-item-identifier -1"),
        ("p2-advertised-item-identifier-1e0.json", {"advertised-item-identifier": Raw("1e0")},
         "advertised-item-identifier 1e0 (exponent in an integer field)"),
        ("p2-publisher-item-identifier-2-64.json", {"publisher-item-identifier": 2**64},
         "publisher-item-identifier 2^64"),
        ("p2-publisher-item-identifier-negative.json", {"publisher-item-identifier": -1},
         "publisher-item-identifier -1"),
    ]:
        ib(n, "P2", what, postback(d + n, **over))
    n = "p2-conversion-type-reengagement.json"
    ib(n, "P2", "conversion-type reengagement (only re-engagement is accepted, spec section 10)",
       postback(d + n, conversion_type="reengagement"), unsigned={"ad-interaction-type": "click"})
    # P3, P4
    n = "p3-re-engagement-not-winning.json"
    ib(n, "P3", "re-engagement with did-win false (index 0, click, no value)",
       postback(d + n, conversion_type="re-engagement", did_win=False), unsigned={"ad-interaction-type": "click"})
    n = "p4-nonwinning-index-1.json"
    ib(n, "P4", "did-win false at index 1", postback(d + n, did_win=False, postback_sequence_index=1))
    n = "p4-nonwinning-index-2.json"
    ib(n, "P4", "did-win false at index 2", postback(d + n, did_win=False, postback_sequence_index=2))

    # U1
    fine = {"source_identifier": "1234"}
    for n, p_over, un, what in [
        ("u1-conversion-value-64.json", fine, {"conversion-value": 64}, "conversion-value 64"),
        ("u1-conversion-value-negative.json", fine, {"conversion-value": -1}, "conversion-value -1"),
        ("u1-conversion-value-string.json", fine, {"conversion-value": "24"}, "conversion-value \"24\" (string)"),
        ("u1-conversion-value-1.0.json", fine, {"conversion-value": Raw("1.0")}, "conversion-value 1.0"),
        ("u1-coarse-extreme.json", {}, {"coarse-conversion-value": "extreme"}, "coarse-conversion-value extreme"),
        ("u1-coarse-uppercase.json", {}, {"coarse-conversion-value": "HIGH"}, "coarse-conversion-value HIGH"),
        ("u1-country-code-lowercase.json", fine, {"conversion-value": 5, "country-code": "us"}, "country-code us"),
        ("u1-country-code-3-letters.json", fine, {"conversion-value": 5, "country-code": "USA"},
         "country-code USA"),
        ("u1-ad-interaction-type-tap.json", {}, {"ad-interaction-type": "tap"}, "ad-interaction-type tap"),
        ("u1-ad-interaction-type-number.json", {}, {"ad-interaction-type": 1}, "ad-interaction-type 1"),
    ]:
        ib(n, "U1", what, postback(d + n, **p_over), unsigned=un)
    # U2, U3
    n = "u2-fine-and-coarse.json"
    ib(n, "U2", "both conversion-value and coarse-conversion-value (2-digit source, index 0)",
       unsigned={"conversion-value": 10, "coarse-conversion-value": "low"})
    n = "u3-re-engagement-view.json"
    ib(n, "U3", "re-engagement with ad-interaction-type view", postback(d + n, conversion_type="re-engagement"),
       unsigned={"ad-interaction-type": "view"})
    n = "u3-re-engagement-no-ad-interaction-type.json"
    ib(n, "U3", "re-engagement without ad-interaction-type (also warns U4)",
       postback(d + n, conversion_type="re-engagement"), unsigned={"ad-interaction-type": DROP}, warnings=["U4"])


def invalid_impressions():
    d = "invalid/impression/"

    def ii(name, rule, what, payload=None, *, warnings=(), header=None, key=None, token=None, kind=None,
           kind_certain=None, signature=None):
        tok = token or jws(payload if payload is not None else impression(d + name),
                           header=header if header is not None else header_text(NET), key=key or IMPR)
        if kind is None:
            kind = "impression"
        if kind_certain is None:
            kind_certain = rule[0] != "J"
        add(d + name, jws_file(tok), rule=rule, warnings=warnings, kind=kind, kind_certain=kind_certain,
            signature=signature, what=f"{rule}: {what}")

    # J1
    n = "j1-duplicate-member-in-payload.jws"
    pl = impression(d + n)
    pairs = Pairs(pl.items())
    pairs.append(("source-identifier", pl["source-identifier"]))
    ii(n, "J1", "payload repeats source-identifier (same value), validly signed",
       token=jws(pairs, key=IMPR, header=header_text(NET)), kind="unknown", kind_certain=True, signature="verified")
    n = "j1-space-inside-token.jws"
    h, p, s = token_parts(impression(d + n), key=IMPR, header=header_text(NET))
    ii(n, "J1", "a space inside the signature segment", token=f"{h}.{p}.{s[:40]} {s[40:]}",
       kind="unknown", kind_certain=True)
    # J2-J5
    n = "j2-alg-es384.jws"
    ii(n, "J2", "alg ES384", header=header_text(NET, "ES384"))
    n = "j3-unknown-kid.jws"
    ii(n, "J3", "kid example.adattributionkit (no key loaded), network id matches the kid",
       impression(d + n, ad_network_identifier="example.adattributionkit"),
       header=header_text("example.adattributionkit"))
    n = "j5-tampered-payload.jws"
    h, _, s = jws(impression(d + n), key=IMPR, header=header_text(NET)).split(".")
    _, p2 = segments("", impression(d + n, source_identifier=1))
    ii(n, "J5", "source-identifier changed after signing", token=f"{h}.{p2}.{s}")
    n = "j5-signed-by-apple-fixture-key.jws"
    ii(n, "J5", "kid fixture.adattributionkit but signed with the fixture-apple-identifier-0 key", key=APPLE)
    # I1
    for n, over, what, warn in [
        ("i1-impression-identifier-not-uuid.jws", {"impression-identifier": "not-a-uuid"},
         "impression-identifier not-a-uuid", ()),
        ("i1-impression-identifier-no-hyphens.jws", {"impression-identifier": uid(d + "x").replace("-", "")},
         "impression-identifier of 32 hex digits without hyphens", ()),
        ("i1-impression-identifier-non-hex.jws", {"impression-identifier": "544B8FAD-0AD5-4434-98B2-327113AF84DG"},
         "impression-identifier with a G", ()),
        ("i1-impression-identifier-braces.jws", {"impression-identifier": "{544B8FAD-0AD5-4434-98B2-327113AF84DB}"},
         "impression-identifier in braces (38 characters)", ()),
        ("i1-impression-identifier-35-chars.jws", {"impression-identifier": "544B8FAD-0AD5-4434-98B2-327113AF84D"},
         "impression-identifier of 35 characters", ()),
        ("i1-source-identifier-10000.jws", {"source-identifier": 10000}, "source-identifier 10000", ()),
        ("i1-source-identifier-negative.jws", {"source-identifier": -1}, "source-identifier -1", ()),
        ("i1-source-identifier-string.jws", {"source-identifier": "5239"}, "source-identifier \"5239\" (string)", ()),
        ("i1-impression-type-web.jws", {"impression-type": "web-impression"}, "impression-type web-impression", ()),
        ("i1-impression-type-capitalised.jws", {"impression-type": "App-Impression"},
         "impression-type App-Impression", ()),
        ("i1-ad-network-identifier-uppercase.jws", {"ad-network-identifier": "Fixture.AdAttributionKit"},
         "ad-network-identifier with capitals (differs from kid too: I2)", ("I2",)),
        ("i1-ad-network-identifier-empty.jws", {"ad-network-identifier": ""},
         "ad-network-identifier empty (differs from kid too: I2)", ("I2",)),
        ("i1-missing-timestamp.jws", {"timestamp": DROP}, "no timestamp", ()),
        ("i1-timestamp-fraction.jws", {"timestamp": Raw("1719599957239.5")}, "timestamp 1719599957239.5", ()),
        ("i1-timestamp-1.5.jws", {"timestamp": Raw("1.5")}, "timestamp 1.5", ()),
        ("i1-timestamp-string.jws", {"timestamp": str(TS)}, "timestamp as a string", ()),
        ("i1-missing-publisher-item-identifier.jws", {"publisher-item-identifier": DROP},
         "no publisher-item-identifier", ()),
        ("i1-missing-impression-type.jws", {"impression-type": DROP}, "no impression-type", ()),
        ("i1-missing-source-identifier.jws", {"source-identifier": DROP}, "no source-identifier", ()),
        ("i1-missing-advertised-item-identifier.jws", {"advertised-item-identifier": DROP},
         "no advertised-item-identifier", ()),
        ("i1-publisher-item-identifier-2-64.jws", {"publisher-item-identifier": 2**64},
         "publisher-item-identifier 2^64", ()),
        ("i1-publisher-item-identifier-negative.jws", {"publisher-item-identifier": -1},
         "publisher-item-identifier -1", ()),
        ("i1-advertised-item-identifier-2-64.jws", {"advertised-item-identifier": 2**64},
         "advertised-item-identifier 2^64", ()),
        ("i1-advertised-item-identifier-1e0.jws", {"advertised-item-identifier": Raw("1e0")},
         "advertised-item-identifier 1e0", ()),
        ("i1-eligible-for-re-engagement-string.jws", {"eligible-for-re-engagement": "true"},
         "eligible-for-re-engagement is the string \"true\"", ()),
        ("i1-eligible-for-re-engagement-number.jws", {"eligible-for-re-engagement": 1},
         "eligible-for-re-engagement is 1", ()),
    ]:
        ii(n, "I1", what, impression(d + n, **over), warnings=warn)


def dedupe():
    """D1 needs a valid first occurrence in the same run, so it lives in its own folder (mixed verdicts)."""
    d = "dedupe/"
    path = d + "postback-identifier-replays.jsonl"
    x = postback(path + "#X", source_identifier="1234")
    tok_x = jws(x)
    y = postback(path + "#Y")
    h, _, s = jws(postback(path + "#Y", conversion_type="redownload")).split(".")
    _, py = segments("", y)
    forged_y = f"{h}.{py}.{s}"
    tok_y = jws(y)
    imp = jws(impression(path + "#impression"), key=IMPR, header=header_text(NET))
    lines = [
        "# D1 fixture: run without --expect, with the two fixture keys; see Fixtures/README.md",
        cj(body(tok_x, conversion_value=21)),               # 2 valid
        tok_x,                                              # 3 duplicate of 2 (bare JWS, same postback-identifier)
        cj(body(forged_y)),                                 # 4 bad signature, claims Y
        "",
        cj(body(tok_y, coarse_conversion_value="low")),     # 6 valid: the forgery on 4 does not count as seen
        cj(body(tok_y, coarse_conversion_value="high")),    # 7 duplicate of 6 (replay with changed unsigned value)
        imp,                                                # 8 impression: not deduplicated
        imp,                                                # 9 impression again: still valid
    ]
    FILES[path] = ("\n".join(lines) + "\n").encode()
    add(path, None, line=2, tier=2, verdict="valid", what="first occurrence of postback X (body)")
    add(path, None, line=3, rule="D1", duplicate_of=2, warnings=["D2"],
        what="D1: bare JWS of postback X again (duplicate of line 2); D2: its body's unsigned members are gone")
    add(path, None, line=4, rule="J5", what="J5: forged postback Y (tampered payload); invalid, so not 'seen'")
    add(path, None, line=6, tier=1, verdict="valid",
        what="genuine postback Y: valid, because the forgery on line 4 does not shadow it")
    add(path, None, line=7, rule="D1", duplicate_of=6, warnings=["D2"],
        what="D1: postback Y replayed with a changed unsigned coarse value (duplicate of line 6); D2 names it")
    add(path, None, line=8, kind="impression", verdict="valid", what="an impression (impressions are not deduplicated)")
    add(path, None, line=9, kind="impression", verdict="valid", what="the same impression again: still valid")

    # Spec section 2: postback-identifier compares by code points, not by Unicode canonical equivalence.
    path = d + "exact-postback-identifiers.jsonl"
    suffix = uid(path)[1:]
    precomposed = jws(postback(path + "#P", postback_identifier="\u00c5" + suffix))
    decomposed = jws(postback(path + "#D", postback_identifier="A\u030a" + suffix))
    lines = [
        "# two genuine postbacks whose ids are equal only under Unicode canonical equivalence",
        cj(body(precomposed)),                              # 2 valid
        cj(body(decomposed)),                               # 3 valid: another postback-identifier
        cj(body(precomposed, coarse_conversion_value="low")),  # 4 duplicate of 2
    ]
    FILES[path] = ("\n".join(lines) + "\n").encode()
    add(path, None, line=2, tier=1, verdict="valid", what="postback-identifier starting with U+00C5")
    add(path, None, line=3, tier=1, verdict="valid",
        what="postback-identifier starting with A + U+030A: canonically equivalent to line 2, yet another postback")
    add(path, None, line=4, rule="D1", duplicate_of=2, warnings=["D2"],
        what="D1: line 2's postback again (byte-identical id); D2: with a coarse value added")


# ===================================================================================== SKAdNetwork

SKAN_NET = "fixture.skadnetwork"
SEP = "\u2063"  # U+2063 INVISIBLE SEPARATOR
# Spec section 9: the signed members of each version, in signing order. source-app-id and source-domain are
# optional (left out of the string when absent); every other member listed is required.
SKAN_ORDERS = {
    "1.0": ["ad-network-id", "campaign-id", "app-id", "transaction-id"],
    "2.0": ["version", "ad-network-id", "campaign-id", "app-id", "transaction-id", "redownload", "source-app-id"],
    "2.1": ["version", "ad-network-id", "campaign-id", "app-id", "transaction-id", "redownload", "source-app-id"],
    "2.2": ["version", "ad-network-id", "campaign-id", "app-id", "transaction-id", "redownload", "source-app-id",
            "fidelity-type"],
    "3.0": ["version", "ad-network-id", "campaign-id", "app-id", "transaction-id", "redownload", "source-app-id",
            "fidelity-type", "did-win"],
    "4.0": ["version", "ad-network-id", "source-identifier", "app-id", "transaction-id", "redownload",
            "source-app-id", "source-domain", "fidelity-type", "did-win", "postback-sequence-index"],
}
P192_VERSIONS = {"1.0", "2.0"}  # spec section 3: 1.0 and 2.0 use the P-192 key, 2.1 and later P-256


def tid(name: str) -> str:
    """A transaction-id: a lowercase UUID derived from the fixture's name, as Apple's examples write them."""
    return uid("skadnetwork:" + name, upper=False)


def skan(version: str | None, name: str, **over) -> dict:
    """An unsigned SKAdNetwork body of `version` (None: no version member, i.e. 1.0) with typical values;
    keyword names use _ for -, DROP removes a member."""
    out = {} if version is None else {"version": version}
    out["ad-network-id"] = SKAN_NET
    if version == "4.0":
        out["source-identifier"] = "5239"
    else:
        out["campaign-id"] = 42
    out["app-id"] = 1108187390
    out["transaction-id"] = tid(name)
    if version not in (None, "1.0"):
        out["redownload"] = False
        out["source-app-id"] = 1234567891
    if version in ("2.2", "3.0", "4.0"):
        out["fidelity-type"] = 1
    if version in ("3.0", "4.0"):
        out["did-win"] = True
    if version == "4.0":
        out["postback-sequence-index"] = 0
    return merge(out, {k.replace("_", "-"): v for k, v in over.items()})


def skan_value(v):
    """A member's decoded JSON value (Raw texts are parsed, as a verifier reads them)."""
    return json.loads(str(v)) if isinstance(v, Raw) else v


def skan_string(b: dict, order: list[str]) -> str:
    """Spec section 9: the present members of `order`, joined by U+2063; Booleans true/false, integers in
    decimal, strings as received (after JSON unescaping)."""
    parts = []
    for name in order:
        if name not in b:
            continue
        v = skan_value(b[name])
        parts.append("true" if v is True else "false" if v is False else str(v))
    return SEP.join(parts)


def skan_version(b: dict) -> str:
    return skan_value(b["version"]) if "version" in b else "1.0"


def skan_key(version: str):
    return SKAN_P192 if version in P192_VERSIONS else SKAN_P256


def der_sig(key, message: bytes, *, high_s=None) -> bytes:
    r, s = sign_rs(key, message)
    n = N192 if key.curve.name == "secp192r1" else N
    if high_s is True and s <= n // 2:
        s = n - s
    if high_s is False and s > n // 2:
        s = n - s
    return encode_dss_signature(r, s)


def skan_signature(b: dict, *, order=None, key=None, message=None, high_s=None) -> str:
    """Standard padded base64 of a DER ECDSA-SHA256 signature over the body's signed string (by default the
    version's own order and the version's test key)."""
    version = skan_version(b) if order is None or key is None else None
    if message is None:
        message = skan_string(b, order or SKAN_ORDERS[version]).encode("utf-8")
    return base64.b64encode(der_sig(key or skan_key(version), message, high_s=high_s)).decode("ascii")


def skan_signed(b: dict, **kw) -> dict:
    """The body with attribution-signature appended."""
    return merge(b, {"attribution-signature": skan_signature(b, **kw)})


def skan_add(path: str, b, *, rule=None, warnings=(), what: str, text=None, fallback=False, line=1,
             environment=None, duplicate_of=None, verdict=None):
    """Registers an SKAdNetwork fixture; the key ID and the signed string the verifier must report follow from
    the body and the rule that stops it (S1: no version, so no key; S1/S2/J1: no signature check)."""
    stops_early = rule in ("J1", "S1", "S2")
    version = None if rule in ("J1", "S1") else skan_version(b)
    key_id = None if version is None else ("skadnetwork-p192" if version in P192_VERSIONS else "skadnetwork-p256")
    signed_string = None
    if not stops_early:
        signed_string = skan_string(b, SKAN_ORDERS["2.1"] if fallback else SKAN_ORDERS[version])
    add(path, (pj(b) if text is None else text) if line == 1 or text is not None else None, rule=rule,
        warnings=warnings, what=what, kind="unknown" if rule == "J1" else "skadnetwork",
        kind_certain=rule != "J1", line=line, environment=environment, duplicate_of=duplicate_of,
        verdict=verdict, key_id=key_id, signed_string=signed_string)


def skadnetwork_apple_copies(vectors: Path | None):
    for src, (dst, digest) in SKAN_COPIES.items():
        data = None
        if vectors is not None and (vectors / "skadnetwork" / src).exists():
            data = (vectors / "skadnetwork" / src).read_bytes()
        elif (HERE / dst).exists():
            data = (HERE / dst).read_bytes()
        if data is None:
            sys.exit(f"error: Apple example {src} not found (pass --vectors DIR with DIR/skadnetwork/{src})")
        if hashlib.sha256(data).hexdigest() != digest:
            sys.exit(f"error: {src} does not have the expected SHA-256 {digest}")
        b = json.loads(data)
        version = skan_version(b)
        if dst.startswith("valid/"):
            rule, what = None, f"Apple's SKAdNetwork {version} example, valid with Apple's P-256 key"
        else:
            rule, what = "S3", f"S3: Apple's SKAdNetwork {version} example, whose signature is a placeholder"
        skan_add(dst, b, rule=rule, environment="production", text=data.decode("utf-8"), what=what)
        FILES[dst] = data  # the original bytes exactly


def skadnetwork_valid():
    d = "skadnetwork/valid/"

    def v(name, b, what, **kw):
        skan_add(d + name, b, what=what, **kw)

    n = "1.0-p192.json"
    v(n, skan_signed(skan(None, d + n)), "1.0 (no version member), P-192 key")
    n = "1.0-version-member-p192.json"
    v(n, skan_signed(skan("1.0", d + n)),
      "version \"1.0\" written out: 1.0's order has no version member, so it is unsigned")
    n = "1.0-high-s-signature-p192.json"
    v(n, skan_signed(skan(None, d + n), high_s=True), "1.0 with a high-S P-192 signature (s > n/2 is valid)")
    n = "2.0-p192.json"
    v(n, skan_signed(skan("2.0", d + n, redownload=True, conversion_value=20)),
      "2.0 with source-app-id and conversion-value, P-192 key")
    n = "2.0-without-source-app-id-p192.json"
    v(n, skan_signed(skan("2.0", d + n, source_app_id=DROP)), "2.0 without source-app-id (left out of the string)")
    n = "2.1.json"
    v(n, skan_signed(skan("2.1", d + n, redownload=True, conversion_value=20)),
      "2.1 with source-app-id, P-256 key")
    n = "2.1-without-source-app-id.json"
    v(n, skan_signed(skan("2.1", d + n, source_app_id=DROP, conversion_value=0)), "2.1 without source-app-id")
    n = "2.1-high-s-signature.json"
    v(n, skan_signed(skan("2.1", d + n), high_s=True), "2.1 with a high-S P-256 signature (s > n/2 is valid)")
    n = "2.1-escaped-slash-in-signature.json"
    while True:
        b = skan_signed(skan("2.1", d + n))
        if "/" in b["attribution-signature"]:
            break
    b["attribution-signature"] = Raw(json.dumps(b["attribution-signature"]).replace("/", "\\/"))
    v(n, b, "attribution-signature written with \\/ escapes, as Apple's examples are: compared after JSON decoding")
    n = "2.2-fidelity-type-0.json"
    v(n, skan_signed(skan("2.2", d + n, fidelity_type=0)), "2.2, fidelity-type 0 (view-through)")
    n = "2.2-fidelity-type-1.json"
    v(n, skan_signed(skan("2.2", d + n, conversion_value=20)), "2.2, fidelity-type 1 (StoreKit-rendered)")
    n = "2.2-fallback-signed-without-fidelity-type.json"
    b = skan("2.2", d + n, conversion_value=20)
    v(n, skan_signed(b, order=SKAN_ORDERS["2.1"], key=SKAN_P256), fallback=True, warnings=["S6"],
      what="S6: 2.2 signed over the 2.0/2.1 order (no fidelity-type): valid with a warning")
    n = "3.0-winning.json"
    v(n, skan_signed(skan("3.0", d + n, conversion_value=20)), "3.0 winning, source-app-id, fine value")
    n = "3.0-nonwinning.json"
    v(n, skan_signed(skan("3.0", d + n, did_win=False, source_app_id=DROP)),
      "3.0 nonwinning (did-win false), no source-app-id")
    n = "3.0-signature-first-compact.json"
    b = skan("3.0", d + n)
    b = merge({"attribution-signature": skan_signature(b)}, b)
    v(n, b, "3.0 as one compact line with attribution-signature first", text=cj(b) + "\n")
    n = "4.0-fine-source-app-id.json"
    v(n, skan_signed(skan("4.0", d + n, conversion_value=63)), "4.0 fine value 63, source-app-id, 4-digit source")
    n = "4.0-coarse-source-domain.json"
    v(n, skan_signed(skan("4.0", d + n, source_identifier="39", source_app_id=DROP, source_domain="example.com",
                          coarse_conversion_value="medium")),
      "4.0 coarse medium, source-domain (web ad), 2-digit source")
    n = "4.0-no-source-app-or-domain.json"
    v(n, skan_signed(skan("4.0", d + n, source_identifier="123", source_app_id=DROP)),
      "4.0 with neither source-app-id nor source-domain, 3-digit source, no value")
    n = "4.0-index-1-coarse-low.json"
    v(n, skan_signed(skan("4.0", d + n, source_identifier="12", postback_sequence_index=1,
                          coarse_conversion_value="low")), "4.0 second postback (index 1), coarse low")
    n = "4.0-index-2-coarse-high.json"
    v(n, skan_signed(skan("4.0", d + n, source_identifier="12", postback_sequence_index=2, redownload=True,
                          coarse_conversion_value="high")), "4.0 third postback (index 2), redownload, coarse high")
    n = "4.0-nonwinning-source-domain.json"
    v(n, skan_signed(skan("4.0", d + n, did_win=False, source_app_id=DROP, source_domain="example.com")),
      "4.0 nonwinning with source-domain: only source-app-id is ruled out for nonwinning postbacks")
    n = "4.0-country-code.json"
    v(n, skan_signed(skan("4.0", d + n, conversion_value=7, country_code="US")),
      "4.0 with an unsigned country-code US and fine value 7")
    n = "4.0-source-identifier-leading-zero.json"
    v(n, skan_signed(skan("4.0", d + n, source_identifier="07")), "4.0 source-identifier \"07\" (2 digits)")
    n = "4.0-escaped-strings.json"
    b = skan("4.0", d + n, ad_network_id=Raw('"fixture.sk\\u0061dnetwork"'), source_app_id=DROP,
             source_domain=Raw('"shop.example\\u002ecom"'))
    v(n, skan_signed(b), "strings written with JSON escapes (\\u0061, \\u002e): signed as decoded")
    n = "4.0-non-ascii-source-domain.json"
    v(n, skan_signed(skan("4.0", d + n, source_app_id=DROP, source_domain="b\u00fccher.example")),
      "source-domain with a non-ASCII letter: the signed string is UTF-8")
    n = "4.0-app-id-max.json"
    v(n, skan_signed(skan("4.0", d + n, app_id=U64_MAX, source_app_id=0)),
      "app-id 2^64-1 and source-app-id 0 (integer bounds)")
    n = "4.0-unknown-extra-members.json"
    v(n, skan_signed(skan("4.0", d + n, campaign_id=42, fixture_extra={"note": "unsigned", "n": [1, True]})),
      "unknown extras and a campaign-id (not signed in 4.0): kept as unsigned members")
    # several items in one file, one per line
    n = "versions.jsonl"
    items = [skan_signed(skan(None, d + n + "#1")), skan_signed(skan("2.1", d + n + "#3")),
             skan_signed(skan("4.0", d + n + "#4", conversion_value=1))]
    text = "# one SKAdNetwork postback per line\n" + "\n".join(cj(b) for b in items) + "\n"
    FILES[d + n] = text.encode("utf-8")
    for line, b, what in [(2, items[0], "1.0 on one line"), (3, items[1], "2.1 on one line"),
                          (4, items[2], "4.0 on one line")]:
        skan_add(d + n, b, line=line, what=what, text=None)


def skadnetwork_invalid():
    d = "skadnetwork/invalid/"

    def i(name, rule, b, what, **kw):
        skan_add(d + name, b, rule=rule, what=f"{rule}: {what}", **kw)

    # S1: version
    for n, version, what in [
        ("s1-version-5.0.json", "5.0", "version \"5.0\" (unknown)"),
        ("s1-version-2.3.json", "2.3", "version \"2.3\" (unknown)"),
        ("s1-version-4.json", "4", "version \"4\" (not \"4.0\")"),
        ("s1-version-padded.json", " 4.0", "version \" 4.0\" (leading space)"),
        ("s1-version-empty.json", "", "version \"\""),
        ("s1-version-number.json", Raw("4.0"), "version is the number 4.0, not a string"),
        ("s1-version-null.json", None, "version is null"),
    ]:
        b = merge(skan("4.0", d + n), {"version": version})
        i(n, "S1", merge(b, {"attribution-signature": skan_signature(b, order=SKAN_ORDERS["4.0"],
                                                                      key=SKAN_P256)}), what)
    # S2: the version's members and their JSON types (a signature is present but never checked)
    for n, version, over, what in [
        ("s2-1.0-missing-transaction-id.json", None, {"transaction-id": DROP}, "1.0 without transaction-id"),
        ("s2-1.0-missing-campaign-id.json", None, {"campaign-id": DROP}, "1.0 without campaign-id"),
        ("s2-2.1-missing-redownload.json", "2.1", {"redownload": DROP}, "2.1 without redownload"),
        ("s2-2.2-missing-fidelity-type.json", "2.2", {"fidelity-type": DROP}, "2.2 without fidelity-type"),
        ("s2-3.0-missing-did-win.json", "3.0", {"did-win": DROP}, "3.0 without did-win"),
        ("s2-4.0-missing-postback-sequence-index.json", "4.0", {"postback-sequence-index": DROP},
         "4.0 without postback-sequence-index"),
        ("s2-4.0-campaign-id-not-source-identifier.json", "4.0", {"source-identifier": DROP, "campaign-id": 42},
         "4.0 with campaign-id instead of source-identifier"),
        ("s2-campaign-id-string.json", "2.1", {"campaign-id": "42"}, "campaign-id is the string \"42\""),
        ("s2-app-id-fraction.json", None, {"app-id": Raw("1108187390.0")}, "app-id 1108187390.0 (a fraction)"),
        ("s2-app-id-exponent.json", "3.0", {"app-id": Raw("1.10818739e9")}, "app-id with an exponent"),
        ("s2-app-id-negative.json", "2.1", {"app-id": -1}, "app-id -1"),
        ("s2-app-id-2-64.json", "4.0", {"app-id": 2**64}, "app-id 2^64 (beyond 64 bits)"),
        ("s2-redownload-string.json", "2.1", {"redownload": "true"}, "redownload is the string \"true\""),
        ("s2-redownload-number.json", "3.0", {"redownload": 1}, "redownload is 1"),
        ("s2-source-app-id-string.json", "2.2", {"source-app-id": "1234567891"},
         "source-app-id (optional, present) is a string"),
        ("s2-source-identifier-integer.json", "4.0", {"source-identifier": 5239},
         "source-identifier is the integer 5239 (a string in postbacks)"),
        ("s2-source-domain-number.json", "4.0", {"source-app-id": DROP, "source-domain": 1},
         "source-domain is a number"),
        ("s2-did-win-null.json", "3.0", {"did-win": None}, "did-win is null"),
        ("s2-transaction-id-number.json", "4.0", {"transaction-id": 12345}, "transaction-id is a number"),
        ("s2-ad-network-id-array.json", "2.0", {"ad-network-id": [SKAN_NET]}, "ad-network-id is an array"),
        ("s2-fidelity-type-negative.json", "2.2", {"fidelity-type": -1},
         "fidelity-type -1 (integers are 0 ... 2^64-1 before any value rule)"),
        ("s2-postback-sequence-index-fraction.json", "4.0", {"postback-sequence-index": Raw("0.0")},
         "postback-sequence-index 0.0"),
    ]:
        b = merge(skan(version, d + n), over)
        order = SKAN_ORDERS["1.0" if version is None else version]
        sig = skan_signature(b, order=order, key=skan_key("1.0" if version is None else version))
        i(n, "S2", merge(b, {"attribution-signature": sig}), what)

    # S3: the signature
    def tampered(name, version, change, what, **kw):
        b = skan_signed(skan(version, d + name, **kw))
        i(name, "S3", merge(b, change), what)

    tampered("s3-tampered-app-id.json", "4.0", {"app-id": 1108187391}, "app-id changed after signing")
    tampered("s3-tampered-did-win.json", "3.0", {"did-win": False, "source-app-id": DROP},
             "did-win and source-app-id changed after signing")
    tampered("s3-tampered-campaign-id-p192.json", "2.0", {"campaign-id": 43}, "2.0: campaign-id changed after signing")
    tampered("s3-tampered-1.0-transaction-id-p192.json", None, {"transaction-id": tid("another")},
             "1.0: transaction-id changed after signing")
    tampered("s3-source-app-id-added.json", "2.1", {"source-app-id": 1234567891},
             "source-app-id added after signing (the signature covers only the members present)",
             source_app_id=DROP)
    n = "s3-4.0-signed-by-p192-key.json"
    b = skan("4.0", d + n)
    i(n, "S3", merge(b, {"attribution-signature": skan_signature(b, order=SKAN_ORDERS["4.0"], key=SKAN_P192)}),
      "4.0 signed with the P-192 test key (4.0 uses the P-256 key)")
    n = "s3-2.0-signed-by-p256-key.json"
    b = skan("2.0", d + n)
    i(n, "S3", merge(b, {"attribution-signature": skan_signature(b, order=SKAN_ORDERS["2.0"], key=SKAN_P256)}),
      "2.0 signed with the P-256 test key (2.0 uses the P-192 key)")
    n = "s3-1.0-signed-by-p256-key.json"
    b = skan(None, d + n)
    i(n, "S3", merge(b, {"attribution-signature": skan_signature(b, order=SKAN_ORDERS["1.0"], key=SKAN_P256)}),
      "1.0 signed with the P-256 test key")
    n = "s3-2.1-signed-by-another-p256-key.json"
    b = skan("2.1", d + n)
    i(n, "S3", merge(b, {"attribution-signature": skan_signature(b, order=SKAN_ORDERS["2.1"], key=APPLE)}),
      "2.1 signed with the fixture-apple-identifier-0 key, not the SKAdNetwork test key")
    for n, version, order, what in [
        ("s3-2.1-signed-with-2.2-order.json", "2.1", "2.2",
         "2.1 carrying fidelity-type, signed over the 2.2 order (the fallback goes only from 2.2 to 2.1)"),
        ("s3-3.0-signed-with-2.1-order.json", "3.0", "2.1", "3.0 signed over the 2.0/2.1 order (no fallback for 3.0)"),
        ("s3-4.0-signed-with-3.0-order.json", "4.0", "3.0", "4.0 signed over the 3.0 order"),
    ]:
        b = skan(version, d + n, fidelity_type=1)
        if version == "4.0":
            b = merge(b, {"campaign-id": 42})
        i(n, "S3", merge(b, {"attribution-signature": skan_signature(b, order=SKAN_ORDERS[order],
                                                                      key=skan_key(version))}), what)
    n = "s3-2.2-neither-order.json"
    b = skan_signed(skan("2.2", d + n), order=SKAN_ORDERS["2.1"], key=SKAN_P256)
    i(n, "S3", merge(b, {"redownload": True}), "2.2 signed over the 2.1 order, then redownload changed")
    for n, message, what in [
        ("s3-separator-pipe.json", lambda b: skan_string(b, SKAN_ORDERS["4.0"]).replace(SEP, "|"),
         "signed over the values joined by | instead of U+2063"),
        ("s3-booleans-as-digits.json",
         lambda b: skan_string(merge(b, {"redownload": 0, "did-win": 1}), SKAN_ORDERS["4.0"]),
         "signed with Booleans written 1 and 0 instead of true and false"),
        ("s3-absent-source-app-id-signed-empty.json",
         lambda b: skan_string(b, SKAN_ORDERS["4.0"]).replace(f"{SEP}false{SEP}", f"{SEP}false{SEP}{SEP}", 1),
         "the absent source-app-id signed as an empty value (absent members are left out)"),
        ("s3-signed-over-escaped-text.json",
         lambda b: skan_string(b, SKAN_ORDERS["4.0"]).replace("fixture.skadnetwork", "fixture.sk\\u0061dnetwork"),
         "ad-network-id written with a \\u0061 escape and signed over the escaped text (values are signed decoded)"),
    ]:
        b = skan("4.0", d + n, source_app_id=DROP, ad_network_id=Raw('"fixture.sk\\u0061dnetwork"'))
        sig = skan_signature(b, key=SKAN_P256, message=message(b).encode("utf-8"))
        i(n, "S3", merge(b, {"attribution-signature": sig}), what)
    # the signature's own encoding
    n = "s3-signature-base64url.json"
    while True:
        b = skan_signed(skan("4.0", d + n))
        if "+" in b["attribution-signature"] or "/" in b["attribution-signature"]:
            break
    b["attribution-signature"] = b["attribution-signature"].replace("+", "-").replace("/", "_")
    i(n, "S3", b, "attribution-signature in the base64url alphabet (- and _)")
    n = "s3-signature-unpadded.json"
    while True:
        b = skan_signed(skan("4.0", d + n))
        if b["attribution-signature"].endswith("="):
            break
    b["attribution-signature"] = b["attribution-signature"].rstrip("=")
    i(n, "S3", b, "attribution-signature without its = padding")
    n = "s3-signature-line-break.json"
    b = skan_signed(skan("4.0", d + n))
    sig = b["attribution-signature"]
    b["attribution-signature"] = sig[:40] + "\n" + sig[40:]
    i(n, "S3", b, "attribution-signature with a line break inside (\\n)")
    n = "s3-signature-empty.json"
    i(n, "S3", merge(skan("4.0", d + n), {"attribution-signature": ""}), "attribution-signature is empty")
    n = "s3-signature-number.json"
    i(n, "S3", merge(skan("2.1", d + n), {"attribution-signature": 12345}), "attribution-signature is a number")
    n = "s3-signature-null.json"
    i(n, "S3", merge(skan(None, d + n), {"attribution-signature": None}), "attribution-signature is null")
    n = "s3-signature-raw-r-s.json"
    b = skan("4.0", d + n)
    r, s_ = sign_rs(SKAN_P256, skan_string(b, SKAN_ORDERS["4.0"]).encode("utf-8"))
    raw = r.to_bytes(32, "big") + s_.to_bytes(32, "big")
    i(n, "S3", merge(b, {"attribution-signature": base64.b64encode(raw).decode()}),
      "a correct signature as raw 64-byte r||s (JWS form) instead of DER")
    n = "s3-signature-der-trailing-byte.json"
    b = skan("2.1", d + n)
    der = base64.b64decode(skan_signature(b)) + b"\x00"
    i(n, "S3", merge(b, {"attribution-signature": base64.b64encode(der).decode()}),
      "a correct DER signature followed by one zero byte")
    n = "s3-signature-der-long-form-length-p192.json"
    b = skan("2.0", d + n)
    der = base64.b64decode(skan_signature(b))
    assert der[0] == 0x30 and der[1] < 0x80
    ber = bytes([0x30, 0x81]) + der[1:]
    i(n, "S3", merge(b, {"attribution-signature": base64.b64encode(ber).decode()}),
      "a correct P-192 signature with its SEQUENCE length in long form (BER, not DER)")

    # S4: values of signed members (signature valid)
    def s4(name, version, what, **over):
        i(name, "S4", skan_signed(skan(version, d + name, **over)), what)

    s4("s4-fidelity-type-2.json", "2.2", "fidelity-type 2", fidelity_type=2)
    s4("s4-fidelity-type-2-4.0.json", "4.0", "fidelity-type 2 in 4.0", fidelity_type=2)
    s4("s4-source-identifier-1-digit.json", "4.0", "source-identifier \"7\"", source_identifier="7")
    s4("s4-source-identifier-5-digits.json", "4.0", "source-identifier \"12345\"", source_identifier="12345")
    s4("s4-source-identifier-non-digit.json", "4.0", "source-identifier \"12a\"", source_identifier="12a")
    s4("s4-source-identifier-empty.json", "4.0", "source-identifier \"\"", source_identifier="")
    s4("s4-postback-sequence-index-3.json", "4.0", "postback-sequence-index 3", postback_sequence_index=3)
    s4("s4-source-app-id-and-source-domain.json", "4.0", "both source-app-id and source-domain (both signed)",
       source_domain="example.com")
    s4("s4-nonwinning-source-app-id-3.0.json", "3.0", "3.0 nonwinning with source-app-id", did_win=False)
    s4("s4-nonwinning-source-app-id-4.0.json", "4.0", "4.0 nonwinning with source-app-id", did_win=False)
    s4("s4-transaction-id-empty.json", "2.1", "transaction-id \"\"", transaction_id="")
    s4("s4-ad-network-id-empty.json", None, "1.0 with ad-network-id \"\"", ad_network_id="")
    # S4: U+2063 inside a signed string value (spec section 9): genuinely signed over the version's own order, yet
    # refused, because the signed string no longer says where one value ends.
    s4("s4-separator-in-ad-network-id.json", "2.1", "ad-network-id holds U+2063", ad_network_id=f"a{SEP}b.example")
    s4("s4-separator-in-transaction-id.json", "4.0", "transaction-id holds U+2063",
       transaction_id=tid(d + "sep") + SEP + "x")
    s4("s4-separator-in-source-domain.json", "4.0", "source-domain holds U+2063",
       source_app_id=DROP, source_domain=f"example.com{SEP}")
    s4("s4-separator-only-ad-network-id-p192.json", None, "1.0 with ad-network-id U+2063 alone",
       ad_network_id=SEP)
    n = "s4-resplit-2.0-as-1.0-p192.json"
    genuine, resplit = skan_resplit(d + n)
    i(n, "S4", resplit, "a genuine 2.0 postback re-split as a 1.0 body (U+2063 moved into ad-network-id and "
      "transaction-id); its signature verifies under the same P-192 key")
    s4("s4-and-s5.json", "2.2", "fidelity-type 2 and conversion-value 64: the signed-field error comes first",
       fidelity_type=2, conversion_value=64)

    # S5: unsigned members (signature valid)
    def s5(name, version, what, **over):
        i(name, "S5", skan_signed(skan(version, d + name, **over)), what)

    s5("s5-conversion-value-64.json", "3.0", "conversion-value 64", conversion_value=64)
    s5("s5-conversion-value-negative.json", "4.0", "conversion-value -1", conversion_value=-1)
    s5("s5-conversion-value-string.json", "2.1", "conversion-value \"20\"", conversion_value="20")
    s5("s5-conversion-value-fraction.json", "2.2", "conversion-value 20.0", conversion_value=Raw("20.0"))
    s5("s5-conversion-value-64-1.0.json", None, "1.0 with conversion-value 64 (S5 applies to every version)",
       conversion_value=64)
    s5("s5-coarse-extreme.json", "4.0", "coarse-conversion-value \"extreme\"", coarse_conversion_value="extreme")
    s5("s5-coarse-capitalised.json", "4.0", "coarse-conversion-value \"High\"", coarse_conversion_value="High")
    s5("s5-coarse-number.json", "4.0", "coarse-conversion-value 2", coarse_conversion_value=2)
    s5("s5-fine-and-coarse.json", "4.0", "both conversion-value and coarse-conversion-value",
       conversion_value=5, coarse_conversion_value="low")
    s5("s5-country-code-lowercase.json", "4.0", "country-code \"us\"", country_code="us")
    s5("s5-country-code-3-letters.json", "4.0", "country-code \"USA\"", country_code="USA")

    # J1: the body's JSON (before anything SKAdNetwork)
    n = "j1-duplicate-transaction-id.json"
    b = skan_signed(skan("4.0", d + n))
    pairs = Pairs(b.items())
    pairs.append(("transaction-id", tid("someone else's transaction")))
    i(n, "J1", b, "transaction-id twice with different values (a last-wins parser would see another install)",
      text=pj(pairs))
    n = "j1-leading-zero-campaign-id.json"
    b = skan_signed(skan("2.1", d + n))
    i(n, "J1", b, "campaign-id written 042 (a leading zero is not JSON)",
      text=pj(merge(b, {"campaign-id": Raw("042")})))


def skan_resplit(name: str) -> tuple[dict, dict]:
    """A genuine 2.0 body (P-192) and the same signature on a 1.0 body whose values hold the separator: the two
    signed strings are byte-identical, so only the separator rule tells them apart (spec section 9)."""
    genuine = skan_signed(skan("2.0", name, source_app_id=DROP))
    resplit = {
        "ad-network-id": f"2.0{SEP}{genuine['ad-network-id']}",
        "campaign-id": genuine["campaign-id"],
        "app-id": genuine["app-id"],
        "transaction-id": f"{genuine['transaction-id']}{SEP}false",
        "attribution-signature": genuine["attribution-signature"],
    }
    assert skan_string(resplit, SKAN_ORDERS["1.0"]) == skan_string(genuine, SKAN_ORDERS["2.0"])
    return genuine, resplit


def skadnetwork_dedupe():
    """D1 on transaction-id plus postback-sequence-index (its own folder: mixed verdicts)."""
    d = "skadnetwork/dedupe/"
    path = d + "transaction-replays.jsonl"
    t = skan("4.0", path + "#T", coarse_conversion_value="low")
    t0 = skan_signed(t)
    t1 = skan_signed(merge(t, {"postback-sequence-index": 1, "source-identifier": "52"}))
    u = skan("4.0", path + "#U")
    forged_u = merge(skan_signed(merge(u, {"app-id": 1})), {"app-id": u["app-id"]})
    genuine_u = skan_signed(u)
    v = skan_signed(skan("3.0", path + "#V"))
    lines = [
        "# SKAdNetwork D1 fixture: run without --expect, with the SKAdNetwork test keys; see Fixtures/README.md",
        cj(t0),                                                      # 2 valid
        cj(t1),                                                      # 3 valid: same transaction, index 1
        cj(merge(t0, {"coarse-conversion-value": "high"})),          # 4 duplicate of 2 (unsigned value changed)
        cj(forged_u),                                                # 5 bad signature, claims U
        cj(genuine_u),                                               # 6 valid: the forgery does not shadow it
        cj(v),                                                       # 7 valid: 3.0, no index (counts as 0)
        cj(merge(v, {"postback-sequence-index": 1})),                # 8 duplicate of 7: an unsigned index is ignored
    ]
    FILES[path] = ("\n".join(lines) + "\n").encode()
    skan_add(path, t0, line=2, verdict="valid", environment="custom", text=None,
             what="first postback of transaction T (4.0, index 0)")
    skan_add(path, t1, line=3, verdict="valid", environment="custom", text=None,
             what="transaction T again at index 1: another conversion window, not a duplicate")
    skan_add(path, t0, line=4, rule="D1", duplicate_of=2, text=None, warnings=["D2"],
             what="D1: transaction T index 0 replayed with a changed unsigned coarse value (duplicate of line 2); "
             "D2 names it")
    skan_add(path, forged_u, line=5, rule="S3", text=None,
             what="S3: forged postback claiming transaction U (app-id changed back after signing)")
    skan_add(path, genuine_u, line=6, verdict="valid", environment="custom", text=None,
             what="genuine transaction U: valid, because the forgery on line 5 does not count as seen")
    skan_add(path, v, line=7, verdict="valid", environment="custom", text=None,
             what="3.0 postback of transaction V (no postback-sequence-index: deduplicated as index 0)")
    skan_add(path, v, line=8, rule="D1", duplicate_of=7, text=None, warnings=["D2"],
             what="D1: V again with an unsigned postback-sequence-index 1 added: not signed in 3.0, so ignored; "
             "D2 names it")

    # Spec sections 2 and 9: transaction ids compare by code points; a re-split body is refused, not counted.
    path = d + "exact-transaction-ids.jsonl"
    precomposed = skan_signed(skan("4.0", path + "#P", transaction_id="\u00c5-" + tid(path + "#P")))
    decomposed = skan_signed(skan("4.0", path + "#D", transaction_id="A\u030a-" + tid(path + "#P")))
    genuine, resplit = skan_resplit(path + "#R")
    lines = [
        "# transaction ids equal only under Unicode equivalence, and a 2.0 postback re-split as 1.0",
        cj(precomposed),                                             # 2 valid
        cj(decomposed),                                              # 3 valid: another transaction-id
        cj(genuine),                                                 # 4 valid (2.0, P-192)
        cj(resplit),                                                 # 5 S4: the same signature re-read as 1.0
        cj(genuine),                                                 # 6 duplicate of 4
    ]
    FILES[path] = ("\n".join(lines) + "\n").encode()
    skan_add(path, precomposed, line=2, verdict="valid", environment="custom", text=None,
             what="transaction-id starting with U+00C5")
    skan_add(path, decomposed, line=3, verdict="valid", environment="custom", text=None,
             what="transaction-id starting with A + U+030A: canonically equivalent to line 2, yet another id")
    skan_add(path, genuine, line=4, verdict="valid", environment="custom", text=None,
             what="a genuine 2.0 postback (P-192 test key)")
    skan_add(path, resplit, line=5, rule="S4", text=None,
             what="S4: line 4's signature on a 1.0 body with U+2063 moved into ad-network-id and transaction-id")
    skan_add(path, genuine, line=6, rule="D1", duplicate_of=4, text=None,
             what="D1: line 4 again (the refused re-split on line 5 did not change what was seen)")


# ============================================================================================ Apple

def apple_copies(vectors: Path | None):
    for src, (dst, digest) in APPLE_COPIES.items():
        data = None
        if vectors is not None and (vectors / "apple" / src).exists():
            data = (vectors / "apple" / src).read_bytes()
        elif (HERE / dst).exists():
            data = (HERE / dst).read_bytes()
        if data is None:
            sys.exit(f"error: Apple example {src} not found (pass --vectors DIR with DIR/apple/{src})")
        if hashlib.sha256(data).hexdigest() != digest:
            sys.exit(f"error: {src} does not have the expected SHA-256 {digest}")
        FILES[dst] = data
    add("valid/apple/postback-development-valid.json", None, tier=3, environment="development",
        what="Apple's current postback example (kid apple-development-identifier/1, network "
             "development.adattributionkit, so no P5); valid with --allow-development")
    add("invalid/apple/postback-production-bad-signature.json", None, rule="J5",
        what="J5: Apple's earlier postback example, kid apple-cas-identifier/0; its signature matches no Apple key "
             "(its fields would warn T4 and T5 if it got that far)")
    add("invalid/apple/impression-example.jws", None, rule="J3", kind="impression", kind_certain=False,
        what="J3: Apple's impression example, kid example.adattributionkit, whose key is not published")


# =========================================================================================== output

README_HEAD = """\
# Fixtures

Signed test fixtures for `postback-verify`: one item per file, named after what it tests, for every rule of
the specification's section 7 that a fixture can exercise. Generated by
[`make-fixtures.py`](make-fixtures.py); expectations are in [`manifest.json`](manifest.json) and in the table
below (both produced from the same data). The expectations were written from the specification, not from the
output of any verifier.

> **TEST-ONLY KEYS.** `keys/*.private.pem` are throw-away P-256 (and one P-192) private keys committed on
> purpose so that anyone can regenerate the fixtures. They protect nothing and must never be trusted outside
> these tests. `fixture-apple-identifier-0` and `fixture-skadnetwork-*` are **not** Apple's keys; they only
> stand in for them.

## Keys

| kid (for `--key`) | public key | private key | signs |
|---|---|---|---|
| `fixture.adattributionkit` | `keys/fixture.adattributionkit.pem` | `keys/fixture.adattributionkit.private.pem` | impressions (an ad network's key) |
| `fixture-apple-identifier/0` | `keys/fixture-apple-identifier-0.pem` | `keys/fixture-apple-identifier-0.private.pem` | postbacks (stands in for Apple's key) |
| `skadnetwork-p256` (`--skadnetwork-key-p256`) | `keys/fixture-skadnetwork-p256.pem` | `keys/fixture-skadnetwork-p256.private.pem` | SKAdNetwork 2.1 to 4.0 in `skadnetwork/` (stands in for Apple's P-256 key) |
| `skadnetwork-p192` (`--skadnetwork-key-p192`) | `keys/fixture-skadnetwork-p192.pem` | `keys/fixture-skadnetwork-p192.private.pem` | SKAdNetwork 1.0 and 2.0 in `skadnetwork/` (P-192; stands in for Apple's P-192 key) |

Postback payloads name kid `fixture-apple-identifier/0` and `ad-network-identifier`
`fixture.adattributionkit`; impressions name kid `fixture.adattributionkit`. Headers are
`{"kid":...,"alg":"ES256"}`, payloads compact JSON, base64url unpadded, signatures raw 64-byte r||s
(a random mix of high-S and low-S; `high-s-signature.*` are forced to s > n/2).

## Running

From the repository root:

```sh
{CMD_VALID}
{CMD_INVALID}
{CMD_DEDUPE}   # mixed verdicts: exit status 1 is expected
{CMD_SKAN_VALID}
{CMD_SKAN_INVALID}
{CMD_SKAN_DEDUPE}   # mixed verdicts: exit status 1 is expected
```

Without the `--key` options the fixture kids are unknown, so their items are `unknown-key`: nothing trusts a key
by itself, and each such record names the `--key` option and the fixture's key file to give it.

`valid/` is checked **with** `--allow-development` (Apple's development example lives there) and `invalid/`
**without** it (so `apple-development-identifier/*` kids are `untrusted-key`, decided before any signature check).
`dedupe/` holds the only multi-item file: D1 needs a valid first occurrence in the same run, which cannot
sit in `invalid/` under `--expect invalid`.

Apple's SKAdNetwork 2.1, 2.2 and 3.0 winning examples (`valid/skadnetwork-apple/`) share one `transaction-id`
and no `postback-sequence-index`; they are still all valid in one run because the verifier's SKAdNetwork
deduplication key also holds the signed `version` and `ad-network-id` (a genuine retry repeats both).

`skadnetwork/` holds our own SKAdNetwork postbacks, signed with the test-only SKAdNetwork keys, so it is checked
with `--skadnetwork-key-p256` and `--skadnetwork-key-p192` (results then say environment `custom`); Apple's
SKAdNetwork examples are in `valid/skadnetwork-apple/` and `invalid/skadnetwork-apple/`, checked with Apple's
built-in keys by the first two commands. `skadnetwork/dedupe/` is D1 on `transaction-id` plus
`postback-sequence-index`, with mixed verdicts like `dedupe/`.

`p192/` holds ECDSA P-192 / SHA-256 vectors (DER signatures, as SKAdNetwork 1.0 and 2.0 sign), not postbacks:
written by their own script, `p192/make-p192-vectors.py`, from a fixed seed, labelled by OpenSSL, and read by
`P192VectorTests` (see `p192/PROVENANCE.md`). This script leaves them alone.

## Regenerating

```sh
python3 Fixtures/make-fixtures.py                 # Apple copies from Tests/AttributionTests/Vectors/reference
python3 Fixtures/make-fixtures.py --vectors DIR   # or from DIR/apple (also $POSTBACK_VERIFY_VECTORS)
```

Python 3.11 with the `cryptography` package. Keys are created only when missing, so a re-run keeps them;
`valid/`, `invalid/` and `dedupe/` are rewritten. ECDSA signatures are randomised, so tokens differ between
runs while names, payloads, `manifest.json` and this README stay the same.

## Provenance of the Apple copies

`valid/apple/postback-development-valid.json`, `invalid/apple/postback-production-bad-signature.json` and
`invalid/apple/impression-example.jws` are Apple's examples from the AdAttributionKit documentation
("Verifying a postback", "Identifying the parameters in a postback", "Generating JWS impressions"), copied
byte-exact from `Tests/AttributionTests/Vectors/reference/apple/` (see its README); the script checks their SHA-256. They are Apple's
data, not generated here, and they are the only fixtures signed by real keys:

| file | SHA-256 |
|---|---|
{APPLE_ROWS}

Apple's SKAdNetwork examples ("Verifying an install-validation postback" and the pages on earlier postback
versions) are copied byte-exact from `Tests/AttributionTests/Vectors/reference/skadnetwork/` the same way. The 2.0 one is Apple's text
with two missing commas repaired (see that folder's README); the 1.0 and 2.0 ones carry a placeholder signature.

| file | SHA-256 |
|---|---|
{SKAN_ROWS}

## manifest.json

A JSON array, one entry per item (one per file, except `dedupe/`, `skadnetwork/dedupe/` and
`skadnetwork/valid/versions.jsonl`, which have one per non-skipped line):

| member | meaning |
|---|---|
| `path` | relative to `Fixtures/` |
| `line` | 1-based line of the item (1 for `.json` files) |
| `verdict` | `valid` or `invalid` |
| `code`, `rule` | the **first** error (error code and rule ID), `null` when valid |
| `warnings` | rule IDs of all warnings the spec implies (sorted; `[]` for items rejected by J rules) |
| `allowDevelopment` | whether the expectation assumes `--allow-development` (true for `valid/`) |
| `kind` | `postback`, `impression`, `skadnetwork` or `unknown` |
| `kindCertain` | `false` when the kind can only be read from a payload that was never authenticated (J2-J5 failures of a bare token: the kind shown is the fixture's intent) or from a body rejected by the JSON rules (shown `unknown`; a verifier that still recognises the body may say `postback` or `skadnetwork`) |
| `signature` | expected `signature` member: `verified`, `failed` or `not-checked` |
| `tier` | lowest crowd-anonymity tier for valid postbacks, else `null` |
| `environment` | valid items only: `custom` (a `--key` or `--skadnetwork-key-*` key), `development` or `production` |
| `duplicateOf` | D1 items only: the line of the first occurrence |
| `what` | short description |
| `skadnetworkTestKeys` | only under `skadnetwork/`, always `true`: verify with the test-only SKAdNetwork keys in place of Apple's |
| `keyID` | SKAdNetwork items whose version was read: `skadnetwork-p256` or `skadnetwork-p192` |
| `signedString` | SKAdNetwork items that reached the signature check: the exact U+2063-joined string the verifier must report (the one that verified, or the version's own order when none did) |

Rules of thumb used for the oracle: tier = 0 without `marketplace-identifier`; else 3 at index 0 with
`publisher-item-identifier` or `country-code`; else 2 with a fine value or a 3-4 digit source id; else 1.
Every postback body has `ad-interaction-type` (so no U4) unless the fixture tests its absence; bare
postback JWS have no unsigned members, so U rules never apply to them. Impression timestamps are
2024-06-28 (no I3 without a user-set age limit) except the year-2100 fixture.
The payload nesting depth counts the outermost object as 1 (`payload-nesting-16` is allowed,
`nesting-17` is not).
SKAdNetwork signed strings are built by the script from the spec's section 9 table: the version's members in
order, optional `source-app-id` and `source-domain` left out when absent, joined by U+2063, Booleans
`true`/`false`, integers in decimal, strings as decoded from JSON. No version member means 1.0; 1.0 and 2.0 are
signed with the P-192 key, 2.1 and later with the P-256 key. S rules stop at the first failing stage: S1
(version) and S2 (members and types) come before the signature, S4 and S5 after it.

## Rules without a fixture

- **P5** (`apple-development-identifier/1` with another `ad-network-identifier`, a warning): only Apple can sign
  with that kid. Apple's development example (`valid/apple/`) has `development.adattributionkit`, so it does not warn.
- **D1** and **D2** are covered by `dedupe/` and `skadnetwork/dedupe/` only, not by `valid/` or `invalid/` (see
  Running).

## Fixtures

{TABLE}
"""


def md_escape(s: str) -> str:
    return s.replace("|", "\\|")


def write_outputs():
    for top in ("valid", "invalid", "dedupe", "skadnetwork"):
        shutil.rmtree(HERE / top, ignore_errors=True)
    for path, data in FILES.items():
        target = HERE / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    entries = sorted(ENTRIES, key=lambda e: (e["path"].encode(), e["line"]))
    # every file has at least one entry and every entry a file
    assert {e["path"] for e in entries} == set(FILES), set(FILES) ^ {e["path"] for e in entries}
    (HERE / "manifest.json").write_text(json.dumps(entries, indent=2, ensure_ascii=False) + "\n")

    rows = ["| file | line | expected | first error | warnings | kind | tier | what |",
            "|---|---|---|---|---|---|---|---|"]
    for e in entries:
        err = f"`{e['code']}` ({e['rule']})" if e["code"] else ""
        kind = e["kind"] + ("" if e["kindCertain"] else "*")
        rows.append(f"| `{e['path']}` | {e['line']} | {e['verdict']} | {err} | {', '.join(e['warnings'])} | "
                    f"{kind} | {'' if e['tier'] is None else e['tier']} | {md_escape(e['what'])} |")
    counts = {}
    for path in FILES:
        folder = path.rsplit("/", 1)[0]
        counts[folder] = counts.get(folder, 0) + 1
    count_rows = ["| folder | files |", "|---|---|"] + [f"| `{k}/` | {v} |" for k, v in sorted(counts.items())]
    table = ("\n".join(count_rows) + "\n\n" + "`*` = kind not certain (see `kindCertain`).\n\n" + "\n".join(rows))
    apple_rows = "\n".join(f"| `{dst}` | `{digest}` |" for dst, digest in APPLE_COPIES.values())
    skan_rows = "\n".join(f"| `{dst}` | `{digest}` |" for dst, digest in SKAN_COPIES.values())
    readme = (README_HEAD.replace("{CMD_VALID}", CMD_VALID).replace("{CMD_INVALID}", CMD_INVALID)
              .replace("{CMD_DEDUPE}", CMD_DEDUPE).replace("{APPLE_ROWS}", apple_rows).replace("{TABLE}", table)
              .replace("{CMD_SKAN_VALID}", CMD_SKAN_VALID).replace("{CMD_SKAN_INVALID}", CMD_SKAN_INVALID)
              .replace("{CMD_SKAN_DEDUPE}", CMD_SKAN_DEDUPE).replace("{SKAN_ROWS}", skan_rows))
    (HERE / "README.md").write_text(readme)
    total = sum(counts.values())
    print(f"wrote {total} fixture files, {len(entries)} manifest entries")
    for k, v in sorted(counts.items()):
        print(f"  {k}/: {v}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default = os.environ.get("POSTBACK_VERIFY_VECTORS") or str(HERE.parent / "Tests" / "AttributionTests" / "Vectors" / "reference")
    ap.add_argument("--vectors", default=default,
                    help="directory holding apple/ and skadnetwork/ (default: %(default)s)")
    args = ap.parse_args()
    vectors = Path(args.vectors)
    global APPLE, IMPR, SKAN_P256, SKAN_P192
    IMPR = load_or_create(NET)
    APPLE = load_or_create("fixture-apple-identifier-0")
    SKAN_P256 = load_or_create("fixture-skadnetwork-p256")
    SKAN_P192 = load_or_create("fixture-skadnetwork-p192", ec.SECP192R1())
    apple_copies(vectors if vectors.is_dir() else None)
    valid_postback_bodies()
    valid_postback_jws()
    valid_impressions()
    invalid_postback_jws()
    invalid_postback_bodies()
    invalid_impressions()
    dedupe()
    skadnetwork_apple_copies(vectors if vectors.is_dir() else None)
    skadnetwork_valid()
    skadnetwork_invalid()
    skadnetwork_dedupe()
    write_outputs()


APPLE = IMPR = SKAN_P256 = SKAN_P192 = None

if __name__ == "__main__":
    main()
