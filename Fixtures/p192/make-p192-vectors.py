#!/usr/bin/env python3
"""Generate ECDSA P-192 (secp192r1) SHA-256 test vectors for the SKAdNetwork 1.0 and 2.0 signature path.

Project Wycheproof has no secp192r1 ECDSA set, so these are our own, made with Python's `cryptography` (OpenSSL):

    python3 Fixtures/p192/make-p192-vectors.py [--seed N]

writes Fixtures/p192/ecdsa_secp192r1_sha256_generated.json.

Shaped to how postback-verify checks a P-192 signature (ECPublicKey.isValidDERSignature): a DER SubjectPublicKeyInfo
key, the SHA-256 of the message, and a DER ECDSA-Sig-Value signature (the `attribution-signature` of a 1.0 or 2.0
postback). Everything is a function of the seed (default below): private keys, messages and nonces come from
SHA-256 of the seed and a label, and the nonce's point k*G is computed by OpenSSL (`derive_private_key(k)`), so
re-running with the same seed writes the same file byte for byte.

Every vector's `result` is what OpenSSL says: each signature is run through `public_key.verify` and each key
through `load_der_public_key`, and the script stops if that answer differs from what the construction intends
(a valid signature, high-S included, must verify; a one-bit flip or an out-of-range scalar must not; a point off
the curve must not load). Nothing here comes from postback-verify's own output.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import platform
from pathlib import Path

import cryptography
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.backends.openssl.backend import backend
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature, encode_dss_signature

DEFAULT_SEED = 0x5CAD192  # "SKAD 192"
OUTPUT = Path(__file__).resolve().parent / "ecdsa_secp192r1_sha256_generated.json"

P = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEFFFFFFFFFFFFFFFF
N = 0xFFFFFFFFFFFFFFFFFFFFFFFF99DEF836146BC9B1B4D22831
B = 0x64210519E59C80E70FA7E9AB72243049FEB8DEECC146B9B1
SPKI_PREFIX = bytes.fromhex("3049301306072a8648ce3d020106082a8648ce3d030101033200")
CURVE = ec.SECP192R1()


def stream(seed: int, label: str) -> int:
    """A 256-bit number from the seed and a label (SHA-256), the source of every choice."""
    return int.from_bytes(hashlib.sha256(f"{seed:x}/{label}".encode()).digest(), "big")


def scalar(seed: int, label: str) -> int:
    """A scalar in [1, n - 1] from the seed and a label."""
    return stream(seed, label) % (N - 1) + 1


def e_of(message: bytes) -> int:
    """e: the leftmost 192 bits of SHA-256(message) (SEC 1 section 4.1.4; n has 192 bits)."""
    return int.from_bytes(hashlib.sha256(message).digest()[:24], "big")


def sign(d: int, message: bytes, k: int) -> tuple[int, int]:
    """(r, s) with nonce k: r = x(k*G) mod n (k*G by OpenSSL), s = k^-1 (e + r d) mod n."""
    x = ec.derive_private_key(k, CURVE).public_key().public_numbers().x
    r = x % N
    s = pow(k, -1, N) * (e_of(message) + r * d) % N
    assert r != 0 and s != 0
    return r, s


def der_integer(value: int) -> bytes:
    body = value.to_bytes(max(1, (value.bit_length() + 8) // 8), "big")
    return b"\x02" + bytes([len(body)]) + body


def der_signature(r: int, s: int) -> bytes:
    """Strict DER ECDSA-Sig-Value for any non-negative r and s (0 and values of 193 bits included)."""
    body = der_integer(r) + der_integer(s)
    return b"\x30" + bytes([len(body)]) + body


def openssl_verifies(key: ec.EllipticCurvePublicKey, signature: bytes, message: bytes) -> bool:
    try:
        key.verify(signature, message, ec.ECDSA(hashes.SHA256()))
        return True
    except InvalidSignature:
        return False


def openssl_loads(spki: bytes) -> bool:
    try:
        loaded = serialization.load_der_public_key(spki)
    except (ValueError, TypeError):
        return False
    return isinstance(loaded, ec.EllipticCurvePublicKey) and loaded.curve.name == "secp192r1"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=lambda text: int(text, 0), default=DEFAULT_SEED)
    parser.add_argument("--output", type=Path, default=OUTPUT)
    seed = parser.parse_args().seed
    output = parser.parse_args().output

    groups = []
    test_id = 0
    for key_index in range(4):
        d = scalar(seed, f"key {key_index}")
        private_key = ec.derive_private_key(d, CURVE)
        public_key = private_key.public_key()
        spki = public_key.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
        assert spki.startswith(SPKI_PREFIX) and len(spki) == len(SPKI_PREFIX) + 49
        # The next key's public key, for "signed under another key".
        other_d = scalar(seed, f"key {(key_index + 1) % 4}")
        tests = []

        def add(comment: str, message: bytes, r: int, s: int, intended: bool, flags: list[str],
                signature: bytes | None = None) -> None:
            nonlocal test_id
            der = signature if signature is not None else der_signature(r, s)
            verified = openssl_verifies(public_key, der, message)
            if verified != intended:
                raise SystemExit(f"key {key_index}, {comment}: OpenSSL says {verified}, the construction {intended}")
            test_id += 1
            tests.append({"tcId": test_id, "comment": comment, "flags": flags, "msg": message.hex(),
                          "sig": der.hex(), "result": "valid" if verified else "invalid"})

        messages = [b"", b"a", b"\x00",
                    # A SKAdNetwork 2.0 signed string's shape (version, ad network, campaign, app, transaction,
                    # redownload, source app), fields separated by U+2063.
                    "2.0\u2063example123.skadnetwork\u206342\u2063525463029\u20636aafb7a5-0394-45be-8d6f-07ab4e1e3d03"
                    "\u2063false\u20631234567891".encode()]
        messages += [hashlib.sha256(f"{seed:x}/message {key_index}/{i}".encode()).digest()[: 7 + 13 * i]
                     for i in range(4)]
        signed = []
        for index, message in enumerate(messages):
            k = scalar(seed, f"nonce {key_index}/{index}")
            r, s = sign(d, message, k)
            low, high = min(s, N - s), max(s, N - s)
            add(f"valid, message {index} ({len(message)} bytes), low S", message, r, low, True,
                ["ValidSignature", "LowS"])
            add(f"valid, message {index} ({len(message)} bytes), high S (n - s)", message, r, high, True,
                ["ValidSignature", "HighS"])
            signed.append((message, r, s))

        # One-bit flips of r, of s and of the message (a few bits each, chosen by the seed), all rejected.
        for index, (message, r, s) in enumerate(signed[:3] + signed[4:5]):
            for flip in range(6):
                bit = stream(seed, f"r bit {key_index}/{index}/{flip}") % 192
                add(f"r with bit {bit} flipped", message, r ^ (1 << bit), s, False, ["ModifiedR"])
                bit = stream(seed, f"s bit {key_index}/{index}/{flip}") % 192
                add(f"s with bit {bit} flipped", message, r, s ^ (1 << bit), False, ["ModifiedS"])
                if message:
                    bit = stream(seed, f"m bit {key_index}/{index}/{flip}") % (8 * len(message))
                    flipped = bytearray(message)
                    flipped[bit // 8] ^= 1 << (bit % 8)
                    add(f"message with bit {bit} flipped", bytes(flipped), r, s, False, ["ModifiedMessage"])
            add("message with a byte appended", message + b"\x00", r, s, False, ["ModifiedMessage"])

        # Out-of-range scalars (SEC 1 4.1.4 step 1: r and s in [1, n - 1]), all rejected.
        message, r, s = signed[3]
        for name, value in [("0", 0), ("n", N), ("n + 1", N + 1), ("p", P), ("2^192 - 1", 2**192 - 1),
                            ("2^192", 2**192), ("r + n (same x mod n)", r + N)]:
            if name.startswith("r + n"):
                add(f"r = {name}", message, value, s, False, ["RangeR"])
                continue
            add(f"r = {name}", message, value, s, False, ["RangeR"])
            add(f"s = {name}", message, r, value, False, ["RangeS"])
        add("r = s = 0", message, 0, 0, False, ["RangeR", "RangeS"])
        add("r = 1, s = 1", message, 1, 1, False, ["SmallRS"])
        add("s = n - s (high S) with r + n", message, r + N, N - s, False, ["RangeR"])
        # Valid under the other key only.
        other_r, other_s = sign(other_d, message, scalar(seed, f"other nonce {key_index}"))
        add("signed under another key", message, other_r, other_s, False, ["WrongKey"])
        # DER that is not strict: OpenSSL refuses it, and so must the table path's parser.
        der = der_signature(r, s)
        add("DER with a byte appended", message, r, s, False, ["BerEncodedSignature"], der + b"\x00")
        add("DER with a long-form sequence length", message, r, s, False, ["BerEncodedSignature"],
            b"\x30\x81" + der[1:])
        padded = b"\x02" + bytes([25]) + b"\x00" + r.to_bytes(24, "big")
        if r >> 184 < 0x80:
            body = padded + der_integer(s)
            add("DER with r padded by a leading zero", message, r, s, False, ["BerEncodedSignature"],
                b"\x30" + bytes([len(body)]) + body)
        add("DER truncated by one byte", message, r, s, False, ["BerEncodedSignature"], der[:-1])

        numbers = public_key.public_numbers()
        groups.append({"keyIndex": key_index, "publicKeyDer": spki.hex(),
                       "publicKeyUncompressed": "04" + f"{numbers.x:048x}{numbers.y:048x}", "tests": tests})

    # Keys OpenSSL refuses to load: points off the curve, coordinates not below p. Each must be rejected at load.
    base = ec.derive_private_key(scalar(seed, "key 0"), CURVE).public_key().public_numbers()
    invalid_keys = []
    for comment, x, y in [("y + 1 (off the curve)", base.x, (base.y + 1) % P),
                          ("x + 1 (off the curve)", (base.x + 1) % P, base.y),
                          ("(0, 0)", 0, 0),
                          ("x = p (not a field element)", P, base.y),
                          ("y + p (not a field element, same residue)", base.x, base.y + P)]:
        if y >= 2**192 or x >= 2**192:
            continue
        on_curve = x < P and y < P and (y * y - (x * x * x - 3 * x + B)) % P == 0
        spki = SPKI_PREFIX + b"\x04" + x.to_bytes(24, "big") + y.to_bytes(24, "big")
        loads = openssl_loads(spki)
        if loads or on_curve:
            raise SystemExit(f"invalid key {comment}: OpenSSL loads it ({loads}) or it is on the curve ({on_curve})")
        invalid_keys.append({"comment": comment, "publicKeyDer": spki.hex(), "result": "invalid"})

    document = {
        "algorithm": "ECDSA",
        "curve": "secp192r1",
        "hash": "SHA-256",
        "signatureEncoding": "DER",
        "header": ["ECDSA P-192 with SHA-256 over the message, DER signatures, as SKAdNetwork 1.0 and 2.0 sign.",
                   "Generated by Fixtures/p192/make-p192-vectors.py; each result is OpenSSL's answer, checked against"
                   " the construction's intent. See Fixtures/p192/PROVENANCE.md."],
        "generator": {
            "script": "Fixtures/p192/make-p192-vectors.py",
            "seed": f"0x{seed:x}",
            "python": platform.python_version(),
            "cryptography": cryptography.__version__,
            "openssl": backend.openssl_version_text(),
        },
        "numberOfTests": sum(len(group["tests"]) for group in groups),
        "testGroups": groups,
        "invalidKeys": invalid_keys,
    }
    output.write_text(json.dumps(document, indent=1) + "\n")
    valid = sum(test["result"] == "valid" for group in groups for test in group["tests"])
    print(f"{output}: {document['numberOfTests']} signatures ({valid} valid), {len(invalid_keys)} invalid keys")


if __name__ == "__main__":
    main()
