import Attribution

/// The words behind the codes the report page shows, each taken from its one definition in the library: a rule's
/// ``RuleID/summary``, an error code's rules (those whose ``RuleID/code`` it is), a tier's
/// `CrowdAnonymityTier.summaries`. Nothing here restates a rule.
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

    /// A crowd-anonymity tier (0-3) in words.
    static func tier(_ tier: Int) -> String? {
        CrowdAnonymityTier.summaries.indices.contains(tier) ? CrowdAnonymityTier.summaries[tier] : nil
    }
}
