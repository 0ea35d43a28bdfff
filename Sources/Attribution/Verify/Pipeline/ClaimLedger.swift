import Foundation

/// The claims a caller holds between a ``DeduplicationStore``'s answer and their confirmation: the one
/// bookkeeping of the claim -> store the records -> confirm protocol, for the command line's writer and the
/// receiver's group committer alike.
///
/// Records are *written* at increasing positions (an output offset, a group's number), then *stored* (a pipe's
/// reader took them, a file was flushed, a transaction committed) up to a position. A first sighting's claim is
/// confirmed only once its record is stored: with the next ``claim(_:at:)`` (one transaction for both, where the
/// store can) or at once by ``confirmStored()``. Claims whose records could not be stored are released
/// (``release(_:)``); one whose release fails too is kept and released again before the next claim, which throws
/// while it cannot be: a claim made while a dead record's claim is held could answer that record's retry
/// "duplicate" of a row nobody stored.
///
/// Not thread-safe: one owner (a thread, a serial queue) calls it. `@unchecked Sendable` so that owner may be
/// handed it.
public final class ClaimLedger: @unchecked Sendable {
    /// The store claimed from.
    public let store: any DeduplicationStore
    /// First sightings not yet confirmed, in position order: each key with the position its record ends at.
    /// Those before `storedEnd` are stored; those before `confirmedEnd` are confirmed (and dropped in time).
    private var pending: [(end: Int, key: ExactString)] = []
    private var confirmedEnd = 0
    private var storedEnd = 0
    /// Claims of records not stored whose release failed, released again before the next claim.
    private var unreleased: [ExactString] = []

    /// A ledger holding no claim, over `store`.
    /// - Parameter store: the store to claim from, confirm to and release to.
    public init(store: any DeduplicationStore) {
        self.store = store
    }

    /// Claims `sightings` at `time`, confirming the claims whose records are stored in the same call, once the
    /// claims of records not stored are released (throws if they still cannot be, and then claims nothing).
    /// - Parameters:
    ///   - sightings: the valid postbacks to answer, in order.
    ///   - time: when they were seen.
    /// - Returns: one answer per sighting, in order (none for no sightings).
    /// - Throws: what the store throws, or the failed release of earlier claims; nothing is claimed then.
    public func claim(_ sightings: [PostbackSighting], at time: Date) throws -> [DeduplicationAnswer] {
        try releaseUnreleased()
        let confirming = stored
        guard !sightings.isEmpty || !confirming.isEmpty else { return [] }
        let answers = try store.claim(sightings, at: time, confirming: confirming)
        confirmed(through: storedEnd)
        return answers
    }

    /// The record of the first sighting of `key` was written, ending at `position` (positions never decrease).
    /// - Parameters:
    ///   - key: the first sighting's key, as the store claimed it.
    ///   - position: where its record ends.
    public func written(_ key: ExactString, through position: Int) {
        pending.append((position, key))
    }

    /// The records of these first sightings were written and stored together (a committed group): their claims
    /// are ready to confirm. For a caller whose writing is its storing; positions are then its own count.
    /// - Parameter keys: the first sightings' keys, as the store claimed them.
    public func stored(_ keys: [ExactString]) {
        let position = (pending.last?.end ?? 0) + 1
        for key in keys { written(key, through: position) }
        stored(through: position)
    }

    /// The records written through `position` are stored: their claims are ready to confirm.
    /// - Parameter position: the end of the stored records (an output offset, a group's number).
    public func stored(through position: Int) {
        while storedEnd < pending.count, pending[storedEnd].end <= position { storedEnd += 1 }
    }

    /// How many claims are ready to confirm (stored, not confirmed).
    public var storedCount: Int { storedEnd - confirmedEnd }

    /// True while some claims of written records are not confirmed.
    public var hasUnconfirmed: Bool { confirmedEnd < pending.count }

    /// Confirms the claims whose records are stored, now; on failure they stay, for the next claim or call.
    /// - Throws: what the store's confirm throws; the claims are then kept for the next claim or call.
    public func confirmStored() throws {
        guard storedEnd > confirmedEnd else { return }
        try store.confirm(stored)
        confirmed(through: storedEnd)
    }

    /// Releases `keys`, claims whose records were not stored; if that fails they are kept, and released again
    /// before the next claim (which throws until they are).
    /// - Parameter keys: the claims to release.
    public func release(_ keys: [ExactString]) {
        unreleased += keys
        try? releaseUnreleased()
    }

    /// Releases every claim not confirmed (the end of a run: records its reader never took, or whose
    /// confirmation failed), and forgets them.
    public func releaseUnconfirmed() {
        release(pending[confirmedEnd...].map(\.key))
        pending.removeAll()
        confirmedEnd = 0
        storedEnd = 0
    }

    /// Releases what ``release(_:)`` could not, now; throws (keeping them) if it fails again.
    /// - Throws: what the store's release throws; the claims are then kept.
    public func releaseUnreleased() throws {
        guard !unreleased.isEmpty else { return }
        try store.release(unreleased)
        unreleased = []
    }

    /// The stored, unconfirmed keys.
    private var stored: [ExactString] {
        pending[confirmedEnd..<storedEnd].map(\.key)
    }

    /// The claims before `end` were confirmed; the list is trimmed now and then.
    private func confirmed(through end: Int) {
        confirmedEnd = end
        if confirmedEnd > 4096 && confirmedEnd * 2 > pending.count {
            pending.removeFirst(confirmedEnd)
            storedEnd -= confirmedEnd
            confirmedEnd = 0
        }
    }
}
