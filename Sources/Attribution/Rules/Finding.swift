/// One rule's outcome on one item: an error (with its code) or a warning (no code).
///
/// A finding is a value, never thrown: a verification lists all of them, and the first error decides. Its code is
/// one of ``AttributionError/Code``, the one set of codes; what a step throws or fails with is an
/// ``AttributionError`` that names its rule, and becomes a finding here.
public struct Finding: Sendable, Hashable, CustomStringConvertible {
    /// The catalogue rule that produced it.
    public let rule: RuleID
    /// The stable reason code for an error; nil for a warning.
    public let code: AttributionError.Code?
    /// A sentence for people: what was found, naming the field.
    public let message: String

    /// The rule's finding: an error with the rule's code, or a warning, as the catalogue (``RuleID``) classes it.
    init(_ rule: RuleID, _ message: String) {
        self.init(rule: rule, code: rule.code, message: message)
    }

    /// The finding of an error thrown or returned while verifying an item: its rule (J1 from a decoder) and reason.
    init(_ error: AttributionError) {
        // Errors about an item always name their rule; one that does not (never seen) is the item's J1.
        self.init(error.rule ?? .j1, error.reason)
    }

    private init(rule: RuleID, code: AttributionError.Code?, message: String) {
        self.rule = rule
        self.code = code
        self.message = message
    }

    /// True for a warning.
    public var isWarning: Bool { code == nil }

    /// This warning as a strict-mode error (`rule-warning`), keeping its rule and message.
    var promotedToError: Finding {
        isWarning ? Finding(rule: rule, code: .ruleWarning, message: message) : self
    }

    /// `RULE code: message` for an error, `RULE warning: message` for a warning.
    public var description: String {
        "\(rule)\(code.map { " \($0.rawValue)" } ?? " warning"): \(message)"
    }
}
