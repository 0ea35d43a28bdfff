@_spi(Stores) import Attribution
internal import CAttributionSQLite

/// A SQLite call that did not succeed: its result code and SQLite's message, before ``StateDatabase`` says what
/// it means for the state file.
struct SQLiteFailure: Error {
    /// The extended result code (`SQLITE_IOERR_SHORT_READ`, ...); `code & 0xff` is the primary one.
    let code: Int32
    let message: String

    var primaryCode: Int32 { code & 0xff }

    /// The ``AttributionError`` code a failure means for the state file.
    var stateCode: AttributionError.Code {
        switch primaryCode {
        case SQLITE_NOTADB: .notOurs
        case SQLITE_CORRUPT, SQLITE_FORMAT: .damaged
        case SQLITE_BUSY, SQLITE_LOCKED: .busy
        case SQLITE_CANTOPEN, SQLITE_READONLY, SQLITE_PERM, SQLITE_AUTH: .cannotOpen
        default: .failed
        }
    }
}
