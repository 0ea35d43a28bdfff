@_spi(CommandLine) @_spi(Servers) @_spi(Stores) @testable import Attribution
import Foundation

// libFuzzer target `fuzz-base64url`: the strict base64url (JWS segments) and padded base64 (SKAdNetwork
// signatures) decoders on arbitrary bytes.
//
// Both promise one accepted text per byte string, so: whatever decodes must re-encode to exactly the input; the
// encoding of any bytes must decode back to them; and Foundation's decoder must read the same bytes from every
// standard text we accept (it is more lenient, so only that direction is checked).

/// Called by libFuzzer once per input; the bytes are read in place, so AddressSanitizer sees any overread.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzBase64URL(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    let input = Array(bytes)

    if let decoded = decodeOrCheckError({ () throws(AttributionError) in try Base64URL.decode(bytes) }) {
        precondition(Array(Base64URL.encode(decoded).utf8) == input, "base64url accepted a non-canonical text")
        precondition(!decoded.isEmpty || input.isEmpty, "base64url decoded a non-empty text to no bytes")
    }
    let urlText = Base64URL.encode(input)
    precondition((try? Base64URL.decode(Array(urlText.utf8))) == input, "base64url does not round-trip its encoding")

    if let decoded = decodeOrCheckError({ () throws(AttributionError) in try Base64.decode(bytes) }) {
        precondition(Array(Base64.encode(decoded).utf8) == input, "base64 accepted a non-canonical text")
        let foundation = Data(base64Encoded: Data(input)).map { [UInt8]($0) }
        precondition(foundation == decoded, "Foundation reads different bytes from an accepted base64 text")
    }
    let standardText = Base64.encode(input)
    precondition((try? Base64.decode(Array(standardText.utf8))) == input, "base64 does not round-trip its encoding")
    return 0
}

/// The decoded bytes, or nil after checking that the refusal is J1 `malformed-input`.
private func decodeOrCheckError(_ decode: () throws(AttributionError) -> [UInt8]) -> [UInt8]? {
    do {
        return try decode()
    } catch {
        precondition(error.code == .malformedInput && error.rule == .j1, "unexpected error \(error)")
        return nil
    }
}
