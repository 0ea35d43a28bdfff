import Foundation

/// Deduplication (rule D1) that many callers share: which valid postbacks were seen before, and where first.
///
/// A postback counts once only if its key is remembered *after* its verdict was stored or delivered: a receiver
/// that crashed in between must treat Apple's retry as new (at-least-once), never as a duplicate of a record
/// nobody kept (spec section 11). So a store answers a batch of sightings, runs your `store` closure with the
/// answers while it holds the keys, and remembers the first sightings only once that closure has returned; if
/// it throws, nothing is remembered. Concurrent calls with the same key get one ``DeduplicationAnswer/firstSeen``
/// between them.
///
/// ``MemoryDeduplicationStore`` keeps keys in this process; ``SQLiteDeduplicationStore`` in a SQLite file that
/// runs and processes on one machine share. A store for a database server keeps the same promises with a
/// unique key on the postback key, inserted in the transaction that stores the verdict (see `docs/state.md`).
public protocol DeduplicationStore: Sendable {
    /// Answers each of `sightings`, in order (a repeat within `sightings` is a duplicate of its first
    /// occurrence there), calls `store` with the answers, then remembers the first sightings as seen at `time`.
    ///
    /// - Throws: ``StateError`` when the store cannot answer or remember (nothing is remembered then), or what
    ///   `store` threw.
    func deduplicate<Outcome>(
        _ sightings: [PostbackSighting], at time: Date, store: ([DeduplicationAnswer]) throws -> Outcome
    ) throws -> Outcome
}

extension DeduplicationStore {
    /// Answers one sighting and remembers it at once: for a caller that needs no store step in between (tests,
    /// a log that is only read by people).
    public func deduplicate(_ sighting: PostbackSighting, at time: Date = Date()) throws -> DeduplicationAnswer {
        try deduplicate([sighting], at: time) { $0[0] }
    }
}
