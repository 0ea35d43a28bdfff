/// Strict base64url without padding, as every compact JWS segment is written (RFC 7515 section 2,
/// RFC 4648 section 5).
///
/// Only `A-Z a-z 0-9 - _` are accepted: no `=`, no whitespace, no `+` or `/`. A length that leaves one character
/// in the last group is refused, and so are non-zero unused bits in the last character, so each byte string has
/// exactly one accepted text: a segment cannot be rewritten into a different text that decodes the same.
enum Base64URL {
    /// Decodes unpadded base64url, refusing anything that would not re-encode to the same text.
    ///
    /// Reads arrays, slices and buffers in place; other collections are copied once. Empty text decodes to no bytes.
    static func decode(_ text: some Collection<UInt8>) throws(AttributionError) -> [UInt8] {
        try Base64Alphabet.url.decode(text)
    }

    /// Encodes as unpadded base64url (RFC 7515 section 2).
    static func encode(_ bytes: some Sequence<UInt8>) -> String {
        Base64Alphabet.url.encode(bytes)
    }
}
