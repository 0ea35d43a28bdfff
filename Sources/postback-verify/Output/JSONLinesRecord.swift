import Attribution

/// One result as the contract's JSON Lines record: one JSON object on one line.
///
/// Written straight into a byte buffer (no intermediate strings): rendering runs once per item on the hot path.
enum JSONLinesRecord {
    /// - Parameter explain: add `"signed-string"` (the exact SKAdNetwork signed string, U+2063 kept as UTF-8)
    ///   when the result has one.
    static func render(_ result: VerificationResult, source: String, line: Int, explain: Bool = false) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(1024)
        out.append(contentsOf: #"{"source":"#.utf8)
        JSONValue.appendQuoted(source, to: &out)
        out.append(contentsOf: #","line":"#.utf8)
        out.append(contentsOf: String(line).utf8)
        member("kind", result.kind.rawValue, to: &out)
        member("verdict", result.verdict.rawValue, to: &out)
        member("signature", result.signature.rawValue, to: &out)
        member("key-id", result.keyID, to: &out)
        member("environment", result.environment?.rawValue, to: &out)
        out.append(contentsOf: #","errors":["#.utf8)
        for (position, finding) in result.errors.enumerated() {
            if position > 0 { out.append(UInt8(ascii: ",")) }
            out.append(contentsOf: #"{"code":"#.utf8)
            JSONValue.appendQuoted(finding.code?.rawValue ?? "", to: &out)
            findingTail(finding, to: &out)
        }
        out.append(contentsOf: #"],"warnings":["#.utf8)
        for (position, finding) in result.warnings.enumerated() {
            if position > 0 { out.append(UInt8(ascii: ",")) }
            out.append(UInt8(ascii: "{"))
            findingTail(finding, to: &out, leadingComma: false)
        }
        out.append(contentsOf: #"],"fields":"#.utf8)
        object(result.fields, to: &out)
        out.append(contentsOf: #","unsigned":"#.utf8)
        object(result.unsigned, to: &out)
        out.append(contentsOf: #","tier":"#.utf8)
        out.append(contentsOf: (result.tier.map(String.init) ?? "null").utf8)
        if let first = result.duplicateOf {
            out.append(contentsOf: #","duplicate-of":"#.utf8)
            out.append(contentsOf: String(first.line).utf8)
            member("duplicate-of-source", first.source, to: &out)
        }
        if explain, let signedString = result.signedString {
            member("signed-string", signedString, to: &out)
        }
        out.append(UInt8(ascii: "}"))
        return out
    }

    /// `,"name":"value"` (or `null`).
    private static func member(_ name: StaticString, _ value: String?, to out: inout [UInt8]) {
        out.append(contentsOf: #",""#.utf8)
        out.append(contentsOf: UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
        out.append(contentsOf: #"":"#.utf8)
        if let value {
            JSONValue.appendQuoted(value, to: &out)
        } else {
            out.append(contentsOf: "null".utf8)
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
