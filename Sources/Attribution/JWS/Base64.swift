/// Strict standard base64 with padding (RFC 4648 section 4), as SKAdNetwork writes its DER
/// `attribution-signature`.
///
/// The text must be a multiple of four characters with `=` padding exactly where RFC 4648 puts it; only
/// `A-Z a-z 0-9 + /` otherwise, no whitespace or line breaks, and zero unused bits in the last character, so
/// each byte string has exactly one accepted text.
@_spi(Stores) public enum Base64 {
    /// Decodes padded standard base64, refusing anything that would not re-encode to the same text.
    ///
    /// Reads arrays, slices and buffers in place; other collections are copied once. Empty text decodes to no bytes.
    @_spi(CommandLine) public static func decode(_ text: some Collection<UInt8>) throws(AttributionError) -> [UInt8] {
        try Base64Alphabet.standard.decode(text)
    }

    /// Encodes as padded standard base64 (RFC 4648 section 4).
    @_spi(Stores) public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        Base64Alphabet.standard.encode(bytes)
    }
}
