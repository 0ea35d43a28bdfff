import Foundation

/// Marks repeated postbacks as duplicates (rule D1), in input order, in memory.
///
/// Only items whose verdict is valid count as seen, so a forged or broken item carrying a genuine postback's
/// identifier can never make the genuine one look like a duplicate. Keys compare by their UTF-8 bytes
/// (``DeduplicationKey``), never by Unicode equivalence. Memory grows with the number of distinct valid
/// postbacks, nothing else; ``SQLiteDeduplicationStore`` remembers across runs without that growth.
package struct Deduplicator: Sendable {
    private var seen: [DeduplicationKey: DuplicateReference] = [:]
    /// Stamped on every first occurrence recorded without its own time: the run's start.
    private let runStarted: Date?

    /// - Parameter runStarted: when the run began; duplicates report it as their first occurrence's time.
    package init(runStarted: Date? = nil) {
        self.runStarted = runStarted
    }

    /// How many distinct valid postbacks have been seen.
    package var count: Int { seen.count }

    /// Applies D1 to `result`, the item at `source`:`line`, which must come after every item already applied.
    package mutating func apply(to result: inout VerificationResult, source: String, line: Int) {
        guard let sighting = PostbackSighting(result, source: source, line: line) else { return }
        if let first = firstSeen(sighting) {
            result.markDuplicate(of: first)
        }
    }

    /// The first valid occurrence of `sighting`'s key, or nil after recording `sighting` as the first, seen at
    /// `time` (default: the run's start).
    package mutating func firstSeen(_ sighting: PostbackSighting, at time: Date? = nil) -> DuplicateReference? {
        if let first = seen[sighting.key] { return first }
        seen[sighting.key] = DuplicateReference(
            source: sighting.source, line: sighting.line, firstSeen: time ?? runStarted)
        return nil
    }

    /// The first valid occurrence of `key`, without recording anything.
    func firstOccurrence(of key: DeduplicationKey) -> DuplicateReference? {
        seen[key]
    }
}
