/// A compact JWS (RFC 7515 §7.1) taken apart strictly, its segments kept as slices of the received bytes.
///
/// The signing input is the received text up to the second dot, never a re-encoding: a verifier that re-encodes
/// can be fooled by a token whose header and payload decode the same but were signed differently.
struct CompactJWS: Sendable {
    /// The whole token as received.
    let bytes: ArraySlice<UInt8>
    /// The three base64url segments as received.
    let headerSegment: ArraySlice<UInt8>
    let payloadSegment: ArraySlice<UInt8>
    let signatureSegment: ArraySlice<UInt8>
    /// The decoded header bytes (a JSON text, not yet parsed).
    let headerBytes: [UInt8]
    /// The decoded payload bytes; parse them only once the signature holds.
    let payloadBytes: [UInt8]
    /// The decoded signature bytes (any length here: a wrong length is J5, not J1).
    let signatureBytes: [UInt8]

    /// Splits and base64url-decodes a compact JWS; throws J1 `malformed-input` on any deviation.
    ///
    /// Exactly three non-empty segments, each canonical unpadded base64url (which also excludes whitespace).
    init(_ token: ArraySlice<UInt8>) throws(AttributionError) {
        // The two dots' positions, without an array (this runs once per item).
        let dot = UInt8(ascii: ".")
        let firstDot = token.firstIndex(of: dot) ?? -1
        let secondDot = firstDot < 0 ? -1 : token[(firstDot + 1)...].firstIndex(of: dot) ?? -1
        if secondDot >= 0, token[(secondDot + 1)...].contains(dot) {
            throw .malformed("a compact JWS has exactly three segments; found more than two dots")
        }
        guard secondDot >= 0 else {
            let found = firstDot < 0 ? 1 : 2
            throw .malformed("a compact JWS has exactly three segments separated by two dots; found \(found)")
        }
        self.bytes = token
        self.headerSegment = token[token.startIndex..<firstDot]
        self.payloadSegment = token[(firstDot + 1)..<secondDot]
        self.signatureSegment = token[(secondDot + 1)..<token.endIndex]
        if headerSegment.isEmpty { throw .malformed("the header segment is empty") }
        if payloadSegment.isEmpty { throw .malformed("the payload segment is empty") }
        if signatureSegment.isEmpty { throw .malformed("the signature segment is empty") }
        self.headerBytes = try Self.decode(headerSegment, name: "header")
        self.payloadBytes = try Self.decode(payloadSegment, name: "payload")
        self.signatureBytes = try Self.decode(signatureSegment, name: "signature")
    }

    /// The JWS signing input: header segment, dot, payload segment, exactly as received (RFC 7515 §5.2 step 8).
    var signingInput: ArraySlice<UInt8> {
        bytes[bytes.startIndex..<(signatureSegment.startIndex - 1)]
    }

    private static func decode(_ segment: ArraySlice<UInt8>, name: String) throws(AttributionError) -> [UInt8] {
        do {
            return try Base64URL.decode(segment)
        } catch {
            throw .malformed("the \(name) segment is not canonical unpadded base64url: \(error.reason)")
        }
    }
}
