extension AttributionError {
    /// A stable, machine-readable code: the item codes of docs/cli.md section 3 (`errors[].code`), the key code and
    /// the deduplication state's codes (docs/state.md).
    ///
    /// A closed set: only the library makes codes (there is no public initialiser), so a code a caller receives is
    /// always one listed here, and one published never changes (scripts match on ``rawValue``). A struct of static
    /// members rather than a public enum, as swift-asn1's `ASN1Error.ErrorCode`, so that a later release can add a
    /// code without breaking a caller's `switch`.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The code as written in records, messages and docs (`malformed-input`, `not-ours`).
        public let rawValue: String

        private init(_ rawValue: String) {
            self.rawValue = rawValue
        }

        /// The code as written in records (its ``rawValue``).
        public var description: String { rawValue }

        // Item codes: an item's verdict (docs/cli.md section 3; each is its rules' code in the catalogue, RuleID).

        /// Envelope, base64url, JSON, size or nesting broken (rule J1), or an item of no known form.
        public static let malformedInput = Code("malformed-input")
        /// `alg` other than `ES256`, or a `crit` header member (rule J2).
        public static let unsupportedAlgorithm = Code("unsupported-algorithm")
        /// The `kid` names no loaded key (rule J3).
        public static let unknownKey = Code("unknown-key")
        /// An Apple development kid while development keys are not allowed (rule J4).
        public static let untrustedKey = Code("untrusted-key")
        /// The signature does not verify, or is not a well-formed 64-byte r‖s (rule J5); for SKAdNetwork, the
        /// `attribution-signature` is not strict base64 DER or does not verify (rule S3).
        public static let badSignature = Code("bad-signature")
        /// A signed payload field is missing, mistyped or out of range (rules P1-P4, I1; SKAdNetwork S2, S4).
        public static let invalidField = Code("invalid-field")
        /// An unsigned body member is mistyped or out of range (rules U1-U3; SKAdNetwork S5).
        public static let invalidUnsignedField = Code("invalid-unsigned-field")
        /// A postback identifier (SKAdNetwork: transaction and index) already seen valid in this run (rule D1).
        public static let duplicate = Code("duplicate")
        /// A warning promoted to a rejection by strict mode.
        public static let ruleWarning = Code("rule-warning")
        /// An SKAdNetwork `version` this tool does not know (rule S1).
        public static let unsupportedVersion = Code("unsupported-version")

        // Setup: not an item code. The CLI reports it on stderr and exits 2: a bad key is a setup mistake.

        /// A key file or key value that is not an EC public key on the required curve, or a kid that cannot be
        /// added to a key ring.
        public static let invalidKey = Code("invalid-key")
        /// A setup option's value of the wrong form: `--key` without `KID=PATH`, a duration or a number of days
        /// out of range, an empty `--state` (``VerifierOptions``, `StateLocation`).
        public static let invalidOption = Code("invalid-option")
        /// A conversion-value schema that is not exactly the format (docs/schema.md), from
        /// ``ConversionSchema/init(parsing:)``; the reason names the line, `line N: reason`. (A schema read from a
        /// file, ``ConversionSchema/init(contentsOfFile:)``, is a setup option: ``invalidOption``.)
        public static let invalidSchema = Code("invalid-schema")

        // Deduplication state (docs/state.md): thrown by the stores, and by a store of your own.

        /// The file or schema exists but is not a postback-verify state (not SQLite, or without our schema table).
        public static let notOurs = Code("not-ours")
        /// The state is ours but its contents are damaged.
        public static let damaged = Code("damaged")
        /// The state was written by a later release with a newer schema version.
        public static let newerSchema = Code("newer-schema")
        /// The state file, its directory or the database server cannot be opened, created or written.
        public static let cannotOpen = Code("cannot-open")
        /// Another process held the state longer than the busy timeout.
        public static let busy = Code("busy")
        /// The database server went away while in use (stopped, restarted, unreachable); a later call may succeed.
        public static let unavailable = Code("unavailable")
        /// Reading or writing the state failed while in use.
        public static let failed = Code("failed")

        /// The codes an item's verdict can carry, in docs/cli.md's order.
        static let itemCodes: [Code] = [
            .malformedInput, .unsupportedAlgorithm, .unknownKey, .untrustedKey, .badSignature, .invalidField,
            .invalidUnsignedField, .duplicate, .ruleWarning, .unsupportedVersion,
        ]

        /// Every code, item codes first.
        @_spi(CommandLine) public static let allCases: [Code] = itemCodes + [
            .invalidKey, .invalidOption, .invalidSchema, .notOurs, .damaged, .newerSchema, .cannotOpen, .busy, .unavailable,
            .failed,
        ]
    }
}
