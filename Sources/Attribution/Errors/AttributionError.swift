/// Why an input could not be taken apart: thrown by the strict decoders (base64url, JSON, compact JWS, keys).
///
/// Equal on `code` and `rule` only, so tests can compare against a code without matching the wording;
/// `reason` and the throw site are for people reading a log.
public struct AttributionError: Error, Sendable, CustomStringConvertible {
    public let code: ErrorCode
    public let rule: RuleID
    public let reason: String
    public let file: String
    public let line: UInt

    package init(
        _ code: ErrorCode, rule: RuleID, _ reason: String, file: String = #fileID, line: UInt = #line
    ) {
        self.code = code
        self.rule = rule
        self.reason = reason
        self.file = file
        self.line = line
    }

    /// A J1 `malformed-input` error: the shape every strict decoder throws.
    package static func malformed(_ reason: String, file: String = #fileID, line: UInt = #line) -> AttributionError {
        AttributionError(.malformedInput, rule: .j1, reason, file: file, line: line)
    }

    public var description: String { "\(code.rawValue) (\(rule)): \(reason)" }
}

extension AttributionError: Equatable {
    public static func == (lhs: AttributionError, rhs: AttributionError) -> Bool {
        lhs.code == rhs.code && lhs.rule == rhs.rule
    }
}
