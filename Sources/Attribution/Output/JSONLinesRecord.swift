/// One result as the command's JSON Lines record (docs/cli.md section 3): one JSON object on one line.
///
/// In the library so a server can log exactly the CLI's records, and so `FastPostbackPath` writes its records
/// with the same code. Written straight into a byte buffer (no intermediate strings): rendering runs once per item
/// on the hot path.
@_spi(Servers) public enum JSONLinesRecord {
    /// The record of an item that has no file and line, such as a request a server received: `source` is
    /// `label` (a request id, say), and `line` is 1 (one item).
    /// - Parameters:
    ///   - result: the item's result.
    ///   - label: the record's `source`.
    ///   - explain: add `"signed-string"` (the exact SKAdNetwork signed string) when the result has one.
    /// - Returns: the record: one JSON object, UTF-8, without a line terminator.
    public static func render(_ result: VerificationResult, sourceLabel label: String, explain: Bool = false)
        -> [UInt8] {
        render(result, source: label, line: 1, explain: explain)
    }

    /// The record of an item read from `source` at `line`, as the command line writes it.
    /// - Parameters:
    ///   - result: the item's result.
    ///   - source: the record's `source` (a file's path, `-` for standard input).
    ///   - line: the record's `line`, 1-based.
    ///   - explain: add `"signed-string"` (the exact SKAdNetwork signed string, U+2063 kept as UTF-8)
    ///     when the result has one.
    /// - Returns: the record: one JSON object, UTF-8, without a line terminator.
    public static func render(_ result: VerificationResult, source: String, line: Int, explain: Bool = false)
        -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(1024)
        appendHead(source: source, line: line, kind: result.kind, verdict: result.verdict, signature: result.signature,
                   keyID: result.keyID, environment: result.environment, to: &out)
        appendFindings(errors: result.errors, warnings: result.warnings, to: &out)
        out.append(contentsOf: #","fields":"#.utf8)
        object(result.fields, to: &out)
        out.append(contentsOf: #","unsigned":"#.utf8)
        object(result.unsigned, to: &out)
        out.append(contentsOf: #","tier":"#.utf8)
        out.append(contentsOf: (result.tier.map(String.init) ?? "null").utf8)
        if let first = result.duplicateOf {
            appendDuplicate(of: first, differences: result.duplicateDifferences, to: &out)
        }
        if explain, let signedString = result.signedString {
            member("signed-string", signedString, to: &out)
        }
        out.append(UInt8(ascii: "}"))
        return out
    }

    /// `,"errors":[…],"warnings":[…]`: the findings, errors with their code.
    static func appendFindings(errors: [Finding], warnings: [Finding], to out: inout [UInt8]) {
        out.append(contentsOf: #","errors":["#.utf8)
        for (position, finding) in errors.enumerated() {
            if position > 0 { out.append(UInt8(ascii: ",")) }
            out.append(contentsOf: #"{"code":"#.utf8)
            JSONValue.appendQuoted(finding.code?.rawValue ?? "", to: &out)
            findingTail(finding, to: &out)
        }
        out.append(contentsOf: #"],"warnings":["#.utf8)
        for (position, finding) in warnings.enumerated() {
            if position > 0 { out.append(UInt8(ascii: ",")) }
            out.append(UInt8(ascii: "{"))
            findingTail(finding, to: &out, leadingComma: false)
        }
        out.append(UInt8(ascii: "]"))
    }

    /// `,"duplicate-of":…,"duplicate-of-source":…` (and the run, and what differs): a duplicate's last members.
    static func appendDuplicate(
        of first: DuplicateReference, differences: ContentFingerprint.Differences?, to out: inout [UInt8]
    ) {
        appendLiteral(#","duplicate-of":"#, to: &out)
        out.append(contentsOf: String(first.line).utf8)
        member("duplicate-of-source", first.source, to: &out)
        if let run = first.firstSeen {
            member("duplicate-of-run", RFC3339Timestamp.string(run), to: &out)
        }
        if let differences {
            appendLiteral(#","duplicate-differs":{"signed-payload":"#, to: &out)
            appendLiteral(differences.signedPayload ? "true" : "false", to: &out)
            appendLiteral(#","unsigned":["#, to: &out)
            for (position, name) in differences.unsignedMembers.enumerated() {
                if position > 0 { out.append(UInt8(ascii: ",")) }
                JSONValue.appendQuoted(name, to: &out)
            }
            appendLiteral("]}", to: &out)
        }
    }

    /// The record's opening up to and including `environment`:
    /// `{"source":…,"line":…,"kind":…,…,"environment":…`.
    static func appendHead(
        source: String, line: Int, kind: ItemKind, verdict: Verdict, signature: SignatureStatus, keyID: String?,
        environment: KeyEnvironment?, to out: inout [UInt8]
    ) {
        appendSource(source, line: line, to: &out)
        appendStatus(kind: kind, verdict: verdict, signature: signature, keyID: keyID, environment: environment,
                     to: &out)
    }

    /// `{"source":…,"line":…`: the record's opening.
    static func appendSource(_ source: String, line: Int, to out: inout [UInt8]) {
        appendLiteral(#"{"source":"#, to: &out)
        JSONValue.appendQuoted(source, to: &out)
        appendLiteral(#","line":"#, to: &out)
        appendDecimal(line, to: &out)
    }

    /// `,"kind":…,"verdict":…,"signature":…,"key-id":…,"environment":…`: what follows the line.
    static func appendStatus(
        kind: ItemKind, verdict: Verdict, signature: SignatureStatus, keyID: String?, environment: KeyEnvironment?,
        to out: inout [UInt8]
    ) {
        member("kind", kind.rawValue, to: &out)
        member("verdict", verdict.rawValue, to: &out)
        member("signature", signature.rawValue, to: &out)
        member("key-id", keyID, to: &out)
        member("environment", environment?.rawValue, to: &out)
    }

    /// `,"name":"value"` (or `null`).
    private static func member(_ name: StaticString, _ value: String?, to out: inout [UInt8]) {
        appendLiteral(#",""#, to: &out)
        appendLiteral(name, to: &out)
        appendLiteral(#"":"#, to: &out)
        if let value {
            JSONValue.appendQuoted(value, to: &out)
        } else {
            appendLiteral("null", to: &out)
        }
    }

    /// Appends a literal's bytes (one copy, no `String` in between).
    static func appendLiteral(_ literal: StaticString, to out: inout [UInt8]) {
        ByteCursor.over(literal) { $0.append(to: &out) }
    }

    /// Appends a non-negative integer's decimal digits (a negative one, which records never have, as `0`).
    static func appendDecimal(_ value: Int, to out: inout [UInt8]) {
        var remaining = UInt(max(0, value))
        // Written backwards into scratch space on the stack (a `UInt` has at most 20 digits), then copied once.
        ByteCursor.scratch(count: 20) { digits in
            var start = digits.count
            repeat {
                start -= 1
                digits.store(UInt8(ascii: "0") + UInt8(remaining % 10), at: start)
                remaining /= 10
            } while remaining > 0
            digits.append(start..<digits.count, to: &out)
        }
    }

    /// `"rule":…,"message":…}` of a finding, after its opening.
    private static func findingTail(_ finding: Finding, to out: inout [UInt8], leadingComma: Bool = true) {
        out.append(contentsOf: (leadingComma ? #","rule":"# : #""rule":"#).utf8)
        JSONValue.appendQuoted(finding.rule.rawValue, to: &out)
        out.append(contentsOf: #","message":"#.utf8)
        JSONValue.appendQuoted(finding.message, to: &out)
        out.append(UInt8(ascii: "}"))
    }

    private static func object(_ object: JSONObject?, to out: inout [UInt8]) {
        if let object {
            JSONValue.object(object).appendJSON(to: &out)
        } else {
            out.append(contentsOf: "null".utf8)
        }
    }
}
