#!/usr/bin/env python3
"""Feeds a release build of postback-verify every fuzz seed and every one-byte mutation of the valid postback
bodies, and checks the command's contract on each run: it ends by exiting 0 or 1 (never a signal: a bounds check
that trips is a trap), and writes exactly one JSON Lines record per item, in input order (docs/cli.md sections 2-5).

Usage: release-mutations.py BINARY WORK_DIR   (run from the package root; Tests/release-mutations.sh calls it)

Why a release build: the fuzzers and sanitizers run debug builds, where `assert` holds; users run release builds,
where only `precondition` and the compiler's own checks remain (issue 25). Reads only files of this repository.
"""
import json
import os
import subprocess
import sys

KEYS = [
    "--allow-development",
    "--key", "fixture.adattributionkit=Fixtures/keys/fixture.adattributionkit.pem",
    "--key", "fixture-apple-identifier/0=Fixtures/keys/fixture-apple-identifier-0.pem",
]
SEED_TARGETS = ["fuzz-item", "fuzz-json", "fuzz-base64url"]
BODY_DIRS = [os.path.join("Fixtures", "valid", "apple"), os.path.join("Fixtures", "valid", "postback")]
# Bodies above this size are left out of the mutations (the 16 KiB boundary fixture alone would be ~115,000 lines).
MAX_BODY = 2048
# One-byte substitutions: a NUL, a byte that is never UTF-8, and the bytes that open or end JSON strings and objects.
SUBSTITUTES = [0x00, 0xFF, ord('"'), ord("\\"), ord("{")]


def seeds(work):
    """Every seed of the fuzz targets, one `*.json` file each (a `*.json` file is one item, whatever it holds)."""
    directory = os.path.join(work, "seeds")
    os.makedirs(directory)
    raw = os.path.join(work, "raw-seeds")
    count = 0
    for target in SEED_TARGETS:
        subprocess.run([sys.executable, "Fuzz/make-seeds.py", target, os.path.join(raw, target)], check=True,
                       stdout=subprocess.DEVNULL)
        for name in sorted(os.listdir(os.path.join(raw, target))):
            with open(os.path.join(raw, target, name), "rb") as source:
                seed = source.read()
            with open(os.path.join(directory, f"{count:06d}.json"), "wb") as out:
                out.write(seed)
            count += 1
    # Records name each file; a directory is read in byte order of path (docs/cli.md section 2).
    expected = [(os.path.join(directory, name), 1) for name in sorted(os.listdir(directory))]
    return directory, expected


def bodies():
    """The valid postback bodies, each on one line (printed ones compacted: the signed bytes are in jws-string)."""
    for directory in BODY_DIRS:
        for name in sorted(os.listdir(directory)):
            path = os.path.join(directory, name)
            if name.endswith(".json") and os.path.getsize(path) <= MAX_BODY:
                with open(path, "rb") as source:
                    value = json.loads(source.read())
                yield json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


def is_item(line):
    """Whether a line is an item (docs/cli.md section 2): not blank, not a comment, not a lone `{` (which opens a
    printed document, and so would not be one item per line)."""
    stripped = line.strip(b" \t\r")
    return stripped != b"" and not stripped.startswith(b"#") and stripped != b"{"


def mutations(work):
    """Every one-byte mutation of every body: each position substituted, each position deleted, each truncation."""
    path = os.path.join(work, "mutations.jsonl")
    lines = []
    for body in bodies():
        lines.append(body)
        for position in range(len(body)):
            for byte in SUBSTITUTES:
                if body[position] != byte:
                    lines.append(body[:position] + bytes([byte]) + body[position + 1:])
            lines.append(body[:position] + body[position + 1:])
            lines.append(body[:position])
    lines = [line for line in lines if is_item(line)]
    with open(path, "wb") as out:
        out.write(b"\n".join(lines) + b"\n")
    return path, [(path, number) for number in range(1, len(lines) + 1)]


def check(binary, name, path, expected):
    """Runs the binary over `path` and holds it to the contract; returns a list of failures (no input bytes)."""
    run = subprocess.run([binary, "--quiet", "--format", "jsonl", *KEYS, path], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    failures = []
    if run.returncode not in (0, 1):
        how = f"signal {-run.returncode}" if run.returncode < 0 else f"status {run.returncode}"
        failures.append(f"{name}: ended by {how} (expected exit status 0 or 1)")
    records = run.stdout.split(b"\n")
    if records and records[-1] == b"":
        records.pop()
    if len(records) != len(expected):
        failures.append(f"{name}: {len(records)} records for {len(expected)} items")
    for index, (record, (source, line)) in enumerate(zip(records, expected)):
        try:
            value = json.loads(record)
            if (value["source"], value["line"]) != (source, line):
                failures.append(f"{name}: record {index + 1} is for line {value['line']}, expected line {line}")
        except (ValueError, KeyError, TypeError):
            failures.append(f"{name}: record {index + 1} is not a JSON Lines record with source and line")
        if len(failures) > 10:
            break
    verdicts = [json.loads(record).get("verdict") for record in records if record.startswith(b"{")]
    print(f"{name}: {len(expected)} items, exit status {run.returncode}, "
          f"{verdicts.count('valid')} valid, {verdicts.count('invalid')} invalid")
    return failures


def main():
    binary, work = sys.argv[1], sys.argv[2]
    failures = []
    seed_dir, seed_expected = seeds(work)
    failures += check(binary, "fuzz seeds", seed_dir, seed_expected)
    mutation_path, mutation_expected = mutations(work)
    failures += check(binary, "one-byte mutations of valid bodies", mutation_path, mutation_expected)
    for failure in failures:
        print(f"FAIL {failure}", file=sys.stderr)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
