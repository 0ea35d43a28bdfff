@_spi(Stores) import Attribution
import Foundation

/// A ``/Attribution/DeduplicationStore`` in a SQLite file: the CLI's `--state`, shared by every run, thread and
/// process on one machine that opens the same file.
///
/// The file is refused, untouched, unless it is exactly a postback-verify state (``/Attribution/AttributionError``);
/// a missing one is created, and one of schema version 1 (the previous release) migrated. Postbacks first seen more
/// than the retention ago are forgotten (Apple retries for up to 9 days, so the default keeps 10). Memory stays
/// bounded whatever the file holds: lookups go to the file, through SQLite's page cache. Each call is one short
/// transaction, serialised with the instance's other calls; a thread of the store's own renews its owner's
/// lease while it holds claims, on a second connection to the file, so that no claim holds a renewal up.
/// Closing (the last reference going) releases any claim still held.
/// `docs/state.md` documents the schema.
public final class SQLiteDeduplicationStore: DeduplicationStore {
    private let database: Locked<StateDatabase>
    /// The heartbeat's own connection: a renewal never waits for `database`'s lock (a slow claim).
    private let renewer: Locked<SQLiteLeaseRenewer>
    /// The lease as this owner's claims and heartbeat show it (shared with the database).
    private let lease: LeaseRecord
    /// The thread that renews the lease every sixth of it.
    private let heartbeat: LeaseHeartbeat
    /// The file's path, as given.
    public let path: String

    /// Opens (or creates) the state at `path`.
    /// - Parameters:
    ///   - path: the SQLite file, created (with its schema) when missing.
    ///   - retentionDays: forget postbacks first seen more than this many days before a claim's time.
    ///   - leaseSeconds: how long this store's claims outlive its process on another machine (or container) that
    ///     stopped renewing them; on this machine a dead process's claims are taken over at once. The store
    ///     renews it every sixth of it, on a connection of its own, and writes or confirms nothing more from its
    ///     claims once it could not show a renewal for the lease minus a third (``reaffirm(_:)``).
    /// - Throws: ``/Attribution/AttributionError``: `not-ours` (a file that is not a postback-verify state, left as
    ///   it is), `newer-schema`, `damaged`, `cannot-open` or `busy`.
    public init(path: String, retentionDays: Int = 10, leaseSeconds: Double = 30) throws(AttributionError) {
        self.path = path
        let opened = try StateDatabase(path: path, retentionDays: retentionDays, leaseSeconds: leaseSeconds)
        do throws(SQLiteFailure) {
            renewer = Locked(try SQLiteLeaseRenewer(path: path, owner: opened.plannedOwner,
                                                    leaseMilliseconds: opened.leaseMilliseconds))
        } catch {
            throw AttributionError(error.stateCode, "cannot open state file \(path) for lease renewals: "
                                   + error.message)
        }
        lease = opened.lease
        database = Locked(opened)
        let beat = WeakStoreLink<SQLiteDeduplicationStore>()
        heartbeat = LeaseHeartbeat(interval: lease.heartbeatInterval) { beat.store?.renewLease() }
        beat.store = self
    }

    deinit {
        heartbeat.stop()
        // A renewal in flight finishes first: none registers the owner again after closing forgets it.
        renewer.withLock { _ in lease.close() }
        database.withLock { $0.close() }
    }

    public func claim(_ sightings: [PostbackSighting], at time: Date)
        throws(AttributionError) -> [DeduplicationAnswer] {
        try database.withLock { (database: inout StateDatabase) throws(AttributionError) in
            try keepLease(database)
            return try database.claim(sightings, at: time)
        }
    }

    public func claim(_ sightings: [PostbackSighting], at time: Date, confirming: [ExactString])
        throws(AttributionError) -> [DeduplicationAnswer] {
        try database.withLock { (database: inout StateDatabase) throws(AttributionError) in
            try keepLease(database)
            return try database.claim(sightings, at: time, confirming: confirming)
        }
    }

    /// Confirms this owner's claims on `keys`; throws, confirming nothing, when its lease could not be shown
    /// (see ``reaffirm(_:)``).
    /// - Parameter keys: claims of this owner whose records are now stored or written.
    /// - Throws: ``/Attribution/AttributionError`` when the store fails or the lease could not be shown.
    public func confirm(_ keys: [ExactString]) throws(AttributionError) {
        try database.withLock { (database: inout StateDatabase) throws(AttributionError) in
            try keepLease(database)
            try database.confirm(keys)
        }
    }

    public func release(_ keys: [ExactString]) throws(AttributionError) {
        try database.withLock { (database: inout StateDatabase) throws(AttributionError) in try database.release(keys) }
    }

    /// See ``/Attribution/DeduplicationStore/reaffirm(_:)``: a clock read unless the lease is stale or lapsed.
    /// - Parameter keys: the claims whose records are about to be written.
    /// - Returns: those of `keys` another owner took over, each with the record it is a duplicate of.
    /// - Throws: ``/Attribution/AttributionError`` (`unavailable`) when the lease could not be renewed.
    public func reaffirm(_ keys: [ExactString]) throws(AttributionError) -> [ExactString: DuplicateReference] {
        try database.withLock { (database: inout StateDatabase) throws(AttributionError) in
            try keepLease(database)
            return database.reaffirm(keys)
        }
    }

    /// How many renewals of this store's lease failed since it opened (each streak is also told on standard
    /// error): a receiver's metric.
    public var renewalFailures: Int { lease.failureCount }

    /// How many postbacks the file remembers, claimed or confirmed (expired ones not yet pruned included).
    @_spi(CommandLine) public func count() throws(AttributionError) -> Int {
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

    /// Holds the store's lock for `seconds`, as a slow claim would (tests: the heartbeat must not wait for it).
    func holdingLock(for seconds: Double) {
        database.withLock { _ in Thread.sleep(forTimeInterval: seconds) }
    }

    /// Before the caller's claims are written or confirmed: renews at once when the last renewal shown is older
    /// than the lease minus the margin (throwing when it cannot), and after a renewal that found the lease lapsed,
    /// finds the claims other owners took over meanwhile. Called with the store's lock held.
    private func keepLease(_ database: StateDatabase) throws(AttributionError) {
        try lease.keep(renewing: { renewLease(forced: true) }, checkingClaims: database.checkClaimsAfterLapse)
    }

    /// Renews the lease on the heartbeat's connection when claims are held, or, `forced`, in any case until the
    /// store closes (the heartbeat thread calls this; a caller whose lease is stale forces it before it claims or
    /// confirms); the failure's message, or nil.
    @discardableResult
    fileprivate func renewLease(forced: Bool = false) -> String? {
        guard forced ? !lease.isClosed : lease.holdsClaims else { return nil }
        return renewer.withLock { renewer -> String? in
            lease.renew(forced: forced, by: { () throws(SQLiteFailure) in try renewer.renew() },
                        describing: \.message)
        }
    }
}
