#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// The deduplication state in one SQLite file: refused at opening unless it is ours, then asked batch by batch.
///
/// A batch is one transaction taken with `BEGIN IMMEDIATE` (the write lock, waited for up to ``busyTimeout``):
/// ``begin(_:at:)`` inserts the batch's new keys and answers every sighting, the caller delivers its records,
/// and only then ``commit()`` makes the keys visible to any other run. A run killed before its commit leaves no
/// key behind, so a retry is at worst reported valid again, never a duplicate of a record nobody received. Two
/// runs at once queue on the lock, so one of them sees the other's committed keys: each postback is valid once.
///
/// Not thread-safe: ``SQLiteDeduplicationStore`` wraps it in a lock; the CLI uses it from its writer thread.
package final class StateDatabase {
    /// How long a run waits for another run's batch (or a `sqlite3` shell's transaction) before giving up.
    package static let busyTimeout: Int32 = 60_000
    /// Expired rows deleted per batch at most: pruning keeps pace with inserts without a pause of its own.
    static let pruneLimit: Int64 = 512

    package let path: String
    private let retentionMilliseconds: Int64
    private let connection: SQLiteConnection
    private let insert: SQLiteStatement
    private let lookup: SQLiteStatement
    private let forget: SQLiteStatement
    private let prune: SQLiteStatement
    /// Batches skip pruning while their cutoff is at most this: set a minute past a cutoff whose pruning found
    /// fewer than ``pruneLimit`` expired rows among the oldest, so a run (whose cutoff never moves) stops looking
    /// once the old rows are gone, and a server looks again once a minute has expired more.
    private var prunedThrough: Int64 = .min

    /// Opens the state at `path`, creating it when missing (or empty), and refusing, untouched, a file that is
    /// not ours, is damaged, or has a newer schema: it is opened read-only and checked before anything writes.
    ///
    /// - Parameter retentionDays: postbacks first seen longer ago than this are forgotten.
    package init(path: String, retentionDays: Int) throws(StateError) {
        self.path = path
        retentionMilliseconds = Int64(retentionDays) * 86_400_000
        let existing = try Self.existingSize(path)
        if let existing, existing > 0 {
            let reader = try Self.open(path, readOnly: true)
            guard try Self.check(reader, path: path, thorough: true) else {
                throw StateError(.notOurs, "\(path) is a SQLite database without postback-verify's "
                                 + "\(StateSchema.versionTable) table: not a state file, left as it is")
            }
        }
        let connection = try Self.open(path, readOnly: false)
        self.connection = connection
        do {
            try Self.createSchemaIfEmpty(connection, path: path)
            try Self.useWriteAheadLog(connection)
            // A run ends without waiting for the disk: its last batches stay in the log (which carries checksums),
            // synced by a later checkpoint. Power loss before then loses them, and a retry is reported valid again.
            connection.skipCheckpointOnClose()
            // NORMAL: in WAL mode a commit is not synced, a checkpoint is; power loss can undo the last commits
            // (their postbacks are then reported valid again), never corrupt the file. A 16 MiB page cache and
            // checkpoints every 64 MiB of log: fewer reads and rewrites of the same index pages, memory still fixed.
            try connection.execute("PRAGMA synchronous = NORMAL; PRAGMA cache_size = -16384; "
                                   + "PRAGMA wal_autocheckpoint = 16384; PRAGMA journal_size_limit = 67108864")
            insert = try connection.prepare(StateSchema.insert)
            lookup = try connection.prepare(StateSchema.lookup)
            forget = try connection.prepare(StateSchema.forget)
            prune = try connection.prepare(StateSchema.prune)
        } catch let error as SQLiteFailure {
            throw Self.stateError(error, path: path, doing: "cannot use state file")
        } catch let error as StateError {
            throw error
        } catch {
            throw StateError(.failed, "cannot use state file \(path): \(error)")
        }
    }

    /// Takes the write lock, prunes a bounded share of expired rows, and answers `sightings` in order, inserting
    /// each first sighting (seen at `time`) uncommitted. Rows older than the retention count as absent even
    /// before pruning reaches them. On a throw, nothing is left pending.
    package func begin(_ sightings: [PostbackSighting], at time: Date) throws(StateError) -> [DeduplicationAnswer] {
        let seen = time.millisecondsSince1970
        let cutoff = seen - retentionMilliseconds
        do throws(SQLiteFailure) {
            try connection.execute("BEGIN IMMEDIATE")
            if cutoff > prunedThrough {
                try prune.bind(1, cutoff)
                try prune.bind(2, Self.pruneLimit)
                try prune.run()
                if connection.changes < Self.pruneLimit { prunedThrough = cutoff + 60_000 }
            }
            return try sightings.map { sighting throws(SQLiteFailure) in
                try answer(sighting, seen: seen, cutoff: cutoff)
            }
        } catch {
            rollback()
            throw Self.stateError(error, path: path, doing: "cannot read or write state file")
        }
    }

    /// Makes the pending first sightings permanent: call once their records were delivered.
    package func commit() throws(StateError) {
        do throws(SQLiteFailure) {
            try connection.execute("COMMIT")
        } catch {
            rollback()
            throw Self.stateError(error, path: path, doing: "cannot commit to state file")
        }
    }

    /// Drops the pending first sightings (their records were not delivered).
    package func rollback() {
        if connection.isInTransaction { try? connection.execute("ROLLBACK") }
    }

    /// How many postbacks the file remembers (expired rows not yet pruned included).
    package func count() throws(StateError) -> Int {
        do throws(SQLiteFailure) {
            let statement = try connection.prepare(StateSchema.count)
            return try statement.step() ? Int(statement.int64(0)) : 0
        } catch {
            throw Self.stateError(error, path: path, doing: "cannot read state file")
        }
    }

    private func answer(_ sighting: PostbackSighting, seen: Int64, cutoff: Int64) throws(SQLiteFailure)
        -> DeduplicationAnswer {
        if try claim(sighting, seen: seen) { return .firstSeen }
        try lookup.bind(1, text: sighting.key.utf8)
        defer { lookup.reset() }
        guard try lookup.step() else { return .firstSeen }  // unreachable: the insert met this row
        let id = lookup.int64(0)
        let firstSeen = lookup.int64(1)
        if firstSeen < cutoff {
            lookup.reset()
            try forget.bind(1, id)
            try forget.run()
            _ = try claim(sighting, seen: seen)
            return .firstSeen
        }
        return .duplicate(of: DuplicateReference(
            source: lookup.text(2), line: Int(lookup.int64(3)), firstSeen: Date(milliseconds: firstSeen)))
    }

    /// Inserts `sighting` as first seen; false when its key is there already.
    private func claim(_ sighting: PostbackSighting, seen: Int64) throws(SQLiteFailure) -> Bool {
        try insert.bind(1, text: sighting.key.utf8)
        try insert.bind(2, seen)
        try insert.bind(3, text: sighting.source)
        try insert.bind(4, Int64(sighting.line))
        try insert.run()
        return connection.changes == 1
    }

    /// The file's size, or nil when there is no file; a directory or other non-file is refused.
    private static func existingSize(_ path: String) throws(StateError) -> Int64? {
        var status = stat()
        guard stat(path, &status) == 0 else {
            if errno == ENOENT { return nil }
            throw StateError(.cannotOpen, "cannot use state file \(path): \(String(cString: strerror(errno)))")
        }
        guard status.st_mode & S_IFMT == S_IFREG else {
            throw StateError(.notOurs, "state file \(path) is not a regular file")
        }
        return Int64(status.st_size)
    }

    private static func open(_ path: String, readOnly: Bool) throws(StateError) -> SQLiteConnection {
        do throws(SQLiteFailure) {
            let connection = try SQLiteConnection(path: path, readOnly: readOnly)
            // Another run may be creating the file or committing a batch: wait for it, as for a batch.
            connection.setBusyTimeout(milliseconds: busyTimeout)
            return connection
        } catch {
            throw stateError(error, path: path, doing: readOnly ? "cannot open state file" : "cannot create or "
                             + "write state file")
        }
    }

    /// True when `connection` holds our schema at our version; false when the database has no tables at all.
    /// Throws for anything else: foreign tables, a damaged file, another version.
    private static func check(_ connection: SQLiteConnection, path: String, thorough: Bool) throws(StateError)
        -> Bool {
        do {
            let tables = try connection.prepare(
                "SELECT count(*), sum(name = '\(StateSchema.versionTable)') FROM sqlite_schema WHERE type = 'table'")
            guard try tables.step() else { return false }
            if tables.int64(0) == 0 { return false }
            guard tables.int64(1) == 1 else {
                throw StateError(.notOurs, "\(path) is a SQLite database without postback-verify's "
                                 + "\(StateSchema.versionTable) table: not a state file, left as it is")
            }
            let versions = try connection.prepare("SELECT version FROM \(StateSchema.versionTable)")
            guard try versions.step(), versions.isInteger(0) else {
                throw StateError(.damaged, "state file \(path) is damaged: its schema version is missing")
            }
            let version = versions.int64(0)
            guard try !versions.step() else {
                throw StateError(.damaged, "state file \(path) is damaged: it has more than one schema version")
            }
            guard version <= StateSchema.version else {
                throw StateError(.newerSchema, "state file \(path) has schema version \(version), newer than "
                                 + "this postback-verify knows (\(StateSchema.version)): use a later release")
            }
            guard version == StateSchema.version else {
                throw StateError(.damaged, "state file \(path) is damaged: unknown schema version \(version)")
            }
            do throws(SQLiteFailure) {
                _ = try connection.prepare(StateSchema.columnsCheck).step()
            } catch {
                throw StateError(.damaged, "state file \(path) is damaged: \(error.message)")
            }
            if thorough {
                let check = try connection.prepare("PRAGMA quick_check(1)")
                guard try check.step(), check.text(0) == "ok" else {
                    let finding = check.text(0).split(whereSeparator: \.isNewline).joined(separator: " ")
                    throw StateError(.damaged, "state file \(path) is damaged (\(finding)); left as it is")
                }
            }
            return true
        } catch let error as StateError {
            throw error
        } catch let error as SQLiteFailure {
            throw stateError(error, path: path, doing: "cannot use state file", untouched: true)
        } catch {
            throw StateError(.failed, "cannot use state file \(path): \(error)")
        }
    }

    /// Creates the tables in an empty database; checks them again otherwise, under the write lock (the file may
    /// have been created or replaced since the read-only check).
    private static func createSchemaIfEmpty(_ connection: SQLiteConnection, path: String) throws {
        // A batch's keys land on random index pages and a commit writes each page it touched: of 1, 4, 8 and 16 KiB
        // pages, 4 KiB cost the least per key. Only a new database takes this; an existing one keeps its size.
        try connection.execute("PRAGMA page_size = 4096")
        try connection.execute("BEGIN IMMEDIATE")
        defer { if connection.isInTransaction { try? connection.execute("ROLLBACK") } }
        if try !check(connection, path: path, thorough: false) {
            try connection.execute(StateSchema.create)
        }
        try connection.execute("COMMIT")
    }

    /// WAL: a commit appends to the log without rewriting pages, and readers never block the writer.
    private static func useWriteAheadLog(_ connection: SQLiteConnection) throws(SQLiteFailure) {
        let mode = try connection.prepare("PRAGMA journal_mode = WAL")
        var attempts = 0
        while true {
            do throws(SQLiteFailure) {
                _ = try mode.step()
                mode.reset()
                return
            } catch where error.stateCode == .busy && attempts < 600 {
                // Changing the journal mode needs every other connection out of the file: wait like busy_timeout.
                attempts += 1
                mode.reset()
                usleep(100_000)
            }
        }
    }

    /// - Parameter untouched: the failure came from the start-up check, before anything wrote to the file.
    private static func stateError(_ error: SQLiteFailure, path: String, doing: String, untouched: Bool = false)
        -> StateError {
        let code = error.stateCode
        let left = untouched ? "; left as it is" : ""
        switch code {
        case .notOurs:
            return StateError(code, "\(path) is not a postback-verify state file (\(error.message))\(left)")
        case .damaged:
            return StateError(code, "state file \(path) is damaged (\(error.message))\(left)")
        case .busy:
            return StateError(code, "state file \(path) is locked by another process (waited up to "
                              + "\(busyTimeout / 1000) s: \(error.message))")
        default:
            return StateError(code, "\(doing) \(path): \(error.message)")
        }
    }
}
