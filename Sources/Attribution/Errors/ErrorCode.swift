/// A stable, machine-readable reason code, as listed in docs/cli.md section 3 (`errors[].code`).
///
/// Codes never change once published: scripts match on them.
public struct ErrorCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String

    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    public var description: String { rawValue }

    /// Envelope, base64url, JSON, size or nesting broken (rule J1), or an item of no known form.
    public static let malformedInput = ErrorCode(rawValue: "malformed-input")
    /// `alg` other than `ES256`, or a `crit` header member (rule J2).
    public static let unsupportedAlgorithm = ErrorCode(rawValue: "unsupported-algorithm")
    /// The `kid` names no loaded key (rule J3).
    public static let unknownKey = ErrorCode(rawValue: "unknown-key")
    /// An Apple development kid while development keys are not allowed (rule J4).
    public static let untrustedKey = ErrorCode(rawValue: "untrusted-key")
    /// The signature does not verify, or is not a well-formed 64-byte r‖s (rule J5); for SKAdNetwork, the
    /// `attribution-signature` is not strict base64 DER or does not verify (rule S3).
    public static let badSignature = ErrorCode(rawValue: "bad-signature")
    /// A signed payload field is missing, mistyped or out of range (rules P1-P4, I1; SKAdNetwork S2, S4).
    public static let invalidField = ErrorCode(rawValue: "invalid-field")
    /// An unsigned body member is mistyped or out of range (rules U1-U3; SKAdNetwork S5).
    public static let invalidUnsignedField = ErrorCode(rawValue: "invalid-unsigned-field")
    /// A postback identifier (SKAdNetwork: transaction and index) already seen valid in this run (rule D1).
    public static let duplicate = ErrorCode(rawValue: "duplicate")
    /// A warning promoted to a rejection by strict mode.
    public static let ruleWarning = ErrorCode(rawValue: "rule-warning")
    /// An SKAdNetwork `version` this tool does not know (rule S1).
    public static let unsupportedVersion = ErrorCode(rawValue: "unsupported-version")
}

extension ErrorCode {
    /// A key file or key value that is not an EC public key on the required curve. Not an item code: the CLI
    /// reports it on stderr and exits 2, because a bad key is a setup mistake, not a bad input.
    public static let invalidKey = ErrorCode(rawValue: "invalid-key")
}
