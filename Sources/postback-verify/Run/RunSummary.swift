import Attribution

/// The counts behind the summary on standard error; they always add up to the records written.
struct RunSummary {
    private(set) var items = 0
    private(set) var valid = 0
    private(set) var invalidByCode: [String: Int] = [:]
    private(set) var warnings = 0
    private(set) var duplicates = 0
    private(set) var unexpected = 0

    var invalid: Int { items - valid }

    mutating func count(_ outcome: VerifiedBatch.Outcome, expectation: Verdict?) {
        items += 1
        if let first = outcome.firstError {
            invalidByCode[first.code?.rawValue ?? "", default: 0] += 1
        } else {
            valid += 1
        }
        warnings += outcome.warningCount
        if outcome.isDuplicate { duplicates += 1 }
        if outcome.verdict != (expectation ?? .valid) { unexpected += 1 }
    }

    /// The summary line; `note` (an interruption) comes first when given.
    func render(seconds: Double, failures: Int, note: String? = nil) -> String {
        let prefix = "postback-verify: " + (note.map { "\($0); " } ?? "")
        guard items > 0 else {
            return prefix + "no items read"
                + (failures > 0 ? "; \(failures) path(s) could not be read" : "")
                + " (\(format(seconds)) s)"
        }
        var text = prefix + "\(items) item\(items == 1 ? "" : "s"): \(valid) valid, \(invalid) invalid"
        if !invalidByCode.isEmpty {
            text += " (" + invalidByCode.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }
                .joined(separator: ", ") + ")"
        }
        text += "; \(warnings) warning\(warnings == 1 ? "" : "s"); \(duplicates) duplicate\(duplicates == 1 ? "" : "s")"
        if failures > 0 { text += "; \(failures) path(s) could not be read" }
        let rate = seconds > 0 ? Double(items) / seconds : 0
        text += "; \(format(seconds)) s, \(Int(rate.rounded())) items/s"
        return text
    }

    private func format(_ seconds: Double) -> String {
        let hundredths = Int((seconds * 100).rounded())
        let fraction = hundredths % 100
        return "\(hundredths / 100).\(fraction < 10 ? "0" : "")\(fraction)"
    }
}
