internal import CAttributionOpenSSL

/// A fixed-size ECDSA signature r‖s (IEEE P1363), the form JWS uses (RFC 7518 §3.4), turned into the DER
/// `ECDSA-Sig-Value` (RFC 5480 §2.2.3, SEC1 §C.5) that libcrypto verifies.
///
/// Encoded by hand into a stack buffer: the verify path allocates nothing, and r, s are taken as they are
/// (no low-S normalisation: a high-S signature is valid ES256). libcrypto itself refuses r or s of 0 or ≥ n.
enum P1363Signature {
    /// The largest DER for 32-byte r and s: SEQUENCE header 2 + two INTEGERs of 2 + 1 (sign byte) + 32.
    static let maximumDERByteCount = 72

    /// Calls `body` with the DER of the signature whose first half of `raw` is r and second half s.
    ///
    /// `raw` must have an even count of at most 64 bytes (checked by the caller: 64 for ES256).
    static func withDEREncoding<Result>(
        of raw: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) -> Result
    ) -> Result {
        precondition(raw.count % 2 == 0 && raw.count <= 64, "P1363 signature of \(raw.count) bytes")
        return withUnsafeTemporaryAllocation(byteCount: maximumDERByteCount, alignment: 1) { buffer in
            let half = raw.count / 2
            var length = 2
            length = appendInteger(raw[0..<half], to: buffer, at: length)
            length = appendInteger(raw[half..<raw.count], to: buffer, at: length)
            buffer[0] = 0x30
            buffer[1] = UInt8(length - 2)
            return body(UnsafeRawBufferPointer(rebasing: buffer[0..<length]))
        }
    }

    /// Writes `magnitude` (big-endian, unsigned) as a minimal DER INTEGER at `offset`; returns the end offset.
    private static func appendInteger(
        _ magnitude: Slice<UnsafeRawBufferPointer>, to buffer: UnsafeMutableRawBufferPointer, at offset: Int
    ) -> Int {
        // Leading zero bytes are dropped (DER is minimal), keeping one for the value 0.
        var first = magnitude.startIndex
        while first < magnitude.endIndex - 1 && magnitude[first] == 0 {
            first += 1
        }
        // A set top bit would read as negative, so a zero byte goes in front (X.690 §8.3.2).
        let needsSignByte = magnitude[first] & 0x80 != 0
        let contentCount = magnitude.endIndex - first + (needsSignByte ? 1 : 0)
        var index = offset
        buffer[index] = 0x02
        buffer[index + 1] = UInt8(contentCount)
        index += 2
        if needsSignByte {
            buffer[index] = 0
            index += 1
        }
        for position in first..<magnitude.endIndex {
            buffer[index] = magnitude[position]
            index += 1
        }
        return index
    }
}

extension P1363Signature {
    /// r‖s (two 32-byte halves) of a DER `ECDSA-Sig-Value`, for exactly the encodings libcrypto's ECDSA verify
    /// reads (it decodes, re-encodes and refuses a signature whose bytes differ, or that has bytes left over);
    /// nil for any other, and for a negative r or s or one of more than `half` bytes: the caller then leaves the
    /// signature to `EVP_PKEY_verify`, which refuses it.
    ///
    /// `half` is the size of r and of s in the result: 32 for P-256 (ES256), 24 for P-192.
    static func raw(fromStrictDER der: [UInt8], half: Int32 = 32) -> [UInt8]? {
        der.withUnsafeBytes { raw(fromStrictDER: $0, half: half) }
    }

    /// The same, over the DER bytes in place.
    static func raw(fromStrictDER der: UnsafeRawBufferPointer, half: Int32 = 32) -> [UInt8]? {
        guard let start = der.baseAddress?.assumingMemoryBound(to: UInt8.self), !der.isEmpty else { return nil }
        var cursor: UnsafePointer<UInt8>? = start
        guard let signature = d2i_ECDSA_SIG(nil, &cursor, der.count) else {
            OpenSSLErrorQueue.clear()
            return nil
        }
        defer { ECDSA_SIG_free(signature) }
        var encoded: UnsafeMutablePointer<UInt8>?
        let length = i2d_ECDSA_SIG(signature, &encoded)
        defer { CRYPTO_free(encoded, #fileID, #line) }
        guard cursor == start + der.count, let encoded, Int(length) == der.count,
              UnsafeBufferPointer(start: encoded, count: der.count).elementsEqual(
                  UnsafeBufferPointer(start: start, count: der.count)),
              let r = ECDSA_SIG_get0_r(signature), let s = ECDSA_SIG_get0_s(signature),
              BN_is_negative(r) == 0, BN_is_negative(s) == 0 else {
            OpenSSLErrorQueue.clear()
            return nil
        }
        var raw = [UInt8](repeating: 0, count: 2 * Int(half))
        let written = raw.withUnsafeMutableBufferPointer { buffer in
            BN_bn2binpad(r, buffer.baseAddress, half) == half
                && BN_bn2binpad(s, buffer.baseAddress! + Int(half), half) == half
        }
        return written ? raw : nil
    }
}
