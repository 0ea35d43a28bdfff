internal import CAttributionOpenSSL
import Foundation

/// Owns one libcrypto `EVP_PKEY` holding a public key, and frees it when the last ``ECPublicKey`` copy goes.
///
/// The only place a key's C pointer lives: ``ECPublicKey`` keeps policy (which curve, which encoding) in Swift
/// and asks this owner to decode, describe and verify.
///
/// A key whose bytes are already known to be valid (``init(validatedSubjectPublicKeyInfo:)``: a P-256 key
/// ``ECPublicKey`` checked itself, or one of Apple's published keys) is decoded on first use, not when loaded:
/// libcrypto's first decoding sets up its decoder framework (~1.2 ms, then ~85 µs a key), and a run whose
/// signatures all go through the tables of multiples (``P256BatchVerifier``, which reads the point from the DER
/// form) never asks libcrypto for the key at all.
final class EVPPublicKey: @unchecked Sendable {
    // Safe to share across threads: the key is never modified once decoded (`decoded` is written once, under
    // `lock`), and openssl-threads(7) lets threads use one object at once while no call modifies it. Verification
    // only reads the key (libcrypto guards its provider-export cache with the key's own lock), and each
    // verification makes its own `EVP_MD_CTX` and `EVP_PKEY_CTX`, so no per-operation state is shared.
    /// The DER SubjectPublicKeyInfo, for a key decoded on first use; empty once decoded at `init`.
    private let deferredDER: [UInt8]
    private let lock = NSLock()
    /// The key: set in `init`, or on first use for a deferred one (nil until then, and for good if decoding
    /// failed, which bytes checked beforehand never do: every check then fails, a rejection).
    private var decoded: OpaquePointer?
    private var attempted: Bool

    /// The libcrypto key, decoded now if it was deferred; nil only if that decoding failed.
    private var key: OpaquePointer? {
        lock.withLock {
            if !attempted {
                attempted = true
                decoded = try? Self.decode(deferredDER)
                OpenSSLErrorQueue.clear()
            }
            return decoded
        }
    }

    /// Decodes a DER SubjectPublicKeyInfo (RFC 5280 §4.1.2.7), refusing bytes left over after it.
    init(subjectPublicKeyInfo der: [UInt8]) throws(AttributionError) {
        decoded = try Self.decode(der)
        deferredDER = []
        attempted = true
    }

    /// Keeps a DER SubjectPublicKeyInfo the caller has already validated, to decode on first use.
    init(validatedSubjectPublicKeyInfo der: [UInt8]) {
        deferredDER = der
        attempted = false
    }

    private static func decode(_ der: [UInt8]) throws(AttributionError) -> OpaquePointer {
        OpenSSLLibrary.setUp()
        guard !der.isEmpty else {
            throw AttributionError(.invalidKey, "the key is empty")
        }
        let (decoded, consumed) = der.withUnsafeBufferPointer { buffer -> (OpaquePointer?, Int) in
            guard let start = buffer.baseAddress else { return (nil, 0) }
            var cursor: UnsafePointer<UInt8>? = start
            let key = d2i_PUBKEY(nil, &cursor, buffer.count)
            // d2i advances the cursor past what it decoded; anything beyond is trailing data.
            return (key, cursor.map { start.distance(to: $0) } ?? 0)
        }
        guard let key = decoded else {
            // libcrypto's queue names its decoder's internals (`asn1 encoding routines: too long`), which tell a
            // user nothing about the file: clear it and say what the bytes are not.
            OpenSSLErrorQueue.clear()
            throw AttributionError(
                .invalidKey,
                "not a DER SubjectPublicKeyInfo (a public key), or its point is not on its curve"
            )
        }
        guard consumed == der.count else {
            EVP_PKEY_free(key)
            throw AttributionError(
                .invalidKey, "trailing data after the SubjectPublicKeyInfo (\(der.count - consumed) bytes)"
            )
        }
        return key
    }

    deinit {
        if let decoded { EVP_PKEY_free(decoded) }
    }

    /// libcrypto's name for the key type: `EC`, `RSA`, `ED25519`...
    var typeName: String {
        key.flatMap { EVP_PKEY_get0_type_name($0) }.map { String(cString: $0) } ?? "unknown"
    }

    /// True when the key is an elliptic-curve key (ECDSA/ECDH, id-ecPublicKey).
    var isEllipticCurve: Bool {
        key.map { EVP_PKEY_is_a($0, "EC") == 1 } ?? false
    }

    /// The named curve's short name (`prime256v1`, `prime192v1`, `secp384r1`), or nil for explicit parameters.
    var curveName: String? {
        var name = [CChar](repeating: 0, count: 80)
        var length = 0
        guard let key, EVP_PKEY_get_group_name(key, &name, name.count, &length) == 1 else {
            OpenSSLErrorQueue.clear()
            return nil
        }
        return String(decoding: name.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The public point as SEC1 §2.3.3 encodes it (`04 || x || y` for the uncompressed form), as libcrypto holds it.
    var encodedPoint: [UInt8]? {
        var point = [UInt8](repeating: 0, count: 160)
        var length = 0
        // "encoded-pub-key" is OSSL_PKEY_PARAM_ENCODED_PUBLIC_KEY (core_names.h, which the shim does not include).
        guard let key,
              EVP_PKEY_get_octet_string_param(key, "encoded-pub-key", &point, point.count, &length) == 1 else {
            OpenSSLErrorQueue.clear()
            return nil
        }
        return Array(point.prefix(length))
    }

    /// True only when libcrypto reports exactly 1 for an ECDSA signature (DER `ECDSA-Sig-Value`) over SHA-256
    /// of `message`; any other answer, including errors, is false and leaves the error queue empty.
    ///
    /// Hashes with SHA-256 and verifies the digest with `EVP_PKEY_verify`, using this thread's reusable contexts
    /// (``ThreadVerificationContexts``): the same result as `EVP_DigestVerify`, without its per-call setup.
    func isValidSHA256Signature(der signature: UnsafeRawBufferPointer, over message: UnsafeRawBufferPointer) -> Bool {
        SHA256Digest(of: message).withUnsafeBytes { isValidSignature(der: signature, overSHA256Digest: $0) }
    }

    /// True only when libcrypto reports exactly 1 for an ECDSA signature (DER) over a 32-byte SHA-256 digest.
    func isValidSignature(der signature: UnsafeRawBufferPointer, overSHA256Digest digest: UnsafeRawBufferPointer)
        -> Bool {
        guard let signatureBytes = signature.baseAddress?.assumingMemoryBound(to: UInt8.self), !signature.isEmpty,
              let digestBytes = digest.baseAddress?.assumingMemoryBound(to: UInt8.self), digest.count == 32,
              let key, let verifyContext = ThreadVerificationContexts.current?.verifyContext(for: key) else {
            return false
        }
        guard EVP_PKEY_verify(verifyContext, signatureBytes, signature.count, digestBytes, 32) == 1 else {
            OpenSSLErrorQueue.clear()
            return false
        }
        return true
    }
}
