/// Why the deduplication state cannot be used: thrown by ``SQLiteDeduplicationStore`` (and the CLI's `--state`).
///
/// Equal on `code` only, like ``AttributionError``, so tests and callers decide on the code, not the wording;
/// `reason` names the file and says what is wrong with it, for people.
public struct StateError: Error, Sendable, CustomStringConvertible {
    /// A stable name for what went wrong.
    public struct Code: RawRepresentable, Sendable, Hashable {
        public let rawValue: String

        public init(rawValue: String) {
            self.rawValue = rawValue
        }

        /// The file exists but is not a postback-verify state (not SQLite, or SQLite without our schema table).
        public static let notOurs = Code(rawValue: "not-ours")
        /// The file is ours but its contents are damaged.
        public static let damaged = Code(rawValue: "damaged")
        /// The file was written by a later release with a newer schema version.
        public static let newerSchema = Code(rawValue: "newer-schema")
        /// The file or its directory cannot be opened, created or written.
        public static let cannotOpen = Code(rawValue: "cannot-open")
        /// Another process held the database longer than the busy timeout.
        public static let busy = Code(rawValue: "busy")
        /// The database server went away while in use (stopped, restarted, unreachable); a later call may succeed.
        public static let unavailable = Code(rawValue: "unavailable")
        /// Reading or writing the database failed while in use.
        public static let failed = Code(rawValue: "failed")
    }

    public let code: Code
    public let reason: String
    public let file: String
    public let line: UInt

    public init(_ code: Code, _ reason: String, file: String = #fileID, line: UInt = #line) {
        self.code = code
        self.reason = reason
        self.file = file
        self.line = line
    }

    public var description: String { "\(code.rawValue): \(reason)" }
}

extension StateError: Equatable {
    public static func == (lhs: StateError, rhs: StateError) -> Bool {
        lhs.code == rhs.code
    }
}
