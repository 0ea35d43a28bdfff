import Attribution

/// One result as the contract's JSON Lines record: one JSON object on one line.
enum JSONLinesRecord {
    /// - Parameter explain: add `"signed-string"` (the exact SKAdNetwork signed string, U+2063 kept as UTF-8)
    ///   when the result has one.
    static func render(_ result: VerificationResult, source: String, line: Int, explain: Bool = false) -> String {
        var members: [(String, String)] = [
            ("source", JSONValue.quoted(source)),
            ("line", String(line)),
            ("kind", JSONValue.quoted(result.kind.rawValue)),
            ("verdict", JSONValue.quoted(result.verdict.rawValue)),
            ("signature", JSONValue.quoted(result.signature.rawValue)),
            ("key-id", result.keyID.map(JSONValue.quoted) ?? "null"),
            ("environment", result.environment.map { JSONValue.quoted($0.rawValue) } ?? "null"),
            ("errors", "[" + result.errors.map(error).joined(separator: ",") + "]"),
            ("warnings", "[" + result.warnings.map(warning).joined(separator: ",") + "]"),
            ("fields", result.fields.map { JSONValue.object($0).jsonText } ?? "null"),
            ("unsigned", result.unsigned.map { JSONValue.object($0).jsonText } ?? "null"),
            ("tier", result.tier.map(String.init) ?? "null"),
        ]
        if let first = result.duplicateOf {
            members.append(("duplicate-of", String(first.line)))
            members.append(("duplicate-of-source", JSONValue.quoted(first.source)))
        }
        if explain, let signedString = result.signedString {
            members.append(("signed-string", JSONValue.quoted(signedString)))
        }
        return "{" + members.map { "\(JSONValue.quoted($0.0)):\($0.1)" }.joined(separator: ",") + "}"
    }

    private static func error(_ finding: Finding) -> String {
        "{\"code\":\(JSONValue.quoted(finding.code?.rawValue ?? "")),"
            + "\"rule\":\(JSONValue.quoted(finding.rule.rawValue)),"
            + "\"message\":\(JSONValue.quoted(finding.message))}"
    }

    private static func warning(_ finding: Finding) -> String {
        "{\"rule\":\(JSONValue.quoted(finding.rule.rawValue)),\"message\":\(JSONValue.quoted(finding.message))}"
    }
}
