@_spi(Stores) import Attribution
import Foundation

/// The outbox of a SQLite archive: its tables live in the archive file, so that
/// `SQLiteReceivedArchive.append(_:owing:)` writes a postback's row and its deliveries in one transaction.
///
/// Deliveries are read and recorded through a connection of their own with `synchronous=NORMAL`: an outcome that a
/// power loss takes back is only a delivery made once more (the destination's `Idempotency-Key` tells), and the
/// storing path keeps its one `fsync` per group. Every change is one short `BEGIN IMMEDIATE` transaction, so the
/// storing path waits for one at most. Time is this machine's clock.
@_spi(CommandLine) @_spi(Servers) public final class SQLiteOutbox: Outbox, Sendable {
    /// Version of the outbox tables, in `relay_outbox_schema`, apart from the archive's own version: an archive
    /// without a relay has none of them.
    static let schemaVersion: Int64 = 1
    /// Made when the archive is opened (`SQLiteReceivedArchive`); `status` is `owed` or `dead` (a delivered row is
    /// deleted); `due` is the earliest next attempt; `holder` and `lease_until` the lease of the receiver trying it.
    static let schema = """
        CREATE TABLE IF NOT EXISTS relay_outbox_schema (version INTEGER NOT NULL);
        CREATE TABLE IF NOT EXISTS relay_deliveries (
            id INTEGER PRIMARY KEY,
            postback INTEGER NOT NULL,
            destination TEXT NOT NULL,
            status TEXT NOT NULL,
            owed_since INTEGER NOT NULL,
            due INTEGER NOT NULL,
            attempts INTEGER NOT NULL DEFAULT 0,
            holder INTEGER,
            lease_until INTEGER,
            answer TEXT
        );
        CREATE INDEX IF NOT EXISTS relay_deliveries_due ON relay_deliveries (destination, due) WHERE status = 'owed';
        INSERT INTO relay_outbox_schema (version) SELECT 1 WHERE NOT EXISTS (SELECT 1 FROM relay_outbox_schema);
        """
    static let insert = """
        INSERT INTO relay_deliveries (postback, destination, status, owed_since, due) VALUES (?, ?, 'owed', ?, ?)
        """

    /// The archive file's path.
    public let path: String
    /// This machine's clock, in milliseconds since 1970.
    public static let systemClock: @Sendable () -> Int64 = { Int64((Date().timeIntervalSince1970 * 1000).rounded()) }
    private let connection: Locked<SQLiteConnection>
    /// This process's turn to write the file, shared with the archive's group commits (``SQLiteWriteGate``).
    private let gate: SQLiteWriteGate
    private let clock: @Sendable () -> Int64
    /// When each destination's expired rows were last marked dead (``OutboxExpiry``).
    private let expiry = Locked(OutboxExpiry())

    /// Opens the outbox of the archive at `path`.
    /// - Parameters:
    ///   - path: the archive file (`SQLiteReceivedArchive`), which must exist.
    ///   - clock: milliseconds since 1970 (injected by tests).
    /// - Throws: ``/Attribution/AttributionError`` when the file cannot be opened or has no outbox (`not-ours`: an
    ///   archive of a release before the relay, or not an archive).
    public init(path: String, clock: @escaping @Sendable () -> Int64 = SQLiteOutbox.systemClock)
        throws(AttributionError) {
        self.path = path
        self.clock = clock
        do {
            guard FileManager.default.fileExists(atPath: path) else {
                throw AttributionError(.cannotOpen, "\(path): no such archive (a receiver makes it when it starts)")
            }
            let opened = try SQLiteConnection(path: path, readOnly: false)
            opened.setBusyTimeout(milliseconds: 60_000)
            try opened.execute("PRAGMA synchronous=NORMAL")
            let check = try opened.prepare(
                "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'relay_outbox_schema'")
            guard try check.step(), check.int64(0) == 1 else {
                throw AttributionError(.notOurs, "\(path) has no outbox (relay_outbox_schema): not the archive of a "
                                       + "receiver of this release")
            }
            let version = try opened.prepare("SELECT version FROM relay_outbox_schema")
            guard try version.step(), version.int64(0) == Self.schemaVersion else {
                throw AttributionError(.newerSchema, "\(path): its outbox has another version than this release's "
                                       + "(\(Self.schemaVersion)): use a later release")
            }
            connection = Locked(opened)
            gate = SQLiteWriteGate.gate(for: path)
        } catch {
            throw SQLiteReceivedArchive.error(error, path: path, doing: "open the outbox of")
        }
    }

    public func claim(destination: String, limit: Int, holder: Int64, leaseMilliseconds: Int64,
                      horizonMilliseconds: Int64) throws(AttributionError) -> [OwedDelivery] {
        let now = clock()
        let expiring = expiry.withLock { $0.isDue(destination, horizon: horizonMilliseconds, now: now) }
        return try transaction("take deliveries from") { (connection: SQLiteConnection) throws(SQLiteFailure) in
            if expiring {
                let expire = try connection.prepare("""
                    UPDATE relay_deliveries SET status = 'dead', holder = NULL, lease_until = NULL,
                        answer = coalesce(answer || '; ', '') || ?
                    WHERE status = 'owed' AND destination = ? AND owed_since < ?
                        AND (lease_until IS NULL OR lease_until < ?)
                    """)
                try expire.bind(1, text: OutboxAnswers.horizonPassed)
                try expire.bind(2, text: destination)
                try expire.bind(3, now - horizonMilliseconds)
                try expire.bind(4, now)
                try expire.run()
            }
            let select = try connection.prepare("""
                SELECT d.id, d.attempts, d.owed_since, d.holder IS NOT NULL, r.request, r.route, r.key, r.body,
                       r.record
                FROM relay_deliveries d JOIN received_postbacks r ON r.id = d.postback
                WHERE d.status = 'owed' AND d.destination = ? AND d.due <= ?
                    AND (d.lease_until IS NULL OR d.lease_until < ?) AND d.owed_since >= ?
                ORDER BY d.due LIMIT ?
                """)
            try select.bind(1, text: destination)
            try select.bind(2, now)
            try select.bind(3, now)
            try select.bind(4, now - horizonMilliseconds)
            try select.bind(5, Int64(limit))
            var taken: [OwedDelivery] = []
            while try select.step() {
                taken.append(OwedDelivery(
                    id: select.int64(0), destination: destination, attempts: Int(select.int64(1)) + 1,
                    owedSince: select.int64(2), wasReclaimed: select.int64(3) != 0, request: select.text(4),
                    route: select.text(5), key: select.isNull(6) ? nil : select.blob(6), body: select.blob(7) ?? [],
                    record: Array(select.text(8).utf8)))
            }
            select.reset()
            let lease = try connection.prepare(
                "UPDATE relay_deliveries SET holder = ?, lease_until = ?, attempts = attempts + 1 WHERE id = ?")
            for delivery in taken {
                try lease.bind(1, holder)
                try lease.bind(2, now + leaseMilliseconds)
                try lease.bind(3, delivery.id)
                try lease.run()
            }
            return taken
        }
    }

    public func record(_ outcomes: [DeliveryOutcome], holder: Int64, horizonMilliseconds: Int64)
        throws(AttributionError) {
        guard !outcomes.isEmpty else { return }
        let now = clock()
        try transaction("record deliveries in") { (connection: SQLiteConnection) throws(SQLiteFailure) in
            let delete = try connection.prepare("DELETE FROM relay_deliveries WHERE id = ?")
            // A retry due past the horizon would be an attempt after it: dead now, with this answer.
            let retry = try connection.prepare("""
                UPDATE relay_deliveries SET holder = NULL, lease_until = NULL, due = ?2,
                    answer = ?1 || CASE WHEN ?2 > owed_since + ?3 THEN '; ' || ?6 ELSE '' END,
                    status = CASE WHEN ?2 > owed_since + ?3 THEN 'dead' ELSE 'owed' END
                WHERE id = ?4 AND holder = ?5 AND status = 'owed'
                """)
            let dead = try connection.prepare("""
                UPDATE relay_deliveries SET holder = NULL, lease_until = NULL, answer = ?, status = 'dead'
                WHERE id = ? AND holder = ? AND status = 'owed'
                """)
            for outcome in outcomes {
                switch outcome.fate {
                case .delivered:
                    try delete.bind(1, outcome.id)
                    try delete.run()
                case .retry(let delay):
                    try retry.bind(1, text: outcome.answer)
                    try retry.bind(2, now + delay)
                    try retry.bind(3, horizonMilliseconds)
                    try retry.bind(4, outcome.id)
                    try retry.bind(5, holder)
                    try retry.bind(6, text: OutboxAnswers.horizonPassed)
                    try retry.run()
                case .dead:
                    try dead.bind(1, text: outcome.answer)
                    try dead.bind(2, outcome.id)
                    try dead.bind(3, holder)
                    try dead.run()
                }
            }
        }
    }

    public func release(_ ids: [Int64], holder: Int64) throws(AttributionError) {
        guard !ids.isEmpty else { return }
        try transaction("hand back deliveries to") { (connection: SQLiteConnection) throws(SQLiteFailure) in
            let release = try connection.prepare("""
                UPDATE relay_deliveries SET holder = NULL, lease_until = NULL, attempts = max(0, attempts - 1)
                WHERE id = ? AND holder = ? AND status = 'owed'
                """)
            for id in ids {
                try release.bind(1, id)
                try release.bind(2, holder)
                try release.run()
            }
        }
    }

    public func backlog() throws(AttributionError) -> [String: OutboxBacklog] {
        try read("read the outbox of") { (connection: SQLiteConnection) throws(SQLiteFailure) in
            let select = try connection.prepare("""
                SELECT destination, count(*), min(owed_since) FROM relay_deliveries WHERE status = 'owed'
                GROUP BY destination
                """)
            var backlog: [String: OutboxBacklog] = [:]
            while try select.step() {
                backlog[select.text(0)] = OutboxBacklog(owed: Int(select.int64(1)), oldestOwedSince: select.int64(2))
            }
            return backlog
        }
    }

    public func entries(deadOnly: Bool) throws(AttributionError) -> [OutboxEntry] {
        try read("read the outbox of") { (connection: SQLiteConnection) throws(SQLiteFailure) in
            let select = try connection.prepare("""
                SELECT d.id, d.destination, d.status, d.attempts, d.owed_since, d.answer, r.request
                FROM relay_deliveries d JOIN received_postbacks r ON r.id = d.postback
                \(deadOnly ? "WHERE d.status = 'dead'" : "") ORDER BY d.id
                """)
            var entries: [OutboxEntry] = []
            while try select.step() {
                entries.append(OutboxEntry(
                    id: select.int64(0), destination: select.text(1), status: select.text(2),
                    attempts: Int(select.int64(3)), owedSince: select.int64(4),
                    answer: select.isNull(5) ? nil : select.text(5), request: select.text(6)))
            }
            return entries
        }
    }

    public func requeue(_ id: Int64?) throws(AttributionError) -> Int {
        let now = clock()
        return try transaction("re-queue deliveries in") { (connection: SQLiteConnection) throws(SQLiteFailure) in
            let update = try connection.prepare("""
                UPDATE relay_deliveries SET status = 'owed', owed_since = ?, due = ?, attempts = 0, holder = NULL,
                    lease_until = NULL
                WHERE status = 'dead' AND (? IS NULL OR id = ?)
                """)
            try update.bind(1, now)
            try update.bind(2, now)
            try update.bind(3, id)
            try update.bind(4, id)
            try update.run()
            return connection.changes
        }
    }

    /// Runs `body` in one `BEGIN IMMEDIATE` transaction, rolled back if it throws.
    private func transaction<Value>(_ doing: String, _ body: (SQLiteConnection) throws(SQLiteFailure) -> Value)
        throws(AttributionError) -> Value {
        try connection.withLock { (connection: inout SQLiteConnection) throws(AttributionError) -> Value in
            try gate.withTurn { () throws(AttributionError) -> Value in
                do throws(SQLiteFailure) {
                    try connection.execute("BEGIN IMMEDIATE")
                    do throws(SQLiteFailure) {
                        let value = try body(connection)
                        try connection.execute("COMMIT")
                        return value
                    } catch {
                        if connection.isInTransaction { try? connection.execute("ROLLBACK") }
                        throw error
                    }
                } catch {
                    throw SQLiteReceivedArchive.error(error, path: path, doing: doing)
                }
            }
        }
    }

    private func read<Value>(_ doing: String, _ body: (SQLiteConnection) throws(SQLiteFailure) -> Value)
        throws(AttributionError) -> Value {
        try connection.withLock { (connection: inout SQLiteConnection) throws(AttributionError) -> Value in
            do throws(SQLiteFailure) {
                return try body(connection)
            } catch {
                throw SQLiteReceivedArchive.error(error, path: path, doing: doing)
            }
        }
    }
}
