@_spi(Stores) import Attribution
internal import CAttributionSQLite
import Dispatch
import Synchronization

/// The received-postback archive in a SQLite file of its own: a receiver's every stored request (bytes, verdict,
/// record), when its state is a SQLite file.
///
/// Not in the state file: the state file (shared with `postback-verify --state`) refuses any table that is not its
/// own, and every command-line run checks the whole state file at start-up (`PRAGMA quick_check`), so bodies
/// (about 1 KiB each, kept until you delete them) would slow every run; the state stays about 130 bytes per
/// postback. The archive refuses a file that has other tables (a state file given by mistake) and leaves it as it
/// is. ``append(_:owing:)`` writes a group of rows in one transaction, by default with `synchronous=FULL`: a commit
/// reaches the disk (WAL `fsync`) before it returns, so an answer given after it survives a power loss.
///
/// The log is folded into the file (a checkpoint) off the commit path: SQLite's own checkpoint runs inside the
/// commit that fills the log (4 MiB, every half second at 5,000 requests per second) and holds every request of the
/// next groups for its writes and `fsync`, which set a receiver's p99 latency. Here a second connection folds the
/// log on its own thread whenever 1 MiB of it is waiting (`PASSIVE`: commits go on meanwhile), and the committing
/// thread restarts the log itself (`RESTART`, brief: the other thread has folded almost all of it) only when it
/// reaches 64 MiB, which continuous writes would otherwise keep growing.
///
/// The archive holds the relay's outbox too (`SQLiteOutbox`, tables `relay_outbox_schema` and `relay_deliveries`):
/// ``append(_:owing:)`` writes each row's owed deliveries in the row's transaction, so a delivery is owed from the
/// moment its postback is stored.
///
/// Rows get increasing ids (SQLite gives each new row one more than the largest id in the table), committed one
/// writer at a time: the id is the row's `ArchiveCursor`. Delete old rows as you like; deleting the newest
/// rows would let their ids be given again, behind a consumer's cursor.
@_spi(CommandLine) @_spi(Servers) public final class SQLiteReceivedArchive: Sendable {
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
    /// 1 MiB and 64 MiB of 4 KiB pages: when the log is folded in the background, and when the committing thread
    /// restarts it.
    static let backgroundCheckpointPages: Int32 = 256
    static let restartPages: Int32 = 16_384

    /// The file's path, as given.
    public let path: String

    /// Where a receiver keeps the archive of a SQLite state at `statePath` unless told otherwise, and where
    /// `postback-verify export --state` looks for it: `state.sqlite` -> `state-received.sqlite` (other names get
    /// `-received.sqlite` appended).
    /// - Parameter statePath: the SQLite state's path.
    /// - Returns: the archive's path.
    public static func defaultPath(besideState statePath: String) -> String {
        statePath.hasSuffix(".sqlite") ? String(statePath.dropLast(".sqlite".count)) + "-received.sqlite"
            : statePath + "-received.sqlite"
    }
    private let writer: Locked<Writer>
    /// This process's turn to write the file, shared with its outbox (``SQLiteWriteGate``).
    private let gate: SQLiteWriteGate
    /// The connection that folds the log into the file, on `checkpointQueue`.
    private let checkpointer: Locked<SQLiteConnection>
    private let checkpointQueue = DispatchQueue(label: "postback-verify.sqlite-archive.checkpoint")
    private let checkpointRunning = Atomic<Bool>(false)

    /// The writing connection, its insert, and the pages in the log after its last commit (SQLite's WAL hook).
    private final class Writer {
        let connection: SQLiteConnection
        let insert: SQLiteStatement
        /// The outbox's insert (`SQLiteOutbox.insert`).
        let owe: SQLiteStatement
        var logPages: Int32 = 0

        init(connection: SQLiteConnection, insert: SQLiteStatement, owe: SQLiteStatement) {
            self.connection = connection
            self.insert = insert
            self.owe = owe
        }
    }

    /// Opens the archive at `path`, creating it when missing and migrating a version-1 file; refuses, untouched, a
    /// file with tables of someone else's (a state file given by mistake) or a newer version.
    /// - Parameters:
    ///   - path: the archive file, created when missing.
    ///   - syncsEveryCommit: `synchronous=FULL` (a commit survives a power loss; the default), or
    ///     `NORMAL` (it survives the process's crash, not the machine's).
    /// - Throws: ``/Attribution/AttributionError`` with a state code: `not-ours` or `newer-schema` for a file left
    ///   untouched, else the SQLite failure's (such as `cannot-open` or `busy`).
    public init(path: String, syncsEveryCommit: Bool = true) throws(AttributionError) {
        self.path = path
        let synchronous = "PRAGMA synchronous=\(syncsEveryCommit ? "FULL" : "NORMAL")"
        let connection: SQLiteConnection
        let insert: SQLiteStatement
        let owe: SQLiteStatement
        let folding: SQLiteConnection
        do {
            connection = try SQLiteConnection(path: path, readOnly: false)
            connection.setBusyTimeout(milliseconds: 60_000)
            try Self.refuseForeignTables(connection, path: path)
            try connection.execute("PRAGMA journal_mode=WAL")
            try connection.execute(synchronous)
            // The log file is cut back to 16 MiB when it restarts; the hook replaces SQLite's own checkpoints.
            try connection.execute("PRAGMA journal_size_limit=16777216")
            try connection.execute("BEGIN IMMEDIATE")
            do {
                try connection.execute(Self.schema)
                try Self.checkVersion(connection, path: path)
                try connection.execute(SQLiteOutbox.schema)
                try connection.execute("COMMIT")
            } catch {
                try? connection.execute("ROLLBACK")
                throw error
            }
            insert = try connection.prepare("""
                INSERT INTO received_postbacks (received, request, route, verdict, code, key, body, record, kept)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                """)
            owe = try connection.prepare(SQLiteOutbox.insert)
            folding = try SQLiteConnection(path: path, readOnly: false)
            try folding.execute(synchronous)
        } catch let refusal as AttributionError {
            throw refusal
        } catch {
            throw Self.error(error, path: path, doing: "open")
        }
        let writer = Writer(connection: connection, insert: insert, owe: owe)
        sqlite3_wal_hook(connection.handle, { context, _, _, pages in
            guard let context else { return SQLITE_OK }
            Unmanaged<Writer>.fromOpaque(context).takeUnretainedValue().logPages = pages
            return SQLITE_OK
        }, Unmanaged.passUnretained(writer).toOpaque())
        self.writer = Locked(writer)
        gate = SQLiteWriteGate.gate(for: path)
        checkpointer = Locked(folding)
    }

    /// Inserts every row of `rows` in one transaction, with an outbox row for each destination of `destinations`
    /// that is owed it (`OutboxDestination.owes(_:)`); throws (and stores none of it) when SQLite fails (a full
    /// disk, a read-only file, an I/O error).
    /// - Parameters:
    ///   - rows: the received postbacks, in arrival order.
    ///   - destinations: the relay's destinations (none without a relay).
    /// - Throws: ``/Attribution/AttributionError`` when nothing was stored.
    public func append(_ rows: [ArchivedPostback], owing destinations: [OutboxDestination] = [])
        throws(AttributionError) {
        guard !rows.isEmpty else { return }
        let pages = try writer.withLock { (writer: inout Writer) throws(AttributionError) -> Int32 in
            try gate.withTurn { () throws(AttributionError) -> Int32 in
                let connection = writer.connection
                do throws(SQLiteFailure) {
                    try connection.execute("BEGIN IMMEDIATE")
                    do throws(SQLiteFailure) {
                        for row in rows {
                            try Self.insert(row, with: writer.insert)
                            let id = connection.lastInsertRowID
                            for destination in destinations where destination.owes(row) {
                                try Self.owe(id, received: row.received, to: destination.name, with: writer.owe)
                            }
                        }
                        try connection.execute("COMMIT")
                    } catch {
                        if connection.isInTransaction { try? connection.execute("ROLLBACK") }
                        throw error
                    }
                } catch {
                    throw Self.error(error, path: path, doing: "insert received postbacks into")
                }
                if writer.logPages >= Self.restartPages {
                    sqlite3_wal_checkpoint_v2(connection.handle, nil, SQLITE_CHECKPOINT_RESTART, nil, nil)
                    writer.logPages = 0
                }
                return writer.logPages
            }
        }
        foldLog(pages: pages)
    }

    /// After a commit: folds the log in the background once 1 MiB waits. A fold that fails (a full disk) is tried
    /// again after the next commit; the rows are in the log.
    private func foldLog(pages: Int32) {
        guard pages >= Self.backgroundCheckpointPages,
              !checkpointRunning.exchange(true, ordering: .acquiringAndReleasing) else { return }
        checkpointQueue.async { [self] in
            checkpointer.withLock { connection in
                _ = sqlite3_wal_checkpoint_v2(connection.handle, nil, SQLITE_CHECKPOINT_PASSIVE, nil, nil)
            }
            checkpointRunning.store(false, ordering: .releasing)
        }
    }

    private static func insert(_ row: ArchivedPostback, with statement: SQLiteStatement) throws(SQLiteFailure) {
        defer { statement.reset() }
        try statement.bind(1, row.received)
        try statement.bind(2, text: row.request)
        try statement.bind(3, text: row.route)
        try statement.bind(4, text: row.verdict)
        if let code = row.code { try statement.bind(5, text: code) } else { try statement.bind(5, nil as Int64?) }
        try statement.bind(6, blob: row.key)
        try statement.bind(7, blob: row.body)
        try statement.bind(8, text: row.record)
        try statement.bind(9, text: row.kept.rawValue)
        _ = try statement.step()
    }

    private static func owe(_ id: Int64, received: Int64, to destination: String, with statement: SQLiteStatement)
        throws(SQLiteFailure) {
        defer { statement.reset() }
        try statement.bind(1, id)
        try statement.bind(2, text: destination)
        try statement.bind(3, received)
        try statement.bind(4, received)
        _ = try statement.step()
    }

    /// A file with tables but no `received_postbacks_schema` is someone else's: refused, untouched.
    private static func refuseForeignTables(_ connection: SQLiteConnection, path: String) throws {
        let select = try connection.prepare(
            "SELECT count(*), sum(name = 'received_postbacks_schema') FROM sqlite_schema WHERE type = 'table'")
        guard try select.step() else { throw AttributionError(.damaged, "\(path): cannot read its schema") }
        if select.int64(0) > 0 && select.int64(1) != 1 {
            throw AttributionError(.notOurs, "\(path) is a SQLite database without the received_postbacks_schema "
                                   + "table: not an archive of received postbacks, left as it is")
        }
    }

    private static func checkVersion(_ connection: SQLiteConnection, path: String) throws {
        let select = try connection.prepare("SELECT version FROM received_postbacks_schema")
        if try select.step() {
            let version = select.int64(0)
            select.reset()  // a pending read would hold the table ALTER TABLE changes
            if version == 1 {
                try connection.execute(Self.migrationFromVersion1)
                return
            }
            guard version == Self.schemaVersion else {
                throw AttributionError(version > schemaVersion ? .newerSchema : .damaged,
                                       "\(path) has received_postbacks version \(version); this release knows "
                                       + "\(Self.schemaVersion)\(version > schemaVersion ? ": use a later release" : "")")
            }
        } else {
            try connection.execute("INSERT INTO received_postbacks_schema (version) VALUES (\(Self.schemaVersion))")
        }
    }

    /// What a SQLite failure means here; refusals (already ``/Attribution/AttributionError``) pass through.
    static func error(_ failure: any Error, path: String, doing: String) -> AttributionError {
        if let refusal = failure as? AttributionError { return refusal }
        guard let failure = failure as? SQLiteFailure else {
            return AttributionError(.failed, "cannot \(doing) \(path): \(failure)")
        }
        return AttributionError(failure.stateCode, "cannot \(doing) \(path): \(failure.message)")
    }
}
