/// The shape rules of a source identifier, which postbacks carry as a string and impressions as an integer.
enum SourceIdentifier {
    /// A postback's form: 2, 3 or 4 ASCII digits (leading zeros allowed: "07" is a 2-digit identifier).
    static func isPostbackForm(_ text: String) -> Bool {
        isPostbackForm(utf8: text.utf8)
    }

    /// ``isPostbackForm(_:)`` over the identifier's UTF-8 bytes.
    static func isPostbackForm(utf8: some Collection<UInt8>) -> Bool {
        (2...4).contains(utf8.count) && utf8.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
    }

    /// The number of digits of a postback's source identifier (tier rules care about 2 versus 3-4).
    static func digitCount(_ text: String) -> Int {
        text.utf8.count
    }
}
