/// One rule's outcome on one item: an error (with its code) or a warning (no code).
///
/// A finding is a value, never a thrown error: a verification lists all of them, and the first error decides.
/// (It conforms to `Error` only so a step can return `Result<Value, Finding>`.)
public struct Finding: Error, Sendable, Hashable, CustomStringConvertible {
    /// The catalogue rule that produced it.
    public let rule: RuleID
    /// The stable reason code for an error; nil for a warning.
    public let code: ErrorCode?
    /// A sentence for people: what was found, naming the field.
    public let message: String

    /// The rule's finding: an error with the rule's code, or a warning, as the catalogue (``RuleID``) classes it.
    init(_ rule: RuleID, _ message: String) {
        self.init(rule: rule, code: rule.code, message: message)
    }

    /// The finding of a decoder's thrown error.
    init(_ error: AttributionError) {
        self.init(error.rule, error.reason)
    }

    private init(rule: RuleID, code: ErrorCode?, message: String) {
        self.rule = rule
        self.code = code
        self.message = message
    }

    /// True for a warning.
    public var isWarning: Bool { code == nil }

    /// This warning as a strict-mode error (`rule-warning`), keeping its rule and message.
    package var promotedToError: Finding {
        isWarning ? Finding(rule: rule, code: .ruleWarning, message: message) : self
    }

    public var description: String {
        "\(rule)\(code.map { " \($0.rawValue)" } ?? " warning"): \(message)"
    }
}
