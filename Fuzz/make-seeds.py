#!/usr/bin/env python3
"""Writes the seed corpus for one fuzz target, one input per file, from Fixtures/ (and JSONTestSuite for JSON).

Usage: make-seeds.py TARGET OUTPUT_DIR   (run from the package root; Fuzz/run.sh calls it)
"""
import base64
import hashlib
import os
import re
import sys

FIXTURES = "Fixtures"
JSON_TEST_SUITE = os.path.join("Tests", "AttributionTests", "Vectors", "jsontestsuite", "test_parsing")


def fixture_items():
    """Every item of every fixture, as AttributionVerifier sees it: a whole .json file, or one line of another file."""
    for root, _, files in sorted(os.walk(FIXTURES)):
        if os.path.basename(root) == "keys":
            continue
        for name in sorted(files):
            path = os.path.join(root, name)
            if name.endswith(".json") and name != "manifest.json":
                yield open(path, "rb").read()
            elif name.endswith((".jws", ".jsonl", ".txt")):
                for line in open(path, "rb").read().split(b"\n"):
                    line = line.rstrip(b"\r")
                    if line.strip() and not line.startswith(b"#"):
                        yield line


def tokens(items):
    """The compact JWS tokens in the items: bare lines, and jws-string members of bodies."""
    for item in items:
        if item.lstrip().startswith(b"{"):
            for match in re.finditer(rb'"jws-string"\s*:\s*"([^"\\]*)"', item):
                yield match.group(1)
        else:
            yield item.strip()


def base64url_decode(segment):
    try:
        return base64.urlsafe_b64decode(segment + b"=" * (-len(segment) % 4))
    except ValueError:
        return None


def ecdsa_seeds():
    """fuzz-ecdsa-differential: each curve, raw and signed, with every mutation (Check.decode's layout), under the
    fixed keys and under keys derived from an edge private scalar (key byte 0x80 | index); then signed without a
    mutation under each derived-key choice (0 to 15: the edge scalars, then the scalar at bytes 101 onwards)."""
    for curve in (0, 1):
        size = 32 if curve == 0 else 24
        scalar = hashlib.sha256(f"d {curve}".encode()).digest()[:size]
        for mode in (0, 1):
            for mutation in range(11):
                label = f"{curve}/{mode}/{mutation}".encode()
                digest = hashlib.sha256(b"digest " + label).digest()
                body = hashlib.sha256(b"r " + label).digest() + hashlib.sha256(b"s " + label).digest()
                yield bytes([curve | mode << 1, 0, mutation, 7, 3]) + digest + body
                yield bytes([curve | mode << 1, 0x80 | (mutation + 11 * mode) % 13, mutation, 7, 3]) + digest + body
        for choice in range(16):
            label = f"{curve}/derived/{choice}".encode()
            digest = hashlib.sha256(b"digest " + label).digest()
            body = hashlib.sha256(b"r " + label).digest() + hashlib.sha256(b"s " + label).digest()
            yield bytes([curve | 1 << 1, 0x80 | choice, 0, 7, 3]) + digest + body + scalar


def seeds(target):
    if target == "fuzz-ecdsa-differential":
        yield from ecdsa_seeds()
        return
    items = list(fixture_items())
    if target == "fuzz-item":
        yield from items
        return
    segments = [segment for token in tokens(items) for segment in token.split(b".")]
    if target == "fuzz-base64url":
        yield from segments
        for item in items:
            for match in re.finditer(rb'"attribution-signature"\s*:\s*"([^"\\]*)"', item):
                yield match.group(1)
        yield from [b"", b"QQ", b"QQ==", b"QUI", b"QUI=", b"QUJD", b"-_-_", b"+/+/"]
        return
    # fuzz-json and fuzz-json-differential: JSON texts.
    if os.path.isdir(JSON_TEST_SUITE):
        for name in sorted(os.listdir(JSON_TEST_SUITE)):
            yield open(os.path.join(JSON_TEST_SUITE, name), "rb").read()
    for item in items:
        if item.lstrip().startswith(b"{"):
            yield item
    for segment in segments:
        decoded = base64url_decode(segment)
        if decoded and decoded.lstrip().startswith((b"{", b"[")):
            yield decoded


def main():
    target, output = sys.argv[1], sys.argv[2]
    os.makedirs(output, exist_ok=True)
    count = 0
    for seed in seeds(target):
        if len(seed) > 20000:
            continue
        name = hashlib.sha1(seed).hexdigest()
        with open(os.path.join(output, name), "wb") as file:
            file.write(seed)
        count += 1
    print(f"{count} seeds for {target} in {output}")


if __name__ == "__main__":
    main()
