@_spi(CommandLine) import Attribution

/// The words behind the codes the report page shows: a rule's and an error code's taken from their one definition
/// in the library, the rule catalogue (a rule's ``RuleID/summary``; an error code's rules, those whose
/// ``RuleID/code`` it is), so nothing here restates a rule; and the crowd-anonymity tiers in words, which only a
/// report needs (the library infers a postback's tier from its fields and has no words for one).
enum ReportLegend {
    /// The catalogue rule `id` names, matched by its exact code points.
    static func rule(_ id: String) -> RuleID? {
        RuleID.allCases.first { $0.rawValue.utf8.elementsEqual(id.utf8) }
    }

    /// A warning rule in words: what it applies to and what it expects.
    static func rule(explaining id: String) -> String? {
        rule(id).map { "\($0.appliesTo): expects \($0.summary)" }
    }

    /// An invalid reason (an error code) in words: the rules whose failure gives it, each with what it expects; for
    /// `rule-warning`, the warning rules `--strict` makes rejections.
    static func code(explaining code: String) -> String? {
        let rules = RuleID.allCases.filter { rule in
            rule.code.map { $0.rawValue.utf8.elementsEqual(code.utf8) } ?? false
        }
        if !rules.isEmpty {
            return "rejected when one fails: " + rules.map { "\($0.rawValue) (\($0.appliesTo)): \($0.summary)" }
                .joined(separator: "; ")
        }
        guard AttributionError.Code.ruleWarning.rawValue.utf8.elementsEqual(code.utf8) else { return nil }
        return "a warning made a rejection by --strict (rules "
            + RuleID.allCases.filter(\.isWarning).map(\.rawValue).joined(separator: ", ") + ")"
    }

    /// What each tier (0-3, at its index) lets a postback say (spec section 6, Apple's "postback data tiers"):
    /// the crowd that saw the ad decides how much a postback may say.
    static let tiers = [
        "the smallest crowd: a 2-digit source identifier, no conversion value, no marketplace",
        "a 2-digit source identifier and, if the app set one, a coarse conversion value",
        "a 2- to 4-digit source identifier and, in the first postback, a fine conversion value",
        "the largest crowd: as tier 2, plus the app that showed the ad and the App Store account's country",
    ]

    /// A crowd-anonymity tier (0-3) in words.
    static func tier(_ tier: Int) -> String? {
        tiers.indices.contains(tier) ? tiers[tier] : nil
    }
}
