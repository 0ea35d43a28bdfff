/// The one error the library throws: input a strict decoder cannot take apart (base64url, JSON, compact JWS), a key
/// that cannot be used, or a deduplication state that cannot be used.
///
/// Its ``code`` is one of a closed set (``Code``) that scripts and callers decide on; ``rule`` names the catalogue
/// rule an item's bytes break (J1 for the decoders), nil for keys and state. Equal on `code` and `rule` only, so tests
/// and callers compare against a code without matching the wording; ``reason`` and the throw site are for people
/// reading a log. A verification never throws: what a rule finds in an item is a ``Finding`` in its result, with a
/// code of the same set (an error thrown while decoding an item becomes its J1 finding).
public struct AttributionError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, as a stable code.
    public let code: Code
    /// The catalogue rule the item breaks; nil when the error is not about an item (keys, state).
    public let rule: RuleID?
    /// A sentence for people: what is wrong, naming the field, file or server, and what to do.
    public let reason: String
    /// The source file that threw it (`#fileID`), for a log.
    public let file: String
    /// The line that threw it, for a log.
    public let line: UInt

    /// An error of `code` that no catalogue rule reports: what a ``DeduplicationStore`` of your own throws (the
    /// state codes, such as ``Code/unavailable``), or a key that cannot be used (``Code/invalidKey``).
    /// - Parameters:
    ///   - code: the stable code.
    ///   - reason: a sentence for people: what is wrong and what to do.
    ///   - file: the throw site's file; the caller's by default.
    ///   - line: the throw site's line; the caller's by default.
    public init(_ code: Code, _ reason: String, file: String = #fileID, line: UInt = #line) {
        self.init(code: code, rule: nil, reason: reason, file: file, line: line)
    }

    /// An item that breaks `rule`, with the rule's code from the catalogue (``RuleID/code``).
    @_spi(CommandLine) @_spi(Stores)
    public init(_ rule: RuleID, _ reason: String, file: String = #fileID, line: UInt = #line) {
        // Only error rules are thrown; a warning rule here would be a programming mistake, reported as strict mode's.
        self.init(code: rule.code ?? .ruleWarning, rule: rule, reason: reason, file: file, line: line)
    }

    private init(code: Code, rule: RuleID?, reason: String, file: String, line: UInt) {
        self.code = code
        self.rule = rule
        self.reason = reason
        self.file = file
        self.line = line
    }

    /// A J1 `malformed-input` error: the shape every strict decoder throws.
    @_spi(CommandLine)
    public static func malformed(_ reason: String, file: String = #fileID, line: UInt = #line) -> AttributionError {
        AttributionError(.j1, reason, file: file, line: line)
    }

    /// `code (RULE): reason`, or `code: reason` when no rule applies.
    public var description: String {
        if let rule { "\(code.rawValue) (\(rule)): \(reason)" } else { "\(code.rawValue): \(reason)" }
    }
}

extension AttributionError: Equatable {
    /// Equal when the codes and rules are: the wording and the throw site do not count.
    /// - Parameters:
    ///   - lhs: an error.
    ///   - rhs: another error.
    /// - Returns: true when both have the same ``code`` and ``rule``.
    public static func == (lhs: AttributionError, rhs: AttributionError) -> Bool {
        lhs.code == rhs.code && lhs.rule == rhs.rule
    }
}
