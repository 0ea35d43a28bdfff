import CAttributionOpenSSL
import Testing

@_spi(CommandLine) @_spi(Servers) @_spi(Stores) @testable import Attribution

/// A fresh P-256 (or P-192) key pair made and used by libcrypto's EVP layer, to sign digests for tests that compare the
/// verifier with `EVP_PKEY_verify` on many signatures (the library itself never holds a private key).
final class ReferenceSigner {
    private let key: OpaquePointer
    /// The public half, as the verifier loads keys.
    let publicKey: ECPublicKey

    init(curve: ECPublicKey.Curve = .p256) throws {
        key = try #require(EVP_PKEY_Q_keygen_ec(curve.rawValue))
        var der: UnsafeMutablePointer<UInt8>?
        let count = i2d_PUBKEY(key, &der)
        defer { CRYPTO_free(der, #fileID, #line) }
        let bytes = try #require(der.map { Array(UnsafeBufferPointer(start: $0, count: Int(count))) })
        publicKey = try ECPublicKey(derRepresentation: bytes, curve: curve)
    }

    deinit {
        EVP_PKEY_free(key)
    }

    /// A DER `ECDSA-Sig-Value` of `digest` by EVP_PKEY_sign.
    func signDER(_ digest: SHA256Digest) -> [UInt8] {
        let context = EVP_PKEY_CTX_new(key, nil)
        defer { EVP_PKEY_CTX_free(context) }
        var der = [UInt8](repeating: 0, count: 80)
        var length = der.count
        let signed = EVP_PKEY_sign_init(context) == 1 && digest.withUnsafeBytes {
            EVP_PKEY_sign(context, &der, &length, $0.baseAddress!.assumingMemoryBound(to: UInt8.self), 32)
        } == 1
        precondition(signed, "EVP_PKEY_sign failed")
        return Array(der.prefix(length))
    }

    /// An ES256 signature (r‖s, 64 bytes) of `digest` by EVP_PKEY_sign.
    func sign(_ digest: SHA256Digest) -> [UInt8] {
        let der = signDER(digest)
        return der.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            let signature = d2i_ECDSA_SIG(nil, &cursor, der.count)
            defer { ECDSA_SIG_free(signature) }
            var raw = [UInt8](repeating: 0, count: 64)
            _ = BN_bn2binpad(ECDSA_SIG_get0_r(signature), &raw, 32)
            raw.withUnsafeMutableBufferPointer {
                _ = BN_bn2binpad(ECDSA_SIG_get0_s(signature), $0.baseAddress! + 32, 32)
            }
            return raw
        }
    }
}

/// `EVP_PKEY_Q_keygen(NULL, NULL, "EC", curve)` without the C variadic call Swift cannot make.
private func EVP_PKEY_Q_keygen_ec(_ curve: String) -> OpaquePointer? {
    let context = EVP_PKEY_CTX_new_from_name(nil, "EC", nil)
    defer { EVP_PKEY_CTX_free(context) }
    var key: OpaquePointer?
    guard EVP_PKEY_keygen_init(context) == 1,
          EVP_PKEY_CTX_set_group_name(context, curve) == 1,
          EVP_PKEY_generate(context, &key) == 1 else { return nil }
    return key
}
