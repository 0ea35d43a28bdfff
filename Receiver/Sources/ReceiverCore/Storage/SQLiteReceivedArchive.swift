import CReceiverSQLite
import Foundation
import Synchronization

/// The receiver's archive: every stored request's bytes, verdict and record, in a SQLite file of its own.
///
/// Not in the state file: the state file (shared with `postback-verify --state`) refuses any table that is not its
/// own, and every command-line run checks the whole state file at start-up (`PRAGMA quick_check`), so bodies
/// (about 1 KiB each, kept until you delete them) would slow every run; the state stays about 130 bytes per
/// postback. The archive refuses a file that has other tables (a state file given by mistake) and leaves it as it
/// is. All calls run on one dedicated thread, one group per transaction, with `synchronous=FULL`: a commit reaches
/// the disk (WAL `fsync`) before it returns, so a 200 survives a power loss.
///
/// The log is folded into the file (a checkpoint) off the commit path: SQLite's own checkpoint runs inside the
/// commit that fills the log (4 MiB, every half second at 5,000 requests per second) and holds every request of the
/// next groups for its writes and `fsync`, which set the receiver's p99 latency. Here a second connection folds the
/// log on its own thread whenever 1 MiB of it is waiting (`PASSIVE`: commits go on meanwhile), and the committing
/// thread restarts the log itself (`RESTART`, brief: the other thread has folded almost all of it) only when it
/// reaches 64 MiB, which continuous writes would otherwise keep growing.
final class SQLiteReceivedArchive: @unchecked Sendable {
    /// Version 2 added `kept`; a version 1 file is migrated when opened (its rows all kept their bodies).
    static let schemaVersion: Int64 = 2
    static let schema = """
        CREATE TABLE IF NOT EXISTS received_postbacks_schema (version INTEGER NOT NULL);
        CREATE TABLE IF NOT EXISTS received_postbacks (
            id INTEGER PRIMARY KEY,
            received INTEGER NOT NULL,
            request TEXT NOT NULL,
            route TEXT NOT NULL,
            verdict TEXT NOT NULL,
            code TEXT,
            key BLOB,
            body BLOB NOT NULL,
            record TEXT NOT NULL,
            kept TEXT NOT NULL DEFAULT 'body'
        );
        """
    static let migrationFromVersion1 = """
        ALTER TABLE received_postbacks ADD COLUMN kept TEXT NOT NULL DEFAULT 'body';
        UPDATE received_postbacks_schema SET version = 2;
        """

    /// What a row's `body` holds.
    enum Kept: String, Sendable {
        /// The bytes received, exactly.
        case body
        /// A changed-content duplicate over the invalid quota: its content fingerprint and the unsigned members
        /// that differ from its first sighting's, as JSON (``DurableSink/differences(of:content:)``).
        case differences
    }

    private let path: String
    private var database: OpaquePointer?
    private var insert: OpaquePointer?
    private let queue = DispatchQueue(label: "postback-receiver.sqlite-archive")
    /// The connection that folds the log into the file, on `checkpointQueue`.
    private var checkpointer: OpaquePointer?
    private let checkpointQueue = DispatchQueue(label: "postback-receiver.sqlite-archive.checkpoint")
    private let checkpointRunning = Atomic<Bool>(false)
    /// Pages in the log after the last commit (SQLite's WAL hook); only on the archive's thread.
    private var logPages: Int32 = 0
    /// 1 MiB and 64 MiB of 4 KiB pages: when the log is folded in the background, and when the committing thread
    /// restarts it.
    static let backgroundCheckpointPages: Int32 = 256
    static let restartPages: Int32 = 16_384

    /// Opens (creating when missing) the table in the SQLite file at `path`; the deduplication store must have
    /// opened the file first (it refuses a file that is not a state file, and creates its tables in an empty one).
    init(path: String, synchronous: ReceiverConfiguration.Synchronous = .full) throws(StorageFailure) {
        self.path = path
        var handle: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        guard sqlite3_open_v2(path, &handle, flags, nil) == SQLITE_OK, let handle else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close(handle)
            throw StorageFailure("state-open", "cannot open \(path): \(message)")
        }
        database = handle
        sqlite3_busy_timeout(handle, 60_000)
        do throws(StorageFailure) {
            try refuseForeignTables()
            try execute("PRAGMA journal_mode=WAL")
            try execute("PRAGMA synchronous=\(synchronous == .full ? "FULL" : "NORMAL")")
            // The log file is cut back to 16 MiB when it restarts; the hook replaces SQLite's own checkpoints.
            try execute("PRAGMA journal_size_limit=16777216")
            try execute("BEGIN IMMEDIATE")
            do throws(StorageFailure) {
                try execute(Self.schema)
                try checkVersion()
                try execute("COMMIT")
            } catch {
                try? execute("ROLLBACK")
                throw error
            }
            insert = try prepare("""
                INSERT INTO received_postbacks (received, request, route, verdict, code, key, body, record, kept)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                """)
            try openCheckpointer(synchronous: synchronous)
        } catch {
            sqlite3_finalize(insert)
            sqlite3_close_v2(checkpointer)
            sqlite3_close_v2(database)
            throw error
        }
    }

    deinit {
        // No fold is in progress: a queued fold holds this archive until its checkpoint returned (so this may run
        // on the folding queue itself, after it; waiting for that queue here would wait for itself).
        sqlite3_close_v2(checkpointer)
        sqlite3_finalize(insert)
        sqlite3_close_v2(database)
    }

    /// Opens the folding connection and replaces SQLite's checkpoint-on-commit with the WAL hook.
    private func openCheckpointer(synchronous: ReceiverConfiguration.Synchronous) throws(StorageFailure) {
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX
        guard sqlite3_open_v2(path, &checkpointer, flags, nil) == SQLITE_OK, let checkpointer else {
            throw StorageFailure("state-open", "cannot open \(path) a second time to fold its log")
        }
        let setting = "PRAGMA synchronous=\(synchronous == .full ? "FULL" : "NORMAL")"
        guard sqlite3_exec(checkpointer, setting, nil, nil, nil) == SQLITE_OK else {
            throw StorageFailure("state-open", "cannot set up \(path)'s folding connection")
        }
        sqlite3_wal_hook(database, { context, _, _, pages in
            guard let context else { return SQLITE_OK }
            Unmanaged<SQLiteReceivedArchive>.fromOpaque(context).takeUnretainedValue().logPages = pages
            return SQLITE_OK
        }, Unmanaged.passUnretained(self).toOpaque())
    }

    /// After a commit, on the archive's thread: folds the log in the background once 1 MiB waits; restarts it here
    /// at 64 MiB. A fold that fails (a full disk) is tried again after the next commit; the rows are in the log.
    private func foldLog() {
        if logPages >= Self.restartPages {
            sqlite3_wal_checkpoint_v2(database, nil, SQLITE_CHECKPOINT_RESTART, nil, nil)
            logPages = 0
        } else if logPages >= Self.backgroundCheckpointPages,
                  !checkpointRunning.exchange(true, ordering: .acquiringAndReleasing) {
            checkpointQueue.async { [self] in
                sqlite3_wal_checkpoint_v2(checkpointer, nil, SQLITE_CHECKPOINT_PASSIVE, nil, nil)
                checkpointRunning.store(false, ordering: .releasing)
            }
        }
    }

    /// Runs `work` on the archive's own thread (a serial queue), and returns what it returned.
    func onArchiveThread<Value: Sendable>(_ work: @escaping @Sendable () throws -> Value) async throws -> Value {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Value, any Error>) in
            queue.async {
                continuation.resume(with: Result { try work() })
            }
        }
    }

    /// Runs `work` on the archive's thread after `delay`, without waiting for it.
    func onArchiveThread(after delay: DispatchTimeInterval, _ work: @escaping @Sendable () -> Void) {
        queue.asyncAfter(deadline: .now() + delay, execute: work)
    }

    /// One row of `received_postbacks`.
    struct Row: Sendable {
        var received: Int64
        var request: String
        var route: String
        var verdict: String
        var code: String?
        var key: [UInt8]?
        var body: [UInt8]
        var record: [UInt8]
        var kept: Kept = .body
    }

    /// Inserts every row of `rows` in one transaction; throws (and stores none) when SQLite fails (disk full,
    /// read-only, I/O error). Only on the archive's thread (``onArchiveThread(_:)``).
    func appendNow(_ rows: [Row]) throws(StorageFailure) {
        try execute("BEGIN IMMEDIATE")
        do throws(StorageFailure) {
            for row in rows {
                try insertRow(row)
            }
            try execute("COMMIT")
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
        foldLog()
    }

    private func insertRow(_ row: Row) throws(StorageFailure) {
        guard let statement = insert else { throw StorageFailure("state-write", "the archive is closed") }
        defer {
            sqlite3_reset(statement)
            sqlite3_clear_bindings(statement)
        }
        sqlite3_bind_int64(statement, 1, row.received)
        bindText(statement, 2, Array(row.request.utf8))
        bindText(statement, 3, Array(row.route.utf8))
        bindText(statement, 4, Array(row.verdict.utf8))
        if let code = row.code { bindText(statement, 5, Array(code.utf8)) } else { sqlite3_bind_null(statement, 5) }
        if let key = row.key { bindBlob(statement, 6, key) } else { sqlite3_bind_null(statement, 6) }
        bindBlob(statement, 7, row.body)
        bindText(statement, 8, row.record)
        bindText(statement, 9, Array(row.kept.rawValue.utf8))
        let status = sqlite3_step(statement)
        guard status == SQLITE_DONE else { throw failure(status, doing: "insert a received postback") }
    }

    private func bindText(_ statement: OpaquePointer, _ index: Int32, _ bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { buffer in
            _ = buffer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: max(buffer.count, 1)) {
                sqlite3_bind_text(statement, index, $0, Int32(buffer.count), receiver_sqlite_transient())
            }
        }
    }

    private func bindBlob(_ statement: OpaquePointer, _ index: Int32, _ bytes: [UInt8]) {
        bytes.withUnsafeBytes { buffer in
            _ = sqlite3_bind_blob(statement, index, buffer.baseAddress ?? UnsafeRawPointer(bitPattern: 1),
                                  Int32(buffer.count), receiver_sqlite_transient())
        }
    }

    /// A file with tables but no `received_postbacks_schema` is someone else's: refused, untouched.
    private func refuseForeignTables() throws(StorageFailure) {
        let select = try prepare(
            "SELECT count(*), sum(name = 'received_postbacks_schema') FROM sqlite_schema WHERE type = 'table'")
        defer { sqlite3_finalize(select) }
        guard sqlite3_step(select) == SQLITE_ROW else { throw failure(SQLITE_ERROR, doing: "read the schema") }
        if sqlite3_column_int64(select, 0) > 0 && sqlite3_column_int64(select, 1) != 1 {
            throw StorageFailure("not-ours", "\(path) is a SQLite database without postback-receiver's "
                                 + "received_postbacks_schema table: not an archive, left as it is")
        }
    }

    private func checkVersion() throws(StorageFailure) {
        let select = try prepare("SELECT version FROM received_postbacks_schema")
        defer { sqlite3_finalize(select) }
        let status = sqlite3_step(select)
        if status == SQLITE_ROW {
            let version = sqlite3_column_int64(select, 0)
            if version == 1 {
                sqlite3_reset(select)  // a pending read would hold the table ALTER TABLE changes
                try execute(Self.migrationFromVersion1)
                return
            }
            guard version == Self.schemaVersion else {
                throw StorageFailure("newer-schema", "\(path) has received_postbacks version \(version); this "
                                     + "receiver knows \(Self.schemaVersion): use a later release")
            }
        } else if status == SQLITE_DONE {
            try execute("INSERT INTO received_postbacks_schema (version) VALUES (\(Self.schemaVersion))")
        } else {
            throw failure(status, doing: "read the received_postbacks schema version")
        }
    }

    private func prepare(_ sql: String) throws(StorageFailure) -> OpaquePointer {
        var statement: OpaquePointer?
        let status = sqlite3_prepare_v2(database, sql, -1, &statement, nil)
        guard status == SQLITE_OK, let statement else {
            sqlite3_finalize(statement)
            throw failure(status, doing: "prepare a statement")
        }
        return statement
    }

    private func execute(_ sql: String) throws(StorageFailure) {
        let status = sqlite3_exec(database, sql, nil, nil, nil)
        guard status == SQLITE_OK else { throw failure(status, doing: "run \(sql.prefix(40))") }
    }

    private func failure(_ status: Int32, doing what: String) -> StorageFailure {
        let message = database.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(status))
        let code = status & 0xff == SQLITE_FULL ? "state-full" : status & 0xff == SQLITE_READONLY ? "state-read-only"
            : "state-write"
        return StorageFailure(code, "cannot \(what) in \(path): \(message)")
    }
}
