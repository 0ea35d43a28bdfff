import Foundation

/// A ``DeduplicationStore`` that also keeps its callers' records (rows of type `Row`), and stores a group's rows
/// in the same transaction as the group's claims and their confirmation: one commit, after which the postbacks
/// are counted and stored, or none of it happened (no claim is left, no row stored, and the next sighting is
/// first seen). A PostgreSQL state that holds the received postbacks is one (`PostgreSQLArchivingStore`).
///
/// A capability of the store, not a switch of the caller's: count through
/// ``ClaimLedger/claim(_:at:archiving:appending:)``, which claims and archives in the store's one transaction
/// when its store is one of these for the rows given, and otherwise claims, has the caller append the rows to an
/// archive of its own, and confirms the claims once they are stored (or releases them when they are not).
@_spi(Stores) public protocol ArchivingDeduplicationStore<Row>: DeduplicationStore {
    /// The record the store keeps of each postback of a group.
    associatedtype Row

    /// Claims `sightings` as ``DeduplicationStore/claim(_:at:)`` does and stores the rows `rows` makes from the
    /// answers, in one transaction that also confirms the claims. If it throws, none of it happened. `rows` runs
    /// once per attempt (a store may try the transaction again after a lost connection), while the claimed keys
    /// are locked: keep it quick, and undo in it what an earlier attempt's call did.
    /// - Parameters:
    ///   - sightings: the group's valid postbacks, in order (none: only the rows are stored).
    ///   - time: when they were seen.
    ///   - rows: the group's rows, made from the answers (one per sighting, in order).
    /// - Returns: one answer per sighting, in order.
    /// - Throws: ``AttributionError`` (a state code) or the store's own error; nothing was claimed or stored then.
    func claim(_ sightings: [PostbackSighting], at time: Date, archiving rows: ([DeduplicationAnswer]) -> [Row])
        throws -> [DeduplicationAnswer]
}
