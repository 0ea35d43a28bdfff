import Attribution

/// One result as a line for people: where, a clear mark, the kind, the decisive reason, and the key facts.
struct TextRecord {
    let colour: Bool
    /// `--explain`: append `signed="..."`, the SKAdNetwork signed string with each U+2063 shown as `|`.
    var explain = false

    func render(_ result: VerificationResult, source: String, line: Int) -> String {
        let mark = result.verdict == .valid ? paint("VALID  ", code: "32") : paint("INVALID", code: "31")
        var parts = ["\(source):\(line)", mark, result.kind.rawValue]
        if let error = result.firstError {
            parts.append("\(error.code?.rawValue ?? "") (\(error.rule)): \(error.message)")
        }
        parts += facts(result)
        if !result.warnings.isEmpty {
            parts.append(paint("warnings: " + result.warnings.map(\.rule.rawValue).joined(separator: ","), code: "33"))
        }
        return parts.joined(separator: "  ")
    }

    private func facts(_ result: VerificationResult) -> [String] {
        var facts: [String] = []
        if let postback = result.postback {
            facts.append("id=\(postback.postbackIdentifier)")
            facts.append(postback.conversionType.rawValue)
            facts.append("network=\(postback.adNetworkIdentifier)")
            facts.append("source=\(postback.sourceIdentifier)")
            facts.append("index=\(postback.postbackSequenceIndex)")
            if !postback.didWin { facts.append("nonwinning") }
        } else if let impression = result.impression {
            facts.append("id=\(impression.impressionIdentifier)")
            facts.append("network=\(impression.adNetworkIdentifier)")
            facts.append("source=\(impression.sourceIdentifier)")
        } else if let skAdNetwork = result.skAdNetwork {
            facts += skAdNetworkFacts(skAdNetwork)
        }
        if let unsigned = result.unsigned {
            for name in ["conversion-value", "coarse-conversion-value", "country-code"] {
                if let value = unsigned[name] {
                    facts.append("\(name)=\(value.stringValue ?? value.jsonText) (unsigned)")
                }
            }
        }
        if let tier = result.tier { facts.append("tier=\(tier)") }
        if let keyID = result.keyID {
            facts.append("kid=\(keyID)" + (result.environment.map { " (\($0.rawValue))" } ?? ""))
        }
        if explain, let signedString = result.signedString {
            // Quoted so control characters in an unauthenticated value cannot break the one-line record.
            let visible = signedString.split(separator: "\u{2063}", omittingEmptySubsequences: false)
                .joined(separator: "|")
            facts.append("signed=\(JSONValue.quoted(visible))")
        }
        return facts
    }

    /// The signed facts that identify an SKAdNetwork postback (the transaction, version, campaign or source).
    private func skAdNetworkFacts(_ postback: SKAdNetworkPostback) -> [String] {
        var facts = ["transaction=\(postback.transactionID)", "version=\(postback.version.rawValue)",
                     "network=\(postback.adNetworkID)"]
        if let campaign = postback.campaignID { facts.append("campaign=\(campaign)") }
        if let source = postback.sourceIdentifier { facts.append("source=\(source)") }
        facts.append("app=\(postback.appID)")
        if let index = postback.postbackSequenceIndex { facts.append("index=\(index)") }
        if postback.didWin == false { facts.append("nonwinning") }
        return facts
    }

    private func paint(_ text: String, code: String) -> String {
        colour ? "\u{1B}[\(code)m\(text)\u{1B}[0m" : text
    }
}
