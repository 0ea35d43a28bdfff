internal import CAttributionOpenSSL

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One thread's reusable libcrypto contexts: a SHA-256 digest context and one verify-initialised
/// `EVP_PKEY_CTX` per key, so a verification allocates nothing and skips `EVP_DigestVerifyInit`'s per-call setup
/// (the way `openssl speed` measures ECDSA).
///
/// Contexts are per thread because an `EVP_PKEY_CTX` carries operation state; the `EVP_PKEY` behind them is shared
/// read-only. Each `EVP_PKEY_CTX` holds a reference on its key, so a key pointer used as a dictionary key cannot be
/// freed and reused for another key while its entry exists. Freed when the thread ends.
final class ThreadVerificationContexts {
    private let digestContext: OpaquePointer
    private var verifyContexts: [OpaquePointer: OpaquePointer] = [:]
    /// More keys than this in one thread starts the dictionary over (keys are few: Apple's and the user's).
    private static let maximumKeys = 64
    /// This thread's batch ES256 verifier, made on first use (nil if libcrypto cannot make one).
    private(set) lazy var batchVerifier = P256BatchVerifier()
    /// This thread's sampled re-check of the fast paths' acceptances through libcrypto.
    let crossCheck = SignatureCrossCheck()

    private init?() {
        OpenSSLLibrary.setUp()
        guard let context = EVP_MD_CTX_new() else { return nil }
        digestContext = context
    }

    deinit {
        EVP_MD_CTX_free(digestContext)
        verifyContexts.values.forEach { EVP_PKEY_CTX_free($0) }
    }

    /// This thread's contexts, created on first use.
    static var current: ThreadVerificationContexts? {
        if let stored = pthread_getspecific(threadKey) {
            return Unmanaged<ThreadVerificationContexts>.fromOpaque(stored).takeUnretainedValue()
        }
        guard let contexts = ThreadVerificationContexts() else { return nil }
        pthread_setspecific(threadKey, Unmanaged.passRetained(contexts).toOpaque())
        return contexts
    }

    private static let threadKey: pthread_key_t = {
        var key = pthread_key_t()
        let status = pthread_key_create(&key) { stored in
            guard let stored else { return }
            Unmanaged<ThreadVerificationContexts>.fromOpaque(stored).release()
        }
        precondition(status == 0, "pthread_key_create failed: \(status)")
        return key
    }()

    /// SHA-256 of `message` into `digest` (32 bytes), reusing this thread's digest context.
    func sha256(_ message: UnsafeRawBufferPointer, into digest: UnsafeMutablePointer<UInt8>) -> Bool {
        var length: UInt32 = 0
        guard EVP_DigestInit_ex2(digestContext, SHA256MessageDigest.shared.digest, nil) == 1,
              EVP_DigestUpdate(digestContext, message.baseAddress, message.count) == 1,
              EVP_DigestFinal_ex(digestContext, digest, &length) == 1, length == 32 else {
            OpenSSLErrorQueue.clear()
            return false
        }
        return true
    }

    /// A verify-initialised context for `key`, made once per thread and key.
    func verifyContext(for key: OpaquePointer) -> OpaquePointer? {
        if let context = verifyContexts[key] { return context }
        guard let context = EVP_PKEY_CTX_new_from_pkey(nil, key, nil) else {
            OpenSSLErrorQueue.clear()
            return nil
        }
        guard EVP_PKEY_verify_init(context) == 1 else {
            EVP_PKEY_CTX_free(context)
            OpenSSLErrorQueue.clear()
            return nil
        }
        if verifyContexts.count >= Self.maximumKeys {
            verifyContexts.values.forEach { EVP_PKEY_CTX_free($0) }
            verifyContexts.removeAll()
        }
        verifyContexts[key] = context
        return context
    }
}
