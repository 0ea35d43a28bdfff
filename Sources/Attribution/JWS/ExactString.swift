/// A string that is equal to another, and hashes, by its Unicode scalars (its UTF-8 bytes), never by Unicode
/// canonical equivalence: the key type wherever a string decides a key lookup or a duplicate (spec section 2).
///
/// Swift's `String` `==` and `Hashable` treat `"K"` and U+212A KELVIN SIGN, or `"A\u{30A}"` and `"\u{C5}"`, as one
/// string. A `[String: Value]` keyed by a token's `kid` would therefore find a key loaded under another kid.
package struct ExactString: Hashable, Sendable, CustomStringConvertible {
    package let string: String

    package init(_ string: String) {
        self.string = string
    }

    package static func == (left: ExactString, right: ExactString) -> Bool {
        left.string.isExactlyEqual(to: right.string)
    }

    package func hash(into hasher: inout Hasher) {
        ByteCursor.overUTF8(string) { $0.combineBytes(into: &hasher) }
    }

    package var description: String { string }
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
