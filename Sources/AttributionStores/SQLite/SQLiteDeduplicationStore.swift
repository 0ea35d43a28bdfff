import Attribution
import Foundation

/// A ``/Attribution/DeduplicationStore`` in a SQLite file: the CLI's `--state`, shared by every run, thread and
/// process on one machine that opens the same file.
///
/// The file is refused, untouched, unless it is exactly a postback-verify state (``/Attribution/AttributionError``);
/// a missing one is created, and one of schema version 1 (the previous release) migrated. Postbacks first seen more
/// than the retention ago are forgotten (Apple retries for up to 9 days, so the default keeps 10). Memory stays
/// bounded whatever the file holds: lookups go to the file, through SQLite's page cache. Each call is one short
/// transaction, serialised with the instance's other calls; a thread of the store's own renews its owner's
/// lease while it holds claims. Closing (the last reference going) releases any claim still held.
/// `docs/state.md` documents the schema.
public final class SQLiteDeduplicationStore: DeduplicationStore {
    private let database: Locked<StateDatabase>
    private let heartbeat: LeaseHeartbeat
    /// The file's path, as given.
    public let path: String

    /// Opens (or creates) the state at `path`.
    /// - Parameters:
    ///   - path: the SQLite file, created (with its schema) when missing.
    ///   - retentionDays: forget postbacks first seen more than this many days before a claim's time.
    ///   - leaseSeconds: how long this store's claims outlive its process on another machine (or container) that
    ///     stopped renewing them; on this machine a dead process's claims are taken over at once.
    /// - Throws: ``/Attribution/AttributionError``: `not-ours` (a file that is not a postback-verify state, left as
    ///   it is), `newer-schema`, `damaged`, `cannot-open` or `busy`.
    public init(path: String, retentionDays: Int = 10, leaseSeconds: Double = 30) throws(AttributionError) {
        self.path = path
        let database = Locked(try StateDatabase(path: path, retentionDays: retentionDays, leaseSeconds: leaseSeconds))
        self.database = database
        let beat = WeakStoreLink<SQLiteDeduplicationStore>()
        heartbeat = LeaseHeartbeat(interval: max(0.05, leaseSeconds / 6)) { beat.store?.renewLease() }
        beat.store = self
    }

    deinit {
        heartbeat.stop()
        database.withLock { $0.close() }
    }

    public func claim(_ sightings: [PostbackSighting], at time: Date)
        throws(AttributionError) -> [DeduplicationAnswer] {
        try database.withLock { (database: inout StateDatabase) throws(AttributionError) in
            try database.claim(sightings, at: time)
        }
    }

    public func claim(_ sightings: [PostbackSighting], at time: Date, confirming: [ExactString])
        throws(AttributionError) -> [DeduplicationAnswer] {
        try database.withLock { (database: inout StateDatabase) throws(AttributionError) in
            try database.claim(sightings, at: time, confirming: confirming)
        }
    }

    public func confirm(_ keys: [ExactString]) throws(AttributionError) {
        try database.withLock { (database: inout StateDatabase) throws(AttributionError) in try database.confirm(keys) }
    }

    public func release(_ keys: [ExactString]) throws(AttributionError) {
        try database.withLock { (database: inout StateDatabase) throws(AttributionError) in try database.release(keys) }
    }

    /// How many postbacks the file remembers, claimed or confirmed (expired ones not yet pruned included).
    package func count() throws(AttributionError) -> Int {
        try database.withLock { (database: inout StateDatabase) throws(AttributionError) -> Int in
            try database.count()
        }
    }

    /// Reads the file's schema (one page, no write lock, so it never waits behind another process's writer):
    /// throws when the file is gone, unreadable or damaged. See ``/Attribution/DeduplicationStore/probe()``.
    /// - Throws: ``/Attribution/AttributionError`` with a state code (`cannot-open`, `damaged`, ...) when the file
    ///   cannot be read.
    public func probe() throws(AttributionError) {
        try database.withLock { (database: inout StateDatabase) throws(AttributionError) in try database.probe() }
    }

    /// Renews the lease when claims are outstanding (the heartbeat thread calls this).
    fileprivate func renewLease() {
        database.withLock { try? $0.heartbeat() }
    }
}
