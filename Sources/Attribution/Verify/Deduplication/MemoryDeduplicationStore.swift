import Foundation
import Synchronization

/// A ``DeduplicationStore`` in this process's memory: the CLI without `--state`, one server process, or tests.
///
/// The store is one owner, alive as long as the process: a claim is pending until confirmed or released, and a
/// concurrent sighting of a pending key is its duplicate. Keys are never forgotten, so memory grows with the
/// number of distinct valid postbacks (a few hundred bytes each); a long-running server wants
/// ``SQLiteDeduplicationStore``, which also survives a restart. Each call holds the store's lock briefly.
public final class MemoryDeduplicationStore: DeduplicationStore {
    private struct Entry {
        var first: DuplicateReference
        var isPending: Bool
    }

    private let entries = Mutex<[DeduplicationKey: Entry]>([:])

    public init() {}

    /// How many distinct valid postbacks are remembered (claimed or confirmed).
    public var count: Int { entries.withLock { $0.count } }

    public func claim(_ sightings: [PostbackSighting], at time: Date) -> [DeduplicationAnswer] {
        entries.withLock { entries in
            sightings.map { sighting in
                if let entry = entries[sighting.key] {
                    let first = entry.first
                    return .duplicate(of: DuplicateReference(
                        source: first.source, line: first.line, firstSeen: first.firstSeen,
                        firstContent: first.firstContent, isPending: entry.isPending))
                }
                entries[sighting.key] = Entry(
                    first: DuplicateReference(source: sighting.source, line: sighting.line, firstSeen: time,
                                              firstContent: sighting.content),
                    isPending: true)
                return .firstSeen
            }
        }
    }

    public func confirm(_ keys: [DeduplicationKey]) {
        entries.withLock { entries in
            for key in keys { entries[key]?.isPending = false }
        }
    }

    public func release(_ keys: [DeduplicationKey]) {
        entries.withLock { entries in
            for key in keys where entries[key]?.isPending == true { entries[key] = nil }
        }
    }
}
