#!/usr/bin/env python3
"""Lists the public symbols of the library products that lack a doc comment or one of its required sections.

    scripts/check-doc-comments.py [--baseline FILE] SYMBOLGRAPH_DIR [MODULE ...]
                                                        (default modules: Attribution AttributionStores)

Reads the symbol graphs `swift package dump-symbol-graph` writes (scripts/docs.sh makes them), so "public" is the
compiler's answer, not a guess from the source text: every public or open declaration, the cases of public enums and
the requirements of public protocols. A symbol with no source location (synthesized or inherited from the standard
library, such as `!=`) is not ours to document and is skipped, as are the copies of a protocol extension's members
listed under each conforming type. Each symbol of ours needs:

- a doc comment of its own (`///`), or one inherited from a protocol requirement declared in these modules;
- a summary: a first line that is not a `- Parameter`, `- Returns` or `- Throws` section;
- for a function, initializer or subscript with parameters: `- Parameter NAME:` for each, or `- Parameters:` with a
  `- NAME:` item for each (closure parameters included; DocC's own check only warns when some are documented);
- for one returning anything but `Void` (not an initializer): `- Returns:`;
- for one that `throws` or `rethrows`: `- Throws:`.

Prints one line per finding (`path:line: symbol: what is missing`) and a count; exits 1 when there is any.
With --baseline FILE, the findings listed in FILE (the same lines without `:line`, so that edits elsewhere in a file
do not matter) are known debts: they are counted but fail nothing, every other finding fails, and a listed finding
that is gone is named so that its line can be deleted. `--write-baseline FILE` writes the current findings there.
"""
import json
import os
import re
import sys

CALLABLE = {"swift.func", "swift.method", "swift.type.method", "swift.func.op", "swift.init", "swift.subscript",
            "swift.type.subscript"}


def doc_text(symbol):
    comment = symbol.get("docComment")
    if not comment:
        return None
    return [line.get("text", "") for line in comment.get("lines", [])]


def sections(lines):
    """The parameter names documented, and whether Returns and Throws sections are present."""
    params, returns, throws = set(), False, False
    in_parameters = False
    for line in lines:
        stripped = line.strip()
        match = re.match(r"^[-*+]\s+parameter\s+([A-Za-z_][A-Za-z0-9_]*)\s*:", stripped, re.I)
        if match:
            params.add(match.group(1))
            in_parameters = False
            continue
        if re.match(r"^[-*+]\s+parameters\s*:", stripped, re.I):
            in_parameters = True
            continue
        if re.match(r"^[-*+]\s+returns\s*:", stripped, re.I):
            returns, in_parameters = True, False
            continue
        if re.match(r"^[-*+]\s+throws\s*:", stripped, re.I):
            throws, in_parameters = True, False
            continue
        if in_parameters:
            match = re.match(r"^[-*+]\s+([A-Za-z_][A-Za-z0-9_]*)\s*:", stripped)
            if match:
                params.add(match.group(1))
    return params, returns, throws


def is_section(line):
    return re.match(r"^\s*[-*+]\s+(parameters?|returns|throws)\b", line, re.I) is not None


def returns_value(symbol):
    signature = symbol.get("functionSignature") or {}
    text = "".join(fragment.get("spelling", "") for fragment in signature.get("returns", [])).strip()
    return text not in ("", "()", "Void", "Swift.Void")


def throws(symbol):
    return any(fragment.get("kind") == "keyword" and fragment.get("spelling") in ("throws", "rethrows")
               for fragment in symbol.get("declarationFragments", []))


def main():
    arguments = sys.argv[1:]
    baseline, write_baseline = None, None
    while arguments and arguments[0] in ("--baseline", "--write-baseline") and len(arguments) > 1:
        if arguments[0] == "--baseline":
            baseline = arguments[1]
        else:
            write_baseline = arguments[1]
        arguments = arguments[2:]
    if not arguments:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    directory = arguments[0]
    modules = arguments[1:] or ["Attribution", "AttributionStores"]
    ours = set(modules)
    findings, checked = [], 0
    for module in modules:
        files = [name for name in sorted(os.listdir(directory))
                 if name == f"{module}.symbols.json" or name.startswith(f"{module}@")]
        if f"{module}.symbols.json" not in files:
            print(f"check-doc-comments: no {module}.symbols.json in {directory}", file=sys.stderr)
            return 2
        for name in files:
            graph = json.load(open(os.path.join(directory, name)))
            for symbol in graph["symbols"]:
                location = symbol.get("location")
                # A protocol extension's member shows up again under every conforming type ("::SYNTHESIZED::"):
                # the one declaration is checked once.
                if not location or "::SYNTHESIZED::" in symbol["identifier"]["precise"]:
                    continue
                checked += 1
                path = location["uri"].removeprefix("file://")
                path = os.path.relpath(path) if path.startswith("/") else path
                where = f"{path}:{location['position']['line'] + 1}"
                title = ".".join(symbol.get("pathComponents", [symbol["names"]["title"]]))
                kind = symbol["kind"]["identifier"]
                lines = doc_text(symbol)
                comment = symbol.get("docComment") or {}
                if lines is None or not any(line.strip() for line in lines) \
                        or comment.get("module", module) not in ours:
                    findings.append(f"{where}: {title}: no doc comment")
                    continue
                first = next(line for line in lines if line.strip())
                if is_section(first):
                    findings.append(f"{where}: {title}: no summary before its sections")
                if kind not in CALLABLE:
                    continue
                documented, has_returns, has_throws = sections(lines)
                for parameter in (symbol.get("functionSignature") or {}).get("parameters", []):
                    names = {parameter.get("name"), parameter.get("internalName")} - {None, "_"}
                    if names and not names & documented:
                        findings.append(f"{where}: {title}: no `- Parameter {sorted(names)[-1]}:`")
                if kind != "swift.init" and returns_value(symbol) and not has_returns:
                    findings.append(f"{where}: {title}: no `- Returns:`")
                if throws(symbol) and not has_throws:
                    findings.append(f"{where}: {title}: no `- Throws:`")
    def key(finding):
        return re.sub(r"^([^:]+):[0-9]+:", r"\1:", finding)

    findings = sorted(set(findings))
    if write_baseline:
        with open(write_baseline, "w") as file:
            file.write("".join(key(finding) + "\n" for finding in findings))
    known = set()
    if baseline:
        with open(baseline) as file:
            known = {line.rstrip("\n") for line in file if line.strip() and not line.startswith("#")}
    new = [finding for finding in findings if key(finding) not in known]
    gone = sorted(known - {key(finding) for finding in findings})
    for finding in new:
        print(finding)
    for entry in gone:
        print(f"check-doc-comments: fixed, delete from {baseline}: {entry}", file=sys.stderr)
    print(f"check-doc-comments: {checked} public symbols of {', '.join(modules)} checked, {len(findings)} finding(s)"
          + (f", {len(findings) - len(new)} of them known in {baseline}" if baseline else ""), file=sys.stderr)
    return 1 if new else 0


if __name__ == "__main__":
    sys.exit(main())
