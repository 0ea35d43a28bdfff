#!/usr/bin/env python3
"""Prints ECDSA P-256 edge cases as Swift literals for Tests/AttributionTests/P256KeyTableTests.swift.

Each case is made with a known private key (fixed seeds, so the output never changes) through the ECDSA
equations, then checked with `cryptography` (OpenSSL) so the printed label is OpenSSL's verdict, not this
script's intent (both must agree or the script stops). The digest is chosen freely (a test passes it directly):

- u1 = 0: digest 0, or digest n (≡ 0 mod n); a valid signature with R = u2·Q alone.
- u1·G = u2·Q: digest e = r·d, so R = 2·u1·G, the point addition's doubling case; valid.
- R at infinity: digest e = −r·d, so u1·G = −u2·Q; invalid.
- r = n (u2 would be 0 mod n) and s = n: out of range; invalid.
"""
import hashlib
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec, utils

p = 0xffffffff00000001000000000000000000000000ffffffffffffffffffffffff
n = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551
a = p - 3
G = (0x6b17d1f2e12c4247f8bce6e563a440f277037d812deb33a0f4a13945d898c296,
     0x4fe342e2fe1a7f9b8ee7eb4a7c0f9e162bce33576b315ececbb6406837bf51f5)


def add(P, Q):
    if P is None:
        return Q
    if Q is None:
        return P
    if P[0] == Q[0] and (P[1] + Q[1]) % p == 0:
        return None
    if P == Q:
        m = (3 * P[0] * P[0] + a) * pow(2 * P[1], -1, p) % p
    else:
        m = (Q[1] - P[1]) * pow(Q[0] - P[0], -1, p) % p
    x = (m * m - P[0] - Q[0]) % p
    return (x, (m * (P[0] - x) - P[1]) % p)


def mul(k, P):
    R = None
    while k:
        if k & 1:
            R = add(R, P)
        P = add(P, P)
        k >>= 1
    return R


def scalar(label):
    return int.from_bytes(hashlib.sha256(label.encode()).digest(), "big") % n


def b32(v):
    return v.to_bytes(32, "big")


def openssl_accepts(d, digest, r, s):
    public = ec.derive_private_key(d, ec.SECP256R1()).public_key()
    try:
        public.verify(utils.encode_dss_signature(r, s), digest, ec.ECDSA(utils.Prehashed(hashes.SHA256())))
        return True
    except InvalidSignature:
        return False


def case(name, d, digest, r, s, intended):
    assert openssl_accepts(d, digest, r, s) == intended, name
    point = ec.derive_private_key(d, ec.SECP256R1()).public_key().public_numbers()
    print("        EdgeCase(")
    print(f'            "{name}",')
    print(f'            x: "{b32(point.x).hex()}",')
    print(f'            y: "{b32(point.y).hex()}",')
    print(f'            digest: "{digest.hex()}",')
    print(f'            r: "{b32(r).hex()}",')
    print(f'            s: "{b32(s).hex()}",')
    print(f"            isValid: {str(intended).lower()}),")


for i in range(2):
    d = scalar(f"edge key {i}")
    k = scalar(f"edge nonce {i}")
    r = mul(k, G)[0] % n
    case(f"u1 = 0 (digest 0), key {i}", d, bytes(32), r, r * d * pow(k, -1, n) % n, True)
    case(f"u1 = 0 (digest n), key {i}", d, b32(n), r, r * d * pow(k, -1, n) % n, True)
    e = r * d % n
    case(f"u1·G = u2·Q (R doubled), key {i}", d, b32(e), r, 2 * e * pow(k, -1, n) % n, True)
    r2 = scalar(f"edge r {i}")
    s2 = scalar(f"edge s {i}")
    case(f"R at infinity (u1·G = -u2·Q), key {i}", d, b32((-r2 * d) % n), r2, s2, False)
    digest = hashlib.sha256(f"edge message {i}".encode()).digest()
    e = int.from_bytes(digest, "big") % n
    s = (e + r * d) * pow(k, -1, n) % n
    case(f"valid control, key {i}", d, digest, r, s, True)
    case(f"r = n, key {i}", d, digest, n, s, False)
    case(f"s = n, key {i}", d, digest, r, n, False)
