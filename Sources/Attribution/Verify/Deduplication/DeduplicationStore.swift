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

/// What a ``DeduplicationStore`` answers for one ``PostbackSighting``.
public enum DeduplicationAnswer: Sendable, Hashable {
    /// No valid postback with this key was seen before (within the retention): this one counts.
    case firstSeen
    /// A repeat: the first valid occurrence was here (rule D1).
    case duplicate(of: DuplicateReference)

    /// The first occurrence, for a duplicate.
    public var duplicateOf: DuplicateReference? {
        if case .duplicate(let first) = self { return first }
        return nil
    }
}

/// The key under which repeats of a valid postback are duplicates (rule D1), compared by its exact UTF-8 bytes.
///
/// Swift's `String ==` and `Hashable` use Unicode canonical equivalence, under which `"A\u{030A}"` equals
/// `"\u{00C5}"`: two different postbacks would count as one (spec section 2, "strings compare by code points").
/// Holding the bytes makes equality, hashing and the SQLite state's `BINARY` comparison agree.
public struct DeduplicationKey: Sendable, Hashable, CustomStringConvertible {
    /// The key's UTF-8 bytes, as signed.
    public let utf8: [UInt8]

    /// The key of a `postback-identifier` (or of an SKAdNetwork transaction, ``SKAdNetworkPostback``).
    public init(_ text: String) {
        utf8 = Array(text.utf8)
    }

    public var description: String { String(decoding: utf8, as: UTF8.self) }
}

/// A valid postback seen at one place (a file's line, a request): what a ``DeduplicationStore`` decides on.
public struct PostbackSighting: Sendable, Hashable {
    public let key: DeduplicationKey
    /// Where it was read: a path, `-` for standard input, or whatever names a request to you.
    public let source: String
    /// Its 1-based line within `source` (1 for a request).
    public let line: Int

    public init(key: DeduplicationKey, source: String, line: Int) {
        self.key = key
        self.source = source
        self.line = line
    }

    /// The sighting of `result`'s postback at `source`:`line`; nil unless the verdict is valid and the item has a
    /// deduplication key. Only valid postbacks count as seen, so a forgery cannot shadow a genuine one (D1).
    public init?(_ result: VerificationResult, source: String, line: Int) {
        guard result.verdict == .valid, let key = result.deduplicationKey else { return nil }
        self.init(key: DeduplicationKey(key), source: source, line: line)
    }
}

/// Where and when the first valid occurrence of a duplicated postback was seen.
public struct DuplicateReference: Sendable, Hashable {
    /// The source (path, or `-`) of the first occurrence.
    public let source: String
    /// Its 1-based line.
    public let line: Int
    /// When it was first seen: the start of the run that read it (a request's time, for a server); whole
    /// milliseconds, as the state keeps it. Nil only where a caller did not say.
    public let firstSeen: Date?

    package init(source: String, line: Int, firstSeen: Date? = nil) {
        self.source = source
        self.line = line
        self.firstSeen = firstSeen.map(Self.wholeMilliseconds)
    }

    /// `date` rounded down to a whole millisecond, so an answer from memory equals one read back from SQLite.
    static func wholeMilliseconds(_ date: Date) -> Date {
        Date(milliseconds: date.millisecondsSince1970)
    }
}
