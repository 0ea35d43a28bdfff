internal import CAttributionOpenSSL

/// SHA-256 over bytes given in pieces: the digest of a file written a piece at a time (`postback-verify export
/// --to` writes each file's SHA-256 into its manifest), without holding the whole file.
///
/// Owns its `EVP_MD_CTX`, freed on release; not shared between threads (a digest in progress is mutable state).
@_spi(CommandLine) public final class SHA256Stream {
    private let context: OpaquePointer

    /// Starts an empty digest.
    @_spi(CommandLine) public init() {
        OpenSSLLibrary.setUp()
        guard let context = EVP_MD_CTX_new() else {
            fatalError("libcrypto cannot allocate a digest context: \(OpenSSLErrorQueue.drainedReason())")
        }
        guard EVP_DigestInit_ex2(context, SHA256MessageDigest.shared.digest, nil) == 1 else {
            // The digest was fetched once already (SHA256MessageDigest), so only a broken libcrypto fails here.
            fatalError("libcrypto cannot start SHA-256: \(OpenSSLErrorQueue.drainedReason())")
        }
        self.context = context
    }

    deinit {
        EVP_MD_CTX_free(context)
    }

    /// Adds `bytes` to the digest.
    @_spi(CommandLine) @_spi(Stores) public func update(_ bytes: [UInt8]) {
        let ok = bytes.withUnsafeBytes { EVP_DigestUpdate(context, $0.baseAddress, $0.count) == 1 }
        precondition(ok, "SHA-256 update failed: \(OpenSSLErrorQueue.drainedReason())")
    }

    /// The digest of every byte added, as 64 lowercase hexadecimal digits (as `sha256sum` prints it); the stream
    /// is finished and must not be updated again.
    @_spi(CommandLine) @_spi(Stores) public func finish() -> String {
        var digest = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        let ok = digest.withUnsafeMutableBufferPointer { EVP_DigestFinal_ex(context, $0.baseAddress, &length) == 1 }
        precondition(ok && length == 32, "SHA-256 failed: \(OpenSSLErrorQueue.drainedReason())")
        let hexadecimal = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(64)
        for byte in digest {
            text.append(hexadecimal[Int(byte >> 4)])
            text.append(hexadecimal[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
