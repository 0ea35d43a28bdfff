import Foundation

/// Deduplication (rule D1) that many callers share, by claim and confirm: which valid postbacks were seen
/// before, where first, and with what content. One protocol serves the command line, servers, and every store
/// (``MemoryDeduplicationStore``, `SQLiteDeduplicationStore`, a database server's, or your own).
///
/// A caller **claims** a batch of sightings in one short transaction (``claim(_:at:)``), writes and flushes (or
/// stores) the records of those that came back ``DeduplicationAnswer/firstSeen`` *without holding anything of the
/// store*, then **confirms** them (``confirm(_:)``), or **releases** them when the writing failed
/// (``release(_:)``). Each store instance is one *owner* of the claims it answered `firstSeen`:
///
/// - A sighting whose key is confirmed (within the retention) is a duplicate of that first record.
/// - A sighting whose key is claimed by a live owner (this one included) is a duplicate of the record that owner
///   is writing (``DuplicateReference/isPending``): concurrent runs and requests count each postback once.
/// - A claim whose owner died (its lease ran out without a heartbeat, or it ran on this machine and its process
///   is gone) is taken over by the next sighting, which is `firstSeen`. Stores renew their owner's lease while
///   claims are outstanding, on a thread and a connection of their own, so a caller stalled on a slow reader (or
///   a slow claim) keeps its claims; a lost connection alone is not death. An owner that could not show a
///   renewal for the lease minus a margin writes and confirms nothing more from its claims until it has renewed
///   (``reaffirm(_:)``, and ``confirm(_:)`` throws meanwhile).
///
/// So a crash can at worst report a postback valid twice (its records were written, the confirm was not), never
/// lose one, and a later sighting is never a duplicate of a record its owner gave up on. Keys compare by their
/// bytes (``ExactString``). A repeat within one `claim` call is a duplicate of its first occurrence there.
///
/// Count through a ``ClaimLedger`` (``PostbackPipeline``'s `count(_:through:at:store:)`, the command line and the
/// receiver do) rather than calling these methods yourself: it confirms only what was stored, releases what was
/// not, and refuses further claims while a release fails, so no retry is answered a duplicate of a lost record.
///
/// Every method blocks for one short database transaction at most; from async code, use the `async` overloads,
/// which run the blocking work off Swift's cooperative thread pool. Methods throw ``AttributionError`` (or your store's
/// own error) when the store cannot answer; a `claim` that throws holds nothing.
public protocol DeduplicationStore: Sendable {
    /// Answers each of `sightings`, in order, and claims for this store's owner the key of every sighting it
    /// answers ``DeduplicationAnswer/firstSeen``, seen at `time` (a run's start, a request's arrival: what
    /// ``DuplicateReference/firstSeen`` will report, and what the retention counts from).
    ///
    /// - Parameters:
    ///   - sightings: the valid postbacks to answer, in order.
    ///   - time: when they were seen.
    /// - Returns: one answer per sighting, in order: ``DeduplicationAnswer/firstSeen``, or a duplicate of a reference.
    /// - Throws: ``AttributionError`` (a state code) or the store's own error when it cannot answer; a claim that
    ///   throws holds nothing.
    func claim(_ sightings: [PostbackSighting], at time: Date) throws -> [DeduplicationAnswer]

    /// Makes this owner's claims on `keys` permanent: call once their records were written and flushed (or
    /// stored). Keys this owner does not hold a claim on (duplicates, claims taken over) are left alone.
    ///
    /// - Parameter keys: keys this owner claimed whose records were written and flushed (or stored).
    /// - Throws: ``AttributionError`` (a state code) or the store's own error when it cannot record them.
    func confirm(_ keys: [ExactString]) throws

    /// Drops this owner's claims on `keys` (their records were not written): the next sighting is first seen.
    ///
    /// - Parameter keys: keys this owner claimed whose records were not written.
    /// - Throws: ``AttributionError`` (a state code) or the store's own error when it cannot drop them.
    func release(_ keys: [ExactString]) throws

    /// ``confirm(_:)`` of `confirming`, then ``claim(_:at:)`` of `sightings`, in one transaction where the store
    /// can (one round trip per batch for a caller that confirms one batch as it claims the next, as the command
    /// line does). The default implementation makes the two calls.
    ///
    /// - Parameters:
    ///   - sightings: the valid postbacks to answer, in order.
    ///   - time: when they were seen.
    ///   - confirming: earlier claims of this owner whose records are now stored.
    /// - Returns: one answer per sighting, in order.
    /// - Throws: what ``confirm(_:)`` or ``claim(_:at:)`` throws.
    func claim(_ sightings: [PostbackSighting], at time: Date, confirming: [ExactString]) throws
        -> [DeduplicationAnswer]

    /// Checks that the store answers now (a server reachable, a file readable), changing nothing: a server's
    /// readiness check (`GET /readyz`) calls it, so that a load balancer stops sending postbacks to a process
    /// whose store cannot keep them. Throws what a claim would throw. The default does nothing (a store in
    /// memory always answers).
    ///
    /// - Throws: what a claim would throw, when the store cannot answer now.
    func probe() throws

    /// Shows that this owner still holds its claims on `keys` before their records are written (handed to an
    /// output, stored): a monotonic clock read while its lease was renewed less than the lease minus a margin ago;
    /// otherwise it renews first, and throws when it cannot (then write nothing from these claims). Returns the
    /// keys among them that another owner took over while this owner's lease had lapsed, each with the record
    /// it is now a duplicate of: write that item as that duplicate (its claim is no longer this owner's to
    /// confirm). The default returns none: a store whose claims cannot lapse (one in memory).
    /// - Parameter keys: the claims whose records are about to be written.
    /// - Returns: those of `keys` another owner took over, each with the record it is a duplicate of.
    /// - Throws: ``AttributionError`` (`unavailable`) when the lease could not be renewed: write nothing then.
    func reaffirm(_ keys: [ExactString]) throws -> [ExactString: DuplicateReference]

    /// How many renewals of this store's lease failed since it opened (a server's metric). The default is 0: a
    /// store with no lease (one in memory).
    var renewalFailures: Int { get }
}

extension DeduplicationStore {
    /// The default ``probe()``: does nothing, for a store that always answers (in memory).
    /// - Throws: nothing; a store that can fail implements its own.
    public func probe() throws {}

    /// The default ``reaffirm(_:)``: no claim lapsed, for a store whose claims cannot lapse (one in memory).
    /// - Parameter keys: the claims about to be written or confirmed.
    /// - Returns: none.
    /// - Throws: nothing.
    public func reaffirm(_ keys: [ExactString]) throws -> [ExactString: DuplicateReference] { [:] }

    /// The default ``renewalFailures``: none, for a store with no lease to renew (one in memory).
    public var renewalFailures: Int { 0 }

    /// The default ``claim(_:at:confirming:)``: ``confirm(_:)`` of `confirming` (when not empty), then
    /// ``claim(_:at:)`` of `sightings`, as two calls.
    /// - Parameters:
    ///   - sightings: the valid postbacks to answer, in order.
    ///   - time: when they were seen.
    ///   - confirming: earlier claims of this owner whose records are now stored.
    /// - Returns: one answer per sighting, in order.
    /// - Throws: what ``confirm(_:)`` or ``claim(_:at:)`` throws.
    public func claim(_ sightings: [PostbackSighting], at time: Date, confirming: [ExactString]) throws
        -> [DeduplicationAnswer] {
        if !confirming.isEmpty { try confirm(confirming) }
        return try claim(sightings, at: time)
    }

    /// The keys `answers` claimed: those of the sightings answered ``DeduplicationAnswer/firstSeen``.
    /// - Parameters:
    ///   - sightings: the sightings of a claim.
    ///   - answers: the claim's answers, one per sighting, in order.
    /// - Returns: the keys of the sightings answered ``DeduplicationAnswer/firstSeen``, in order.
    public static func claimedKeys(_ sightings: [PostbackSighting], _ answers: [DeduplicationAnswer])
        -> [ExactString] {
        zip(sightings, answers).compactMap { $1 == .firstSeen ? $0.key : nil }
    }
}
