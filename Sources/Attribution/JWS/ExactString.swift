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
        var string = string
        string.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    }

    package var description: String { string }
}

extension RawRepresentable where RawValue == String, Self: CaseIterable {
    /// The case whose raw value has exactly these Unicode scalars; the synthesised `init(rawValue:)` compares with
    /// `String ==`, which accepts canonically equivalent spellings a signer never wrote.
    init?(exactly text: String) {
        guard let match = Self.allCases.first(where: { $0.rawValue.isExactlyEqual(to: text) }) else { return nil }
        self = match
    }
}
