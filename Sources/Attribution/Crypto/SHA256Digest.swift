internal import CAttributionOpenSSL

/// A SHA-256 digest: the message an ECDSA signature signs, and a small hashable value for remembering tokens.
struct SHA256Digest: Hashable, Sendable {
    /// The 32 digest bytes as four big-endian words.
    private let words: (UInt64, UInt64, UInt64, UInt64)

    /// Hashes `bytes` with libcrypto's SHA-256, reusing this thread's digest context.
    init(of bytes: some Collection<UInt8>) {
        var output = (UInt64(0), UInt64(0), UInt64(0), UInt64(0))
        let ok = bytes.withContiguousBytesForLibcrypto { input in
            withUnsafeMutableBytes(of: &output) { out in
                ThreadVerificationContexts.current?.sha256(
                    input, into: out.baseAddress!.assumingMemoryBound(to: UInt8.self)) ?? false
            }
        }
        precondition(ok, "SHA-256 failed: \(OpenSSLErrorQueue.drainedReason())")
        words = (UInt64(bigEndian: output.0), UInt64(bigEndian: output.1), UInt64(bigEndian: output.2),
                 UInt64(bigEndian: output.3))
    }

    /// The digest whose 32 bytes are `bytes` (big-endian words), for a caller that has the digest, not the message
    /// (tests choose digests such as 0 or n to reach ECDSA's edge cases); nil unless 32 bytes.
    init?(digestBytes bytes: [UInt8]) {
        guard bytes.count == 32 else { return nil }
        func word(_ index: Int) -> UInt64 {
            bytes[(8 * index)..<(8 * index + 8)].reduce(0) { $0 << 8 | UInt64($1) }
        }
        words = (word(0), word(1), word(2), word(3))
    }

    /// The first eight digest bytes as a big-endian word: uniformly spread, for picking a shard.
    var leadingWord: UInt64 { words.0 }

    /// The digest as a 256-bit number (ECDSA's e before reduction), limbs least significant first.
    var number: P256Field.Element { (words.3, words.2, words.1, words.0) }

    /// Calls `body` with the 32 digest bytes.
    func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        var bytes = (words.0.bigEndian, words.1.bigEndian, words.2.bigEndian, words.3.bigEndian)
        return Swift.withUnsafeBytes(of: &bytes, body)
    }

    /// Appends the first `count` digest bytes (at most 32) to `out`.
    func append(prefix count: Int, to out: inout [UInt8]) {
        withUnsafeBytes { out.append(contentsOf: $0.prefix(count)) }
    }

    static func == (lhs: SHA256Digest, rhs: SHA256Digest) -> Bool {
        lhs.words == rhs.words
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(words.0)
        hasher.combine(words.1)
        hasher.combine(words.2)
        hasher.combine(words.3)
    }
}
