@_spi(CommandLine) import Attribution

/// The counts behind the summary on standard error; they always add up to the records written.
struct RunSummary {
    private(set) var items = 0
    private(set) var valid = 0
    private(set) var invalidByCode: [String: Int] = [:]
    private(set) var warnings = 0
    /// Warnings by rule (`P5`, `D2`, ...).
    private(set) var warningsByRule: [String: Int] = [:]
    /// Valid items by the environment of the key that verified them.
    private(set) var validByEnvironment: [KeyEnvironment: Int] = [:]
    private(set) var duplicates = 0
    private(set) var unexpected = 0

    var invalid: Int { items - valid }

    /// The valid items on Apple's development keys: any device in developer mode can mint them.
    var validOnDevelopmentKeys: Int { validByEnvironment[.development] ?? 0 }

    /// Counts one item; `environment` is that of the key that verified it, when it is valid.
    mutating func count(_ outcome: VerifiedBatch.Outcome, environment: KeyEnvironment?, expectation: Verdict?) {
        let warningRules = outcome.warningCount > 0 ? outcome.warningRules.map(\.rawValue) : []
        count(verdict: outcome.verdict, firstErrorCode: outcome.firstError.map { $0.code?.rawValue ?? "" },
              warningRules: warningRules, environment: environment, isDuplicate: outcome.isDuplicate,
              expectation: expectation)
    }

    /// Counts one item from what decided it: the command line's outcomes and stored records (``StoredRecord``)
    /// alike. `firstErrorCode` is nil exactly when the item is valid.
    mutating func count(verdict: Verdict, firstErrorCode: String?, warningRules: [String],
                        environment: KeyEnvironment?, isDuplicate: Bool, expectation: Verdict?) {
        items += 1
        if let firstErrorCode {
            invalidByCode[firstErrorCode, default: 0] += 1
        } else {
            valid += 1
            if let environment { validByEnvironment[environment, default: 0] += 1 }
        }
        warnings += warningRules.count
        for rule in warningRules { warningsByRule[rule, default: 0] += 1 }
        if isDuplicate { duplicates += 1 }
        if verdict != (expectation ?? .valid) { unexpected += 1 }
    }

    /// The summary line; `note` (an interruption) comes first when given.
    func render(seconds: Double, failures: Int, note: String? = nil) -> String {
        let prefix = "postback-verify: " + (note.map { "\($0); " } ?? "")
        guard items > 0 else {
            return prefix + "no items read"
                + (failures > 0 ? "; \(failures) path(s) could not be read" : "")
                + " (\(format(seconds)) s)"
        }
        var text = prefix + "\(items) item\(items == 1 ? "" : "s"): \(valid) valid"
        if validOnDevelopmentKeys > 0 { text += " (\(validOnDevelopmentKeys) on development keys)" }
        text += ", \(invalid) invalid"
        if !invalidByCode.isEmpty { text += " (" + Self.counts(invalidByCode) + ")" }
        text += "; \(warnings) warning\(warnings == 1 ? "" : "s")"
        if !warningsByRule.isEmpty { text += " (" + Self.counts(warningsByRule) + ")" }
        text += "; \(duplicates) duplicate\(duplicates == 1 ? "" : "s")"
        if failures > 0 { text += "; \(failures) path(s) could not be read" }
        let rate = seconds > 0 ? Double(items) / seconds : 0
        text += "; \(format(seconds)) s, \(Int(rate.rounded())) items/s"
        return text
    }

    /// `name count, …` in byte order of name.
    private static func counts(_ counts: [String: Int]) -> String {
        counts.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }.map { "\($0.key) \($0.value)" }
            .joined(separator: ", ")
    }

    private func format(_ seconds: Double) -> String {
        let hundredths = Int((seconds * 100).rounded())
        let fraction = hundredths % 100
        return "\(hundredths / 100).\(fraction < 10 ? "0" : "")\(fraction)"
    }
}
