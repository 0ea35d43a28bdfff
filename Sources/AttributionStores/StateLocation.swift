@_spi(Stores) import Attribution

/// Where deduplication outlives a process, as `--state` names it in every program that takes it (`postback-verify`
/// and `postback-receiver` alike), with `--retention`: one definition of what the values mean, of the messages when
/// they cannot be used (``/Attribution/AttributionError`` with code `invalid-option`), and of the store they open.
public enum StateLocation: Sendable, Equatable {
    /// A SQLite file, shared by every process on the machine that opens it (docs/state.md).
    case sqlite(path: String)
    /// A PostgreSQL database (a libpq connection string or `postgresql://` URL), shared by every machine.
    case postgreSQL(connection: String)

    /// Days a postback is remembered when `--retention` is not given.
    public static let defaultRetentionDays = 10

    /// `--state`'s value: a `postgresql://` URL or a libpq keyword string (`host=... dbname=...`) names a server,
    /// anything else a SQLite file's path. Empty, or `-` (which reads as standard input elsewhere), is refused.
    /// - Parameter argument: `--state`'s value.
    /// - Throws: ``/Attribution/AttributionError`` with code `invalid-option` for an empty value or `-`.
    public init(_ argument: String) throws(AttributionError) {
        guard !argument.isEmpty else {
            throw AttributionError(.invalidOption, "--state needs a file path or a PostgreSQL connection string")
        }
        guard argument != "-" else {
            throw AttributionError(.invalidOption, "--state needs a file path, not - (write ./- for a file named -)")
        }
        self = PostgreSQLDeduplicationStore.recognizes(argument) ? .postgreSQL(connection: argument)
            : .sqlite(path: argument)
    }

    /// `--retention`'s value: a whole number of days from 0 to 36500 (ASCII digits only).
    /// - Parameter text: `--retention`'s value.
    /// - Returns: the number of days.
    /// - Throws: ``/Attribution/AttributionError`` with code `invalid-option` for anything else.
    public static func retentionDays(_ text: String) throws(AttributionError) -> Int {
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
              let days = Int(text), (0...36500).contains(days) else {
            throw AttributionError(
                .invalidOption, "--retention takes a whole number of days from 0 to 36500, not \(text)")
        }
        return days
    }

    /// Opens the store: checks a SQLite file, or creates it, and refuses it untouched when it is not a state of
    /// ours; or connects to the PostgreSQL server and creates or checks its schema.
    /// - Parameter retentionDays: forget postbacks first seen more than this many days before a claim's time.
    /// - Returns: a `SQLiteDeduplicationStore` or a `PostgreSQLDeduplicationStore`.
    /// - Throws: ``/Attribution/AttributionError`` with a state code, as the store's initializer throws it.
    public func open(retentionDays: Int = defaultRetentionDays) throws(AttributionError) -> any DeduplicationStore {
        switch self {
        case .sqlite(let path):
            try SQLiteDeduplicationStore(path: path, retentionDays: retentionDays)
        case .postgreSQL(let connection):
            try PostgreSQLDeduplicationStore(connectionString: connection, retentionDays: retentionDays)
        }
    }
}
