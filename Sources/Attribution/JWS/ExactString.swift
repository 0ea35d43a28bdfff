/// A string that is equal to another, and hashes, by its exact UTF-8 bytes (its Unicode scalars), never by Unicode
/// canonical equivalence: the one type for every string that decides a key lookup or a duplicate (spec section 2):
/// a token's `kid` in a ``KeyRing``, a postback's deduplication key (rule D1) in a ``DeduplicationStore``.
///
/// Swift's `String` `==` and `Hashable` treat `"K"` and U+212A KELVIN SIGN, or `"A\u{30A}"` and `"\u{C5}"`, as one
/// string: a `[String: Value]` keyed by a token's `kid` would find a key loaded under another kid, and two different
/// postbacks would count as one. Holding the bytes makes equality, hashing and a store's bytewise comparison
/// (SQLite's `BINARY`, PostgreSQL's `bytea` or `COLLATE "C"`) agree.
public struct ExactString: Sendable, Hashable, CustomStringConvertible {
    /// The string's UTF-8 bytes, as received (or as a store reads them back).
    public let utf8: [UInt8]

    /// The exact string of `text` (a `postback-identifier`, an SKAdNetwork transaction, a `kid`).
    /// - Parameter text: the string, taken as its UTF-8 bytes.
    public init(_ text: String) {
        utf8 = Array(text.utf8)
    }

    /// The exact string whose UTF-8 bytes are `utf8` (as a store reads a key back).
    /// - Parameter utf8: the bytes, kept as they are.
    public init(utf8: [UInt8]) {
        self.utf8 = utf8
    }

    /// Hashes the bytes in one call (the synthesised conformance feeds the hasher a byte at a time, a large part of
    /// deduplicating a run of distinct postbacks); equality stays bytewise.
    /// - Parameter hasher: the hasher to feed the byte count and the bytes.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(utf8.count)
        ByteCursor.over(utf8) { $0.combineBytes(into: &hasher) }
    }

    /// Equal when the UTF-8 bytes are, never by canonical equivalence.
    /// - Parameters:
    ///   - left: an exact string.
    ///   - right: another exact string.
    /// - Returns: true when both hold the same bytes.
    public static func == (left: ExactString, right: ExactString) -> Bool {
        left.utf8 == right.utf8
    }

    /// The string as text, for messages: never compare exact strings as `String`s.
    public var description: String { String(decoding: utf8, as: UTF8.self) }
}

/// A closed set of values a field may hold, matched by their exact bytes: the synthesised `init(rawValue:)`
/// compares with `String ==`, which accepts canonically equivalent spellings a signer never wrote.
protocol ExactlySpelled: RawRepresentable, CaseIterable where RawValue == String {
    /// Every case with the UTF-8 bytes of its raw value, made once from `allCases`.
    static var spellings: [(utf8: [UInt8], value: Self)] { get }
}

extension ExactlySpelled {
    /// The case whose raw value has exactly these bytes.
    init?(exactly utf8: some Collection<UInt8>) {
        guard let match = Self.spellings.first(where: { $0.utf8.elementsEqual(utf8) }) else { return nil }
        self = match.value
    }

    /// The case whose raw value has exactly these Unicode scalars.
    init?(exactly text: String) {
        self.init(exactly: text.utf8)
    }

    static func makeSpellings() -> [(utf8: [UInt8], value: Self)] {
        allCases.map { (Array($0.rawValue.utf8), $0) }
    }
}
