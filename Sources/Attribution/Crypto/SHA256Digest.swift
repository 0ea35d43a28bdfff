import CAttributionOpenSSL

/// A SHA-256 digest of some bytes, as a small hashable value (for remembering tokens already verified).
public struct SHA256Digest: Hashable, Sendable {
    private let words: (UInt64, UInt64, UInt64, UInt64)

    /// Hashes `bytes` with libcrypto's one-shot `EVP_Digest`.
    public init(of bytes: some Collection<UInt8>) {
        var output = [UInt8](repeating: 0, count: 32)
        let ok = bytes.withContiguousBytesForLibcrypto { input in
            output.withUnsafeMutableBufferPointer { out in
                EVP_Digest(input.baseAddress, input.count, out.baseAddress, nil,
                           SHA256MessageDigest.shared.digest, nil) == 1
            }
        }
        precondition(ok, "SHA-256 failed: \(OpenSSLErrorQueue.drainedReason())")
        func word(_ index: Int) -> UInt64 {
            output[(index * 8)..<(index * 8 + 8)].reduce(0) { $0 << 8 | UInt64($1) }
        }
        words = (word(0), word(1), word(2), word(3))
    }

    public static func == (lhs: SHA256Digest, rhs: SHA256Digest) -> Bool {
        lhs.words == rhs.words
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(words.0)
        hasher.combine(words.1)
        hasher.combine(words.2)
        hasher.combine(words.3)
    }
}
