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

    /// An error finding: it makes the verdict invalid.
    public static func error(_ code: ErrorCode, _ rule: RuleID, _ message: String) -> Finding {
        Finding(rule: rule, code: code, message: message)
    }

    /// A warning finding: it never changes the verdict (unless strict mode promotes it).
    public static func warning(_ rule: RuleID, _ message: String) -> Finding {
        Finding(rule: rule, code: nil, message: message)
    }

    /// An error finding carrying a decoder's thrown error.
    public init(_ error: AttributionError) {
        self.init(rule: error.rule, code: error.code, message: error.reason)
    }

    public init(rule: RuleID, code: ErrorCode?, message: String) {
        self.rule = rule
        self.code = code
        self.message = message
    }

    /// True for a warning.
    public var isWarning: Bool { code == nil }

    /// This warning as a strict-mode error (`rule-warning`), keeping its rule and message.
    public var promotedToError: Finding {
        isWarning ? .error(.ruleWarning, rule, message) : self
    }

    public var description: String {
        "\(rule)\(code.map { " \($0.rawValue)" } ?? " warning"): \(message)"
    }
}
