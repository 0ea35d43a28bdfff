import Foundation

/// The claims a caller holds between a ``DeduplicationStore``'s answer and their confirmation: the one
/// bookkeeping of the claim -> store the records -> confirm protocol, for ``PostbackPipeline``'s
/// `count(_:through:at:store:)`, the command line's writer and the receiver's group committer alike.
///
/// Records are *written* at increasing positions (an output offset, a group's number), then *stored* (a pipe's
/// reader took them, a file was flushed, a transaction committed) up to a position. A first sighting's claim is
/// confirmed only once its record is stored: with the next ``claim(_:at:)`` (one transaction for both, where the
/// store can) or at once by ``confirmStored()``. Claims whose records could not be stored are released
/// (``release(_:)``); one whose release fails too is kept and released again before the next claim, and while it
/// cannot be the ledger is *blocked* (``isBlocked``): every claim throws ``AttributionError`` (code
/// ``AttributionError/Code/unavailable``) and claims nothing, because a claim made while a dead record's claim is
/// held could answer that record's retry "duplicate" of a row nobody stored.
///
/// Thread-safe: every method holds the ledger's lock for its bookkeeping and its store call (so a claim and the
/// confirmation it carries are one step), so one ledger serves a server's concurrent requests. The positions of
/// ``written(_:through:)`` assume one writer in order (the command line's); concurrent callers use
/// ``stored(_:)``, whose positions are the ledger's own.
public final class ClaimLedger: Sendable {
    /// The store claimed from.
    public let store: any DeduplicationStore
    /// The bookkeeping, behind the ledger's lock.
    private let state = Locked(Claims())

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
    /// - Throws: ``AttributionError`` (``AttributionError/Code/unavailable``) while earlier claims cannot be
    ///   released (the ledger is blocked), or what the store's claim throws; nothing is claimed then.
    public func claim(_ sightings: [PostbackSighting], at time: Date) throws -> [DeduplicationAnswer] {
        try state.withLock { claims in try claims.claim(sightings, at: time, in: store) }
    }

    /// ``claim(_:at:)`` for a caller that stores its records while other callers of this ledger claim
    /// (``PostbackPipeline``'s `count(_:through:at:store:)`, a server's concurrent requests): the first sightings it
    /// claims are *being stored* until ``stored(_:)`` or ``release(_:)`` names them, and a sighting of a postback
    /// being stored so throws and claims nothing. Answered a duplicate instead, it would name a record whose storing
    /// can still fail; refused, it is sent again (Apple retries a 500) and then finds the record stored, or the claim
    /// released and the postback first seen.
    /// - Parameters:
    ///   - sightings: the valid postbacks to answer, in order.
    ///   - time: when they were seen.
    /// - Returns: one answer per sighting, in order.
    /// - Throws: ``AttributionError`` (``AttributionError/Code/unavailable``) when another caller is storing the
    ///   first sighting of one of these postbacks, or the ledger is blocked; what the store's claim throws. Nothing
    ///   is claimed then.
    func claimForStoring(_ sightings: [PostbackSighting], at time: Date) throws -> [DeduplicationAnswer] {
        try state.withLock { claims in
            if let busy = sightings.firstIndex(where: { claims.beingStored.contains($0.key) }) {
                throw AttributionError(.unavailable, """
                    the first sighting of postback \(busy + 1) of this group is being stored by another request; \
                    answer 500 so that it is sent again once that storing has succeeded (it is then a duplicate) \
                    or failed (it is then first seen)
                    """)
            }
            let answers = try claims.claim(sightings, at: time, in: store)
            claims.beingStored.formUnion(type(of: store).claimedKeys(sightings, answers))
            return answers
        }
    }

    /// The first sightings `keys`, claimed by ``claimForStoring(_:at:)``, are no longer being stored, though their
    /// claims stay (another owner took them over: their records are duplicates of that owner's).
    /// - Parameter keys: claimed keys whose records will not be stored as first sightings.
    func notBeingStored(_ keys: [ExactString]) {
        state.withLock { $0.beingStored.subtract(keys) }
    }

    /// Claims `sightings` at `time`, stores the rows `rows` makes from the answers, and settles the claims: one
    /// counting path whatever the store. When the store keeps rows of this kind in its claims' transaction (an
    /// `ArchivingDeduplicationStore` whose `Row` is `Row`), the claims, the rows and the claims' confirmation
    /// are that one transaction (`append` is not called). Otherwise the claims are made (confirming those of
    /// records stored before, as ``claim(_:at:)`` does), then `append` stores the rows: if it throws, the new
    /// claims are released (``release(_:)``: kept, and the ledger blocked, while the release fails); if it
    /// returns, they are stored, confirmed with the next claim or by ``confirmStored()``.
    ///
    /// Either way, claims of records not stored that could not be released are released first, or the call
    /// throws and claims nothing (the ledger is blocked), and a sighting of a postback whose first sighting another
    /// call is appending now throws and claims nothing: answered a duplicate, it would name a record that may not
    /// land. With no sightings nothing is claimed, so the rows are
    /// stored even while the ledger is blocked: they answer no retry.
    /// - Parameters:
    ///   - sightings: the group's valid postbacks, in order.
    ///   - time: when they were seen.
    ///   - rows: the group's rows, made from the answers (one per sighting, in order). It may run more than once
    ///     (a store's transaction tried again): undo in it what an earlier call did.
    ///   - append: stores the rows in the caller's archive, in a transaction of its own, when the store does not
    ///     keep them.
    /// - Returns: one answer per sighting, in order (none for no sightings).
    /// - Throws: ``AttributionError`` (``AttributionError/Code/unavailable``) while the ledger is blocked or
    ///   another call is appending one of these first sightings, what the store's claim or the one transaction
    ///   throws (nothing was claimed or stored then), or what `append` threw (after the release).
    public func claim<Row>(
        _ sightings: [PostbackSighting], at time: Date, archiving rows: ([DeduplicationAnswer]) -> [Row],
        appending append: ([Row]) throws -> Void
    ) throws -> [DeduplicationAnswer] {
        if let archiving = store as? any ArchivingDeduplicationStore<Row> {
            return try state.withLock { claims in
                if !sightings.isEmpty { try claims.releaseUnreleased(in: store) }
                try claims.confirmStored(in: store)
                return try archiving.claim(sightings, at: time, archiving: rows)
            }
        }
        let answers = sightings.isEmpty ? [] : try claimForStoring(sightings, at: time)
        let claimed = type(of: store).claimedKeys(sightings, answers)
        do {
            try append(rows(answers))
        } catch {
            release(claimed)
            throw error
        }
        stored(claimed)
        return answers
    }

    /// The record of the first sighting of `key` was written, ending at `position` (positions never decrease).
    /// - Parameters:
    ///   - key: the first sighting's key, as the store claimed it.
    ///   - position: where its record ends.
    public func written(_ key: ExactString, through position: Int) {
        state.withLock { $0.pending.append((position, key)) }
    }

    /// The records of these first sightings were written and stored together (a committed group): their claims
    /// are ready to confirm. For a caller whose writing is its storing; positions are then the ledger's own count.
    /// - Parameter keys: the first sightings' keys, as the store claimed them.
    public func stored(_ keys: [ExactString]) {
        state.withLock { claims in
            claims.beingStored.subtract(keys)
            let position = (claims.pending.last?.end ?? 0) + 1
            for key in keys { claims.pending.append((position, key)) }
            claims.stored(through: position)
        }
    }

    /// The records written through `position` are stored: their claims are ready to confirm.
    /// - Parameter position: the end of the stored records (an output offset, a group's number).
    public func stored(through position: Int) {
        state.withLock { $0.stored(through: position) }
    }

    /// How many claims are ready to confirm (stored, not confirmed).
    public var storedCount: Int { state.withLock { $0.storedEnd - $0.confirmedEnd } }

    /// True while some claims of written records are not confirmed.
    public var hasUnconfirmed: Bool { state.withLock { $0.confirmedEnd < $0.pending.count } }

    /// True while claims of records not stored could not be released: every ``claim(_:at:)`` tries again first,
    /// and throws until they are.
    public var isBlocked: Bool { state.withLock { !$0.unreleased.isEmpty } }

    /// Confirms the claims whose records are stored, now; on failure they stay, for the next claim or call.
    /// - Throws: what the store's confirm throws; the claims are then kept for the next claim or call.
    public func confirmStored() throws {
        try state.withLock { try $0.confirmStored(in: store) }
    }

    /// Releases `keys`, claims whose records were not stored; if that fails they are kept, and released again
    /// before the next claim (which throws until they are: the ledger is blocked meanwhile).
    /// - Parameter keys: the claims to release.
    public func release(_ keys: [ExactString]) {
        state.withLock { claims in
            claims.beingStored.subtract(keys)
            claims.unreleased += keys
            try? claims.releaseUnreleased(in: store)
        }
    }

    /// Releases every claim not confirmed (the end of a run: records its reader never took, or whose
    /// confirmation failed), and forgets them.
    public func releaseUnconfirmed() {
        state.withLock { claims in
            claims.unreleased += claims.pending[claims.confirmedEnd...].map(\.key)
            claims.pending.removeAll()
            claims.confirmedEnd = 0
            claims.storedEnd = 0
            try? claims.releaseUnreleased(in: store)
        }
    }

    /// Releases what ``release(_:)`` could not, now; throws (keeping them) if it fails again.
    /// - Throws: ``AttributionError`` (``AttributionError/Code/unavailable``) naming the store's failure when the
    ///   release fails again; the claims are then kept and the ledger stays blocked.
    public func releaseUnreleased() throws {
        try state.withLock { try $0.releaseUnreleased(in: store) }
    }
}

/// A ``ClaimLedger``'s bookkeeping, changed only with the ledger's lock held.
private struct Claims {
    /// First sightings not yet confirmed, in position order: each key with the position its record ends at.
    /// Those before `storedEnd` are stored; those before `confirmedEnd` are confirmed (and dropped in time).
    var pending: [(end: Int, key: ExactString)] = []
    var confirmedEnd = 0
    var storedEnd = 0
    /// Claims of records not stored whose release failed, released again before the next claim.
    var unreleased: [ExactString] = []
    /// First sightings a caller of ``ClaimLedger/claimForStoring(_:at:)`` is storing now.
    var beingStored: Set<ExactString> = []

    /// Claims `sightings` at `time` from `store`, confirming the stored claims in the same call, once the
    /// unreleased claims are released (or throws, claiming nothing).
    mutating func claim(_ sightings: [PostbackSighting], at time: Date, in store: any DeduplicationStore) throws
        -> [DeduplicationAnswer] {
        try releaseUnreleased(in: store)
        let confirming = stored
        guard !sightings.isEmpty || !confirming.isEmpty else { return [] }
        let answers = try store.claim(sightings, at: time, confirming: confirming)
        confirmed(through: storedEnd)
        return answers
    }

    /// The stored, unconfirmed keys.
    var stored: [ExactString] {
        pending[confirmedEnd..<storedEnd].map(\.key)
    }

    /// The records written through `position` are stored.
    mutating func stored(through position: Int) {
        while storedEnd < pending.count, pending[storedEnd].end <= position { storedEnd += 1 }
    }

    /// Releases the unreleased claims through `store`, or throws the blocked ledger's error, keeping them.
    mutating func releaseUnreleased(in store: any DeduplicationStore) throws {
        guard !unreleased.isEmpty else { return }
        do {
            try store.release(unreleased)
        } catch {
            throw AttributionError(.unavailable, """
                \(unreleased.count) claim(s) of postbacks that were not stored could not be released (\(error)); \
                nothing more is counted until they are, so that no retry is answered a duplicate of a record nobody \
                stored
                """)
        }
        unreleased = []
    }

    /// Confirms the stored, unconfirmed claims through `store`, if any; on failure they stay.
    mutating func confirmStored(in store: any DeduplicationStore) throws {
        guard storedEnd > confirmedEnd else { return }
        try store.confirm(stored)
        confirmed(through: storedEnd)
    }

    /// The claims before `end` were confirmed; the list is trimmed now and then.
    mutating func confirmed(through end: Int) {
        confirmedEnd = end
        if confirmedEnd > 4096 && confirmedEnd * 2 > pending.count {
            pending.removeFirst(confirmedEnd)
            storedEnd -= confirmedEnd
            confirmedEnd = 0
        }
    }
}
