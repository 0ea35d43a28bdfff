internal import CAttributionOpenSSL

/// HMAC-SHA256 (RFC 2104) by libcrypto: the signature of a Standard Webhooks request
/// (`webhook-signature: v1,<base64 of HMAC-SHA256(secret, "id.timestamp.body")>`), which a relay of verified
/// postbacks puts on each webhook it sends.
@_spi(Servers) public enum HMACSHA256 {
    /// The length of a code, in bytes.
    public static let byteCount = 32

    /// The message authentication code of `message` under `key`.
    ///
    /// libcrypto's one-shot `HMAC()` hashes any key length (a key longer than SHA-256's 64-byte block is hashed
    /// first, as RFC 2104 section 2 says), so no input is refused.
    /// - Parameters:
    ///   - message: the bytes to authenticate.
    ///   - key: the shared secret's bytes (for Standard Webhooks: the base64 after `whsec_`, decoded).
    /// - Returns: the 32-byte code.
    public static func authenticationCode(for message: some Collection<UInt8>, key: some Collection<UInt8>)
        -> [UInt8] {
        var code = [UInt8](repeating: 0, count: byteCount)
        var length: UInt32 = 0
        let ok = key.withContiguousBytesForLibcrypto { keyBytes in
            message.withContiguousBytesForLibcrypto { messageBytes in
                code.withUnsafeMutableBufferPointer { out in
                    // An empty buffer may have no base address; libcrypto takes a non-null pointer with length 0.
                    var empty: UInt8 = 0
                    return withUnsafePointer(to: &empty) { placeholder in
                        HMAC(EVP_sha256(), keyBytes.baseAddress ?? UnsafeRawPointer(placeholder),
                             Int32(clamping: keyBytes.count),
                             messageBytes.baseAddress?.assumingMemoryBound(to: UInt8.self) ?? placeholder,
                             messageBytes.count, out.baseAddress, &length) != nil
                    }
                }
            }
        }
        // HMAC fails only when libcrypto cannot allocate its context: no answer is better than a wrong code.
        precondition(ok && length == UInt32(byteCount), "HMAC-SHA256 failed: \(OpenSSLErrorQueue.drainedReason())")
        return code
    }
}
