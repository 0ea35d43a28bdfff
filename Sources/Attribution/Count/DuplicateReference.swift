import Foundation

/// Where and when the first valid occurrence of a duplicated postback was seen, and what it held.
public struct DuplicateReference: Sendable, Hashable {
    /// The source of the first occurrence: a path, `-` for standard input, or a request's label.
    public let source: String
    /// Its 1-based line (1 for a request).
    public let line: Int
    /// When it was first seen: the start of the run that read it (a request's time, for a server); whole
    /// milliseconds, as stores keep it. Nil only where a caller did not say (the CLI without `--state`).
    public let firstSeen: Date?
    /// What the first occurrence held, to name what a later sighting changed; nil when the store has no
    /// fingerprint for it (a row from schema version 1, or a sighting made without one).
    public let firstContent: ContentFingerprint?
    /// True while the first occurrence is claimed by a live owner that has not confirmed it yet: its record is
    /// being written. False once it was confirmed. A server may answer such a retry with a temporary failure
    /// instead of 200 so that the sender tries again later (see `docs/state.md`).
    public let isPending: Bool

    /// A reference to a first occurrence, as a store of your own answers a duplicate.
    /// - Parameters:
    ///   - source: the first occurrence's source.
    ///   - line: its 1-based line (1 for a request).
    ///   - firstSeen: when it was first seen, rounded down to a whole millisecond here; nil when unknown.
    ///   - firstContent: what it held; nil when the store has no fingerprint for it.
    ///   - isPending: true while its owner has not confirmed it.
    public init(source: String, line: Int, firstSeen: Date? = nil, firstContent: ContentFingerprint? = nil,
                isPending: Bool = false) {
        self.source = source
        self.line = line
        self.firstSeen = firstSeen.map(Self.wholeMilliseconds)
        self.firstContent = firstContent
        self.isPending = isPending
    }

    /// `date` rounded down to a whole millisecond, so an answer from memory equals one read back from a database.
    static func wholeMilliseconds(_ date: Date) -> Date {
        Date(milliseconds: date.millisecondsSince1970)
    }
}

extension DuplicateReference {
    /// The same reference without its time: without a state that outlives it, a run's records depend on its input
    /// alone.
    var withoutTime: DuplicateReference {
        DuplicateReference(source: source, line: line, firstSeen: nil, firstContent: firstContent,
                           isPending: isPending)
    }
}
