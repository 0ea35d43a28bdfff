import Foundation

/// A ``DeduplicationStore`` in this process's memory: the CLI without `--state`, one server process, or tests.
///
/// The store is one owner, alive as long as the process: a claim is pending until confirmed or released, and a
/// concurrent sighting of a pending key is its duplicate. Keys are never forgotten, so memory grows with the
/// number of distinct valid postbacks (a few hundred bytes each); a long-running server wants
/// `SQLiteDeduplicationStore`, which also survives a restart. Each call holds the store's lock briefly.
public final class MemoryDeduplicationStore: DeduplicationStore {
    /// A first sighting, as compact as a reference can be made from it.
    private struct Entry {
        let source: String
        let line: Int
        let firstSeen: Int64
        let content: ContentFingerprint?
        var isPending: Bool
    }

    private let entries: Locked<[ExactString: Entry]>

    /// An empty store. `expectedKeys` (a guess, never a limit) reserves room for that many distinct postbacks up
    /// front, so a run that knows its input's size does not rehash every key each time the table doubles.
    /// - Parameter expectedKeys: about how many distinct valid postbacks to make room for; 0 by default.
    public init(expectedKeys: Int = 0) {
        entries = Locked([ExactString: Entry](minimumCapacity: max(0, expectedKeys)))
    }

    /// How many distinct valid postbacks are remembered (claimed or confirmed).
    public var count: Int { entries.withLock { $0.count } }

    public func claim(_ sightings: [PostbackSighting], at time: Date) -> [DeduplicationAnswer] {
        let seen = time.millisecondsSince1970
        return entries.withLock { entries in
            // One lookup per sighting: the key's slot is read and, when empty, filled in place.
            sightings.map { sighting in Self.claim(&entries[sighting.key], for: sighting, seen: seen) }
        }
    }

    /// A sighting's answer given its key's slot, which a first sighting fills.
    private static func claim(_ slot: inout Entry?, for sighting: PostbackSighting, seen: Int64)
        -> DeduplicationAnswer {
        if let entry = slot {
            return .duplicate(of: DuplicateReference(
                source: entry.source, line: entry.line, firstSeen: Date(milliseconds: entry.firstSeen),
                firstContent: entry.content, isPending: entry.isPending))
        }
        slot = Entry(source: sighting.source, line: sighting.line, firstSeen: seen, content: sighting.content,
                     isPending: true)
        return .firstSeen
    }

    public func confirm(_ keys: [ExactString]) {
        entries.withLock { entries in
            for key in keys { entries[key]?.isPending = false }
        }
    }

    public func release(_ keys: [ExactString]) {
        entries.withLock { entries in
            for key in keys where entries[key]?.isPending == true { entries[key] = nil }
        }
    }
}
