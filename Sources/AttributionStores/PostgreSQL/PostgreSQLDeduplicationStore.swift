@_spi(Stores) import Attribution
import Foundation

/// A ``/Attribution/DeduplicationStore`` in a PostgreSQL database: the CLI's `--state postgresql://...`, and one
/// state that every run and every receiver on every machine can share.
///
/// `connectionString` is a libpq connection string (`host=db.internal dbname=postbacks user=verifier`) or URL
/// (`postgresql://verifier@db.internal/postbacks`); the password comes from it, from `PGPASSWORD`, or from the
/// password file (`~/.pgpass`, or `PGPASSFILE`), as for `psql`, and no message ever quotes it. The database's
/// `postback_verify` schema is created on first use, and refused, untouched, unless it is exactly ours
/// (``/Attribution/AttributionError``). Each call is one statement, one round trip to the server, serialised with
/// the instance's other calls; a thread of the store's own renews its lease every sixth of it, on a second
/// connection, so that no claim or slow statement holds a renewal up. The instance is one owner: its claims are
/// taken over by the next sighting once its lease has run out, or at once by a store on its own machine when its
/// process is gone. A lost connection is not death: the next call reconnects, and the owner keeps its claims within
/// its lease (a call whose connection drops under it is made again once, reconnected, when making it twice is
/// harmless); while the server stays away, calls throw ``/Attribution/AttributionError`` (code `unavailable`).
/// Closing (the last reference going) releases any claim still held. `docs/state.md` documents the schema and how
/// to run several machines on one database.
public final class PostgreSQLDeduplicationStore: DeduplicationStore, Sendable {
    /// The connection (not thread-safe), used by one call at a time.
    private let database: Locked<PostgresStateDatabase>
    /// The heartbeat's own connection: a renewal never waits for `database`'s lock (a slow claim).
    private let renewer: Locked<PostgresLeaseRenewer>
    /// The lease as this owner's claims and heartbeat show it (shared with the database).
    private let lease: LeaseRecord
    /// The thread that renews the lease every sixth of it.
    private let heartbeat: LeaseHeartbeat
    /// The server and database, for messages: host, port, database and user, never the password.
    public let target: String

    /// Connects to the database, creating the schema when it has none.
    /// - Parameters:
    ///   - connectionString: a libpq connection string or `postgresql://` URL.
    ///   - retentionDays: forget postbacks first seen more than this many days before a claim's time.
    ///   - leaseSeconds: how long this store's claims outlive a process that stopped renewing them (one that
    ///     dies on the machine of the store that sees its claim next loses them at once). The store writes or
    ///     confirms nothing more from its claims once it could not show a renewal for the lease minus a third
    ///     (``reaffirm(_:)``).
    /// - Throws: ``/Attribution/AttributionError``: `cannot-open` (no libpq, or the server refused the connection),
    ///   `not-ours` or `newer-schema` (a schema that is not exactly ours, left untouched), or `unavailable`.
    public init(connectionString: String, retentionDays: Int = 10, leaseSeconds: Double = 30) throws(AttributionError) {
        let opened = try PostgresStateDatabase(connectionString: connectionString, retentionDays: retentionDays,
                                               leaseSeconds: leaseSeconds)
        target = opened.target
        lease = opened.lease
        renewer = Locked(PostgresLeaseRenewer(connectionString: connectionString, owner: opened.owner,
                                              leaseMilliseconds: opened.leaseMilliseconds))
        database = Locked(opened)
        let beat = WeakStoreLink<PostgreSQLDeduplicationStore>()
        heartbeat = LeaseHeartbeat(interval: lease.heartbeatInterval) { beat.store?.renewLease() }
        beat.store = self
    }

    deinit {
        heartbeat.stop()
        // A renewal in flight finishes first: none writes the owner's row again after closing forgets it.
        renewer.withLock { _ in lease.close() }
        database.withLock { $0.close() }
    }

    /// True when `--state` names a PostgreSQL server rather than a SQLite file: a `postgresql://` or `postgres://`
    /// URL, or a string that starts with a libpq keyword and `=` (`host=...`, `dbname=...`, `service=...`).
    /// - Parameter state: `--state`'s value.
    /// - Returns: true for a PostgreSQL connection string or URL, false for a file path.
    public static func recognizes(_ state: String) -> Bool {
        PostgresConnectionString.recognizes(state)
    }

    public func claim(_ sightings: [PostbackSighting], at time: Date)
        throws(AttributionError) -> [DeduplicationAnswer] {
        try database.withLock { (database: inout PostgresStateDatabase) throws(AttributionError) in
            try keepLease(database)
            return try database.claim(sightings, at: time)
        }
    }

    /// Confirms `confirming` and claims `sightings` in one statement, one round trip (see
    /// ``/Attribution/DeduplicationStore``).
    /// - Parameters:
    ///   - sightings: the valid postbacks to answer, in order.
    ///   - time: when they were seen.
    ///   - confirming: earlier claims of this store whose records are now stored.
    /// - Returns: one answer per sighting, in order.
    /// - Throws: ``/Attribution/AttributionError`` with a state code (`unavailable` when the server went away);
    ///   nothing was confirmed or claimed then.
    public func claim(_ sightings: [PostbackSighting], at time: Date, confirming: [ExactString])
        throws(AttributionError) -> [DeduplicationAnswer] {
        try database.withLock { (database: inout PostgresStateDatabase) throws(AttributionError) in
            try keepLease(database)
            return try database.claim(sightings, at: time, confirming: confirming)
        }
    }

    /// Claims `sightings` and stores the received postbacks `archiving` makes from the answers, in one
    /// transaction that also confirms the claims: one commit for a receiver's group, and every receiver's rows
    /// in one table (`postback_verify.received_postbacks`, read by `postback-verify export`). If it throws, none
    /// of it happened: no claim is left, no row stored, and the next sighting is first seen. `archiving` runs
    /// once per attempt, while the claimed keys are locked: keep it quick. `synchronousCommit` (the default)
    /// makes the commit wait for the server's disk, so that a postback answered after it survives the server's
    /// crash. Each row a destination of `destinations` is owed (`OutboxDestination.owes(_:)`) gets its delivery
    /// in the relay's outbox (`PostgresOutbox`, which must have been opened once on this database) in the same
    /// transaction.
    /// - Parameters:
    ///   - sightings: the group's valid postbacks, in order.
    ///   - time: when they were seen.
    ///   - synchronousCommit: wait for the server's disk.
    ///   - destinations: the relay's destinations (none without a relay).
    ///   - archiving: the rows to store, made from the answers.
    /// - Returns: each sighting's answer.
    /// - Throws: ``/Attribution/AttributionError`` when nothing was stored.
    @_spi(Servers) public func claim(_ sightings: [PostbackSighting], at time: Date, synchronousCommit: Bool = true,
                      owing destinations: [OutboxDestination] = [],
                      archiving: ([DeduplicationAnswer]) -> [ArchivedPostback])
        throws(AttributionError) -> [DeduplicationAnswer] {
        try database.withLock { (database: inout PostgresStateDatabase) throws(AttributionError) in
            try database.claim(sightings, at: time, synchronousCommit: synchronousCommit, owing: destinations,
                               archiving: archiving)
        }
    }

    /// Confirms this owner's claims on `keys`; throws, confirming nothing, when its lease could not be shown
    /// (see ``reaffirm(_:)``).
    /// - Parameter keys: claims of this owner whose records are now stored or written.
    /// - Throws: ``/Attribution/AttributionError`` when the store fails or the lease could not be shown.
    public func confirm(_ keys: [ExactString]) throws(AttributionError) {
        try database.withLock { (database: inout PostgresStateDatabase) throws(AttributionError) in
            try keepLease(database)
            try database.confirm(keys)
        }
    }

    /// See ``/Attribution/DeduplicationStore/reaffirm(_:)``: a clock read unless the lease is stale or lapsed.
    /// - Parameter keys: the claims whose records are about to be written.
    /// - Returns: those of `keys` another owner took over, each with the record it is a duplicate of.
    /// - Throws: ``/Attribution/AttributionError`` (`unavailable`) when the lease could not be renewed.
    public func reaffirm(_ keys: [ExactString]) throws(AttributionError) -> [ExactString: DuplicateReference] {
        try database.withLock { (database: inout PostgresStateDatabase) throws(AttributionError) in
            try keepLease(database)
            return database.reaffirm(keys)
        }
    }

    /// How many renewals of this store's lease failed since it opened (each streak is also told on standard
    /// error): a receiver's metric.
    public var renewalFailures: Int { lease.failureCount }

    /// Holds the store's lock for `seconds`, as a slow claim would (tests: the heartbeat must not wait for it).
    func holdingLock(for seconds: Double) {
        database.withLock { _ in Thread.sleep(forTimeInterval: seconds) }
    }

    public func release(_ keys: [ExactString]) throws(AttributionError) {
        try database.withLock { (database: inout PostgresStateDatabase) throws(AttributionError) in
            try database.release(keys)
        }
    }

    /// How many postbacks the database remembers, claimed or confirmed (expired ones not yet pruned included).
    @_spi(CommandLine) public func count() throws(AttributionError) -> Int {
        try database.withLock { (database: inout PostgresStateDatabase) throws(AttributionError) -> Int in
            try database.count()
        }
    }

    /// One `SELECT 1` round trip (reconnecting first when the connection was lost): throws `unavailable` while
    /// the server is down. See ``/Attribution/DeduplicationStore/probe()``.
    /// - Throws: ``/Attribution/AttributionError``, `unavailable` while the server is down.
    public func probe() throws(AttributionError) {
        try database.withLock { (database: inout PostgresStateDatabase) throws(AttributionError) in
            try database.probe()
        }
    }

    /// Before the caller's claims are written or confirmed: renews at once when the last renewal shown is older
    /// than the lease minus the margin (throwing when it cannot), and after a renewal that found the lease lapsed,
    /// finds the claims other owners took over meanwhile. Called with the store's lock held.
    private func keepLease(_ database: PostgresStateDatabase) throws(AttributionError) {
        try lease.keep(renewing: { renewLease(forced: true) }, checkingClaims: database.checkClaimsAfterLapse)
    }

    /// Renews the lease on the heartbeat's connection when claims are held, or, `forced`, in any case until the
    /// store closes (the heartbeat thread calls this; a caller whose lease is stale forces it before it claims or
    /// confirms); the failure's message, or nil.
    @discardableResult
    fileprivate func renewLease(forced: Bool = false) -> String? {
        guard forced ? !lease.isClosed : lease.holdsClaims else { return nil }
        return renewer.withLock { renewer -> String? in
            lease.renew(forced: forced, by: { () throws(AttributionError) in try renewer.renew() },
                        describing: \.reason)
        }
    }
}
