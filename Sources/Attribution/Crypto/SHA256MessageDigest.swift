internal import CAttributionOpenSSL

/// libcrypto's SHA-256 implementation, fetched from the default provider once for the whole process.
///
/// OpenSSL 3 looks algorithms up by name in a locked provider store; holding the fetched `EVP_MD` skips that
/// lookup on every verification ("Algorithm fetching" in openssl-core(7)).
final class SHA256MessageDigest: @unchecked Sendable {
    // Safe to share: an `EVP_MD` is immutable once fetched and reference-counted internally by libcrypto,
    // and this owner never hands it out for mutation.

    /// The single process-wide instance.
    static let shared = SHA256MessageDigest()

    /// The fetched `EVP_MD`, valid until this owner is freed (never, for `shared`).
    let digest: OpaquePointer

    private init() {
        OpenSSLLibrary.setUp()
        guard let digest = EVP_MD_fetch(nil, "SHA256", nil) else {
            // No SHA-256 means libcrypto's default provider is not loaded (a broken OPENSSL_CONF): nothing
            // could be verified, and silently answering "invalid" for every postback would hide that.
            fatalError("libcrypto has no SHA-256: \(OpenSSLErrorQueue.drainedReason())")
        }
        self.digest = digest
    }

    deinit {
        EVP_MD_free(digest)
    }
}
