@_spi(CommandLine) import Attribution
import Foundation

/// One result as a line for people: where, a clear mark, the kind, the decisive reason, and the key facts.
struct TextRecord {
    let colour: Bool
    /// `--explain`: append `signed="..."`, the SKAdNetwork signed string with each U+2063 shown as `|`.
    var explain = false

    func render(_ result: VerificationResult, source: String, line: Int) -> String {
        // Every part that can hold input bytes is escaped (TerminalText) before colour is added, so only our own
        // escape sequences reach the terminal and one item is always one line.
        var parts = ["\(TerminalText.escaped(source)):\(line)", mark(result), result.kind.rawValue]
        if let error = result.firstError {
            parts.append("\(error.code?.rawValue ?? "") (\(error.rule)): \(TerminalText.escaped(error.message))")
        }
        parts += facts(result)
        if !result.warnings.isEmpty {
            let warnings = result.warnings.map { "warning \($0.rule): \(TerminalText.escaped($0.message))" }
            parts.append(paint(warnings.joined(separator: "; "), code: "33"))
        }
        return parts.joined(separator: "  ")
    }

    /// `VALID`, `INVALID`, or `DUPLICATE` for a genuine item seen before: a replay is not a forgery, and a red
    /// INVALID would say it was. (JSON Lines keeps `invalid` with code `duplicate`, as the contract fixes.)
    private func mark(_ result: VerificationResult) -> String {
        if result.verdict == .valid { return paint("VALID    ", code: "32") }
        if result.duplicateOf != nil { return paint("DUPLICATE", code: "33") }
        return paint("INVALID  ", code: "31")
    }

    /// A value from the input as `value`, or `"value"` when it is empty or holds a space, a quote or `=`, so
    /// that it cannot pass for another fact or mark on the line.
    /// A value that is not in Unicode normalisation form C (a decomposed `A` + U+030A, U+212A KELVIN SIGN) shows
    /// every non-ASCII scalar escaped, so two values that only look alike never look the same on screen.
    private func shown(_ value: String) -> String {
        var escaped = TerminalText.escaped(value)
        if value.utf8.contains(where: { $0 >= 0x80 }),
           !value.precomposedStringWithCanonicalMapping.unicodeScalars.elementsEqual(value.unicodeScalars) {
            escaped = escaped.unicodeScalars
                .map { $0.isASCII ? String($0) : TerminalText.escape($0) }
                .joined()
        }
        guard escaped.isEmpty || escaped.contains(where: { $0 == " " || $0 == "\"" || $0 == "=" }) else {
            return escaped
        }
        return "\"" + escaped.replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }

    private func facts(_ result: VerificationResult) -> [String] {
        var facts: [String] = []
        if let postback = result.postback {
            facts.append("id=\(shown(postback.postbackIdentifier))")
            facts.append(postback.conversionType.rawValue)
            facts.append("network=\(shown(postback.adNetworkIdentifier))")
            facts.append("source=\(shown(postback.sourceIdentifier))")
            facts.append("index=\(postback.postbackSequenceIndex)")
            if !postback.didWin { facts.append("nonwinning") }
        } else if let impression = result.impression {
            facts.append("id=\(shown(impression.impressionIdentifier))")
            facts.append("network=\(shown(impression.adNetworkIdentifier))")
            facts.append("source=\(impression.sourceIdentifier)")
        } else if let skAdNetwork = result.skAdNetwork {
            facts += skAdNetworkFacts(skAdNetwork)
        }
        if let unsigned = result.unsigned {
            for name in ["conversion-value", "coarse-conversion-value", "country-code"] {
                if let value = unsigned[name] {
                    facts.append("\(name)=\(shown(value.stringValue ?? value.jsonText)) (unsigned)")
                }
            }
        }
        if let tier = result.tier { facts.append("tier=\(tier)") }
        if let keyID = result.keyID {
            facts.append("kid=\(shown(keyID))" + (result.environment.map { " (\($0.rawValue))" } ?? ""))
        }
        if explain, let signedString = result.signedString {
            // Quoted so control characters in an unauthenticated value cannot break the one-line record.
            let visible = signedString.split(separator: "\u{2063}", omittingEmptySubsequences: false)
                .joined(separator: "|")
            facts.append("signed=\(TerminalText.escaped(JSONValue.string(visible).jsonText))")
        }
        return facts
    }

    /// The signed facts that identify an SKAdNetwork postback (the transaction, version, campaign or source).
    private func skAdNetworkFacts(_ postback: SKAdNetworkPostback) -> [String] {
        var facts = ["transaction=\(shown(postback.transactionID))", "version=\(postback.version.rawValue)",
                     "network=\(shown(postback.adNetworkID))"]
        if let campaign = postback.campaignID { facts.append("campaign=\(campaign)") }
        if let source = postback.sourceIdentifier { facts.append("source=\(shown(source))") }
        facts.append("app=\(postback.appID)")
        if let index = postback.postbackSequenceIndex { facts.append("index=\(index)") }
        if postback.didWin == false { facts.append("nonwinning") }
        return facts
    }

    private func paint(_ text: String, code: String) -> String {
        colour ? "\u{1B}[\(code)m\(text)\u{1B}[0m" : text
    }
}
