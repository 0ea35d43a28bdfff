@_spi(Stores) import Attribution
internal import CAttributionSQLite
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One prepared SQLite statement, reused across calls (bind, step, reset) and finalised when released.
final class SQLiteStatement {
    private let handle: OpaquePointer
    /// Kept so the connection outlives its statements.
    private let connection: SQLiteConnection

    init(handle: OpaquePointer, connection: SQLiteConnection) {
        self.handle = handle
        self.connection = connection
    }

    deinit {
        sqlite3_finalize(handle)
    }

    /// Binds `bytes` as TEXT, byte for byte: SQLite neither normalises nor re-encodes them, and compares TEXT
    /// under the `BINARY` collation with `memcmp`.
    func bind(_ index: Int32, text bytes: [UInt8]) throws(SQLiteFailure) {
        let status: Int32
        if bytes.isEmpty {
            // An empty array has no base address, and a null pointer would bind NULL: bind "" instead.
            status = sqlite3_bind_text(handle, index, "", 0, attribution_sqlite_transient())
        } else {
            status = bytes.withUnsafeBytes { raw in
                sqlite3_bind_text(handle, index, raw.baseAddress?.assumingMemoryBound(to: CChar.self),
                                  Int32(raw.count), attribution_sqlite_transient())
            }
        }
        guard status == SQLITE_OK else { throw connection.failure(status) }
    }

    func bind(_ index: Int32, text: String) throws(SQLiteFailure) {
        try bind(index, text: Array(text.utf8))
    }

    /// Binds `bytes` as a BLOB (a copy), or NULL when nil.
    func bind(_ index: Int32, blob bytes: [UInt8]?) throws(SQLiteFailure) {
        let status: Int32
        if let bytes {
            status = bytes.withUnsafeBytes { raw in
                sqlite3_bind_blob(handle, index, raw.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32(raw.count),
                                  attribution_sqlite_transient())
            }
        } else {
            status = sqlite3_bind_null(handle, index)
        }
        guard status == SQLITE_OK else { throw connection.failure(status) }
    }

    /// Binds `bytes` as TEXT (or as a BLOB when `blob`) without copying them: SQLite reads them when the statement
    /// steps, so the caller keeps them alive and unchanged until it has stepped and reset the statement (the hot
    /// path of a claim binds a key, a source and a fingerprint per row; a copy each is a malloc and a free).
    /// Returns SQLite's status; throwing is left to the caller, outside the closure that lends the bytes.
    func bindBorrowed(_ index: Int32, _ bytes: UnsafeRawBufferPointer, blob: Bool = false) -> Int32 {
        guard let base = bytes.baseAddress, !bytes.isEmpty else {
            // An empty buffer may have no address, and a null pointer would bind NULL: bind an empty value, copied.
            return blob ? sqlite3_bind_zeroblob(handle, index, 0)
                : sqlite3_bind_text(handle, index, "", 0, attribution_sqlite_transient())
        }
        return blob ? sqlite3_bind_blob(handle, index, base, Int32(bytes.count), nil)
            : sqlite3_bind_text(handle, index, base.assumingMemoryBound(to: CChar.self), Int32(bytes.count), nil)
    }

    /// Binds `value` (NULL when nil); SQLite's status.
    func bindInteger(_ index: Int32, _ value: Int64?) -> Int32 {
        guard let value else { return sqlite3_bind_null(handle, index) }
        return sqlite3_bind_int64(handle, index, value)
    }

    /// Steps a statement that returns no rows, resets it and clears its bindings, so that no borrowed bytes
    /// (``bindBorrowed(_:_:blob:)``) stay bound once the closure lending them returns: SQLite's status,
    /// `SQLITE_DONE` when it ran.
    func runReleasingBindings() -> Int32 {
        let status = sqlite3_step(handle)
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
        return status
    }

    /// The failure `status` stands for (`SQLITE_DONE` and `SQLITE_ROW` are none).
    func check(_ status: Int32) throws(SQLiteFailure) {
        guard status == SQLITE_OK || status == SQLITE_DONE || status == SQLITE_ROW else {
            throw connection.failure(status)
        }
    }

    /// Whether the column's bytes (TEXT or BLOB) are exactly `bytes`.
    func columnEquals(_ column: Int32, _ bytes: [UInt8]) -> Bool {
        let count = Int(sqlite3_column_bytes(handle, column))
        guard count == bytes.count else { return false }
        guard count > 0 else { return true }
        guard let stored = sqlite3_column_blob(handle, column) else { return false }
        return bytes.withUnsafeBytes { memcmp(stored, $0.baseAddress!, count) == 0 }
    }

    /// Binds `value`, or NULL when nil.
    func bind(_ index: Int32, _ value: Int64?) throws(SQLiteFailure) {
        guard let value else {
            let status = sqlite3_bind_null(handle, index)
            guard status == SQLITE_OK else { throw connection.failure(status) }
            return
        }
        try bind(index, value)
    }

    func bind(_ index: Int32, _ value: Int64) throws(SQLiteFailure) {
        let status = sqlite3_bind_int64(handle, index, value)
        guard status == SQLITE_OK else { throw connection.failure(status) }
    }

    /// Advances: true with a row to read, false when done.
    func step() throws(SQLiteFailure) -> Bool {
        let status = sqlite3_step(handle)
        switch status {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw connection.failure(status)
        }
    }

    /// Makes the statement ready to bind and run again.
    func reset() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    /// Runs a statement that returns no rows, then resets it.
    func run() throws(SQLiteFailure) {
        defer { reset() }
        _ = try step()
    }

    func int64(_ column: Int32) -> Int64 {
        sqlite3_column_int64(handle, column)
    }

    /// The column's type is INTEGER (not NULL, REAL, TEXT or BLOB).
    func isInteger(_ column: Int32) -> Bool {
        sqlite3_column_type(handle, column) == SQLITE_INTEGER
    }

    func isNull(_ column: Int32) -> Bool {
        sqlite3_column_type(handle, column) == SQLITE_NULL
    }

    /// The column's bytes as a BLOB (empty for an empty blob; nil for NULL).
    func blob(_ column: Int32) -> [UInt8]? {
        guard !isNull(column) else { return nil }
        let count = Int(sqlite3_column_bytes(handle, column))
        guard count > 0, let bytes = sqlite3_column_blob(handle, column) else { return [] }
        return Array(UnsafeRawBufferPointer(start: bytes, count: count))
    }

    func text(_ column: Int32) -> String {
        guard let bytes = sqlite3_column_text(handle, column) else { return "" }
        let count = Int(sqlite3_column_bytes(handle, column))
        return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }
}
