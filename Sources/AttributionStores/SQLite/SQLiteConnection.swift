@_spi(Stores) import Attribution
internal import CAttributionSQLite
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One open SQLite database connection, closed when the last reference goes.
///
/// Not thread-safe (opened with `SQLITE_OPEN_NOMUTEX`): one thread uses it at a time, which ``StateDatabase``'s
/// owners guarantee (the CLI's writer thread, or ``SQLiteDeduplicationStore``'s lock).
final class SQLiteConnection {
    let handle: OpaquePointer

    /// Opens `path` read-only, or read-write and created when missing.
    init(path: String, readOnly: Bool) throws(SQLiteFailure) {
        let flags = (readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)
            | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE
        var opened: OpaquePointer?
        let status = sqlite3_open_v2(path, &opened, flags, nil)
        guard status == SQLITE_OK, let opened else {
            var message = opened.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(status))
            if !readOnly && Self.isOnReadOnlyFileSystem(path) {
                // SQLite's last system error is then a later fallback's (often "No such file or directory").
                message += " (\(Self.readOnlyFileSystem))"
            } else if let opened, sqlite3_system_errno(opened) != 0 {
                message += " (\(String(cString: strerror(sqlite3_system_errno(opened)))))"
            }
            sqlite3_close_v2(opened)
            throw SQLiteFailure(code: status, message: message)
        }
        if !readOnly && sqlite3_db_readonly(opened, "main") == 1 {
            // SQLite opens a file it cannot write read-only; a state that cannot be written is refused now, with
            // its cause, rather than at its first write.
            sqlite3_close_v2(opened)
            throw SQLiteFailure(code: SQLITE_READONLY, message: Self.isOnReadOnlyFileSystem(path)
                ? Self.readOnlyFileSystem
                : "it can only be opened read-only: make it writable")
        }
        handle = opened
    }

    deinit {
        sqlite3_close_v2(handle)
    }

    /// What a state or archive on a read-only file system is refused with, and the remedy.
    static let readOnlyFileSystem =
        "the file system holding it is read-only: remount it read-write, or use a path on a writable one"

    /// True when `path`, or the directory that would hold it, is on a file system mounted read-only (where even
    /// root cannot create or write it).
    static func isOnReadOnlyFileSystem(_ path: String) -> Bool {
        var status = statvfs()
        if statvfs(path, &status) == 0 { return status.f_flag & UInt(ST_RDONLY) != 0 }
        let directory = path.lastIndex(of: "/").map { String(path[..<$0]) } ?? "."
        guard statvfs(directory.isEmpty ? "/" : directory, &status) == 0 else { return false }
        return status.f_flag & UInt(ST_RDONLY) != 0
    }

    /// Waits up to `milliseconds` for another connection's lock before a statement answers `SQLITE_BUSY`.
    func setBusyTimeout(milliseconds: Int32) {
        sqlite3_busy_timeout(handle, milliseconds)
    }

    /// Closing leaves the write-ahead log as it is (see the shim): the next connection checkpoints it.
    func skipCheckpointOnClose() {
        _ = attribution_sqlite_skip_checkpoint_on_close(handle)
    }

    /// Runs SQL that returns no rows we need (several statements allowed).
    func execute(_ sql: String) throws(SQLiteFailure) {
        let status = sqlite3_exec(handle, sql, nil, nil, nil)
        guard status == SQLITE_OK else { throw failure(status) }
    }

    func prepare(_ sql: String) throws(SQLiteFailure) -> SQLiteStatement {
        var statement: OpaquePointer?
        let status = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard status == SQLITE_OK, let statement else { throw failure(status) }
        return SQLiteStatement(handle: statement, connection: self)
    }

    /// Rows changed by the last INSERT, UPDATE or DELETE.
    var changes: Int { Int(sqlite3_changes64(handle)) }

    /// The rowid of the last row inserted.
    var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    /// True while a transaction is open.
    var isInTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }

    /// The failure `status` stands for, with the connection's message and, for I/O errors, the system's.
    func failure(_ status: Int32) -> SQLiteFailure {
        var message = String(cString: sqlite3_errmsg(handle))
        let systemError = sqlite3_system_errno(handle)
        if systemError != 0, status & 0xff == SQLITE_IOERR || status & 0xff == SQLITE_CANTOPEN {
            message += " (\(String(cString: strerror(systemError))))"
        }
        return SQLiteFailure(code: sqlite3_extended_errcode(handle), message: message)
    }
}
