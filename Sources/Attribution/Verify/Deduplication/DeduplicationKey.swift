/// The key under which repeats of a valid postback are duplicates (rule D1), compared by its exact UTF-8 bytes.
///
/// Swift's `String ==` and `Hashable` use Unicode canonical equivalence, under which `"A\u{030A}"` equals
/// `"\u{00C5}"`: two different postbacks would count as one (spec section 2, "strings compare by code points").
/// Holding the bytes makes equality, hashing and a store's bytewise comparison (SQLite's `BINARY`, PostgreSQL's
/// `bytea` or `COLLATE "C"`) agree.
public struct DeduplicationKey: Sendable, Hashable, CustomStringConvertible {
    /// The key's UTF-8 bytes, as signed.
    public let utf8: [UInt8]

    /// The key of a `postback-identifier` (or of an SKAdNetwork transaction, ``SKAdNetworkPostback``).
    public init(_ text: String) {
        utf8 = Array(text.utf8)
    }

    /// The key whose bytes are `utf8` (as a store reads it back).
    public init(utf8: [UInt8]) {
        self.utf8 = utf8
    }

    /// Hashes the bytes in one call (the synthesized conformance fed the hasher a byte at a time: about a quarter
    /// of the writer thread's work on a run of distinct postbacks); equality stays bytewise.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(utf8.count)
        utf8.withUnsafeBytes { hasher.combine(bytes: $0) }
    }

    public static func == (left: DeduplicationKey, right: DeduplicationKey) -> Bool {
        left.utf8 == right.utf8
    }

    /// The key as text (for messages; never compare keys as `String`s).
    public var description: String { String(decoding: utf8, as: UTF8.self) }
}
