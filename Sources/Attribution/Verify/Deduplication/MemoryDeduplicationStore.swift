import Foundation
import Synchronization

/// A ``DeduplicationStore`` in this process's memory: for one server process, or tests.
///
/// Keys are never forgotten, so memory grows with the number of distinct valid postbacks; a long-running
/// server wants ``SQLiteDeduplicationStore``, which also survives a restart. Calls are serialised: `store`
/// runs under the store's lock, so it must not call the same store again.
public final class MemoryDeduplicationStore: DeduplicationStore {
    private let seen = Mutex(Deduplicator())

    public init() {}

    /// How many distinct valid postbacks are remembered.
    public var count: Int { seen.withLock { $0.count } }

    public func deduplicate<Outcome>(
        _ sightings: [PostbackSighting], at time: Date, store: ([DeduplicationAnswer]) throws -> Outcome
    ) throws -> Outcome {
        try seen.withLock { (seen: inout Deduplicator) throws -> Outcome in
            var batch = Deduplicator(runStarted: time)
            let answers = sightings.map { sighting -> DeduplicationAnswer in
                if let first = seen.firstOccurrence(of: sighting.key) ?? batch.firstSeen(sighting) {
                    return .duplicate(of: first)
                }
                return .firstSeen
            }
            let outcome = try store(answers)
            for (sighting, answer) in zip(sightings, answers) where answer == .firstSeen {
                _ = seen.firstSeen(sighting, at: time)
            }
            return outcome
        }
    }
}
