@_spi(Stores) import Attribution
import Foundation

/// A PostgreSQL state that keeps the received postbacks too: its `ArchivingDeduplicationStore`
/// capability, with how its transactions commit and which relay destinations each row is owed to. A
/// ``/Attribution/ClaimLedger`` over it claims a group, stores its rows (`postback_verify.received_postbacks`, and
/// the relay's outbox rows) and confirms the claims in one transaction
/// (``PostgreSQLDeduplicationStore/claim(_:at:synchronousCommit:owing:archiving:)``); every other call is the
/// store's own.
@_spi(Servers) public struct PostgreSQLArchivingStore: ArchivingDeduplicationStore {
    /// The state, which holds the rows too.
    public let store: PostgreSQLDeduplicationStore
    /// Whether each transaction's commit waits for the server's disk.
    public let synchronousCommit: Bool
    /// The relay's destinations (none without a relay): each stored row a destination is owed gets its delivery
    /// in the same transaction.
    public let destinations: [OutboxDestination]

    /// The archiving capability of `store`.
    /// - Parameters:
    ///   - store: the PostgreSQL state.
    ///   - synchronousCommit: make each commit wait for the server's disk, so that a postback answered after it
    ///     survives the server's crash.
    ///   - destinations: the relay's destinations (`PostgresOutbox` must have been opened once on the database
    ///     when there are any).
    public init(_ store: PostgreSQLDeduplicationStore, synchronousCommit: Bool = true,
                owing destinations: [OutboxDestination] = []) {
        self.store = store
        self.synchronousCommit = synchronousCommit
        self.destinations = destinations
    }

    /// Claims `sightings`, stores the rows `rows` makes from the answers and confirms the claims, in one
    /// transaction (see `ArchivingDeduplicationStore`).
    /// - Parameters:
    ///   - sightings: the group's valid postbacks, in order.
    ///   - time: when they were seen.
    ///   - rows: the rows to store, made from the answers.
    /// - Returns: each sighting's answer.
    /// - Throws: ``/Attribution/AttributionError`` when nothing was stored.
    public func claim(_ sightings: [PostbackSighting], at time: Date,
                      archiving rows: ([DeduplicationAnswer]) -> [ArchivedPostback])
        throws(AttributionError) -> [DeduplicationAnswer] {
        try store.claim(sightings, at: time, synchronousCommit: synchronousCommit, owing: destinations,
                        archiving: rows)
    }

    /// The store's ``PostgreSQLDeduplicationStore/claim(_:at:)``.
    /// - Parameters:
    ///   - sightings: the valid postbacks to answer, in order.
    ///   - time: when they were seen.
    /// - Returns: one answer per sighting, in order.
    /// - Throws: ``/Attribution/AttributionError`` with a state code; nothing was claimed then.
    public func claim(_ sightings: [PostbackSighting], at time: Date)
        throws(AttributionError) -> [DeduplicationAnswer] {
        try store.claim(sightings, at: time)
    }

    /// The store's ``PostgreSQLDeduplicationStore/claim(_:at:confirming:)``.
    /// - Parameters:
    ///   - sightings: the valid postbacks to answer, in order.
    ///   - time: when they were seen.
    ///   - confirming: earlier claims of this store whose records are now stored.
    /// - Returns: one answer per sighting, in order.
    /// - Throws: ``/Attribution/AttributionError`` with a state code; nothing was confirmed or claimed then.
    public func claim(_ sightings: [PostbackSighting], at time: Date, confirming: [ExactString])
        throws(AttributionError) -> [DeduplicationAnswer] {
        try store.claim(sightings, at: time, confirming: confirming)
    }

    /// The store's ``PostgreSQLDeduplicationStore/confirm(_:)``.
    /// - Parameter keys: claims of this owner whose records are now stored.
    /// - Throws: ``/Attribution/AttributionError`` when the store fails or the lease could not be shown.
    public func confirm(_ keys: [ExactString]) throws(AttributionError) {
        try store.confirm(keys)
    }

    /// The store's ``PostgreSQLDeduplicationStore/release(_:)``.
    /// - Parameter keys: claims of this owner whose records were not stored.
    /// - Throws: ``/Attribution/AttributionError`` when the store fails.
    public func release(_ keys: [ExactString]) throws(AttributionError) {
        try store.release(keys)
    }

    /// The store's ``PostgreSQLDeduplicationStore/reaffirm(_:)``.
    /// - Parameter keys: the claims whose records are about to be written.
    /// - Returns: those of `keys` another owner took over, each with the record it is a duplicate of.
    /// - Throws: ``/Attribution/AttributionError`` (`unavailable`) when the lease could not be renewed.
    public func reaffirm(_ keys: [ExactString]) throws(AttributionError) -> [ExactString: DuplicateReference] {
        try store.reaffirm(keys)
    }

    /// The store's ``PostgreSQLDeduplicationStore/probe()``.
    /// - Throws: ``/Attribution/AttributionError`` when the server does not answer.
    public func probe() throws(AttributionError) {
        try store.probe()
    }

    /// The store's ``PostgreSQLDeduplicationStore/renewalFailures``.
    public var renewalFailures: Int { store.renewalFailures }
}
