extension ECPublicKey {
    /// The NIST prime curves a postback key may be on: P-256 for AdAttributionKit and SKAdNetwork 2.1 and later,
    /// P-192 for SKAdNetwork 1.0 and 2.0 (Apple, "Verifying an install-validation postback").
    public enum Curve: String, Sendable {
        /// NIST P-256 (secp256r1, prime256v1): ES256 (RFC 7518 §3.4).
        case p256 = "P-256"
        /// NIST P-192 (secp192r1, prime192v1): Apple's first SKAdNetwork key only.
        case p192 = "P-192"
    }
}

extension ECPublicKey.Curve {
    /// libcrypto's short name for the curve, as `EVP_PKEY_get_group_name` reports it.
    var libcryptoName: String {
        switch self {
        case .p256: "prime256v1"
        case .p192: "prime192v1"
        }
    }

    /// Bytes in one coordinate (and in r or s of a signature): the field size rounded up to bytes (SEC1 §2.3.5).
    var coordinateByteCount: Int {
        switch self {
        case .p256: 32
        case .p192: 24
        }
    }

    /// The DER of a SubjectPublicKeyInfo up to the point (RFC 5480 §2: id-ecPublicKey with this named curve,
    /// then the BIT STRING header); the uncompressed point `04 || x || y` completes it.
    var subjectPublicKeyInfoPrefix: [UInt8] {
        switch self {
        case .p256:
            [0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x02, 0x01,
             0x06, 0x08, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x03, 0x01, 0x07, 0x03, 0x42, 0x00]
        case .p192:
            [0x30, 0x49, 0x30, 0x13, 0x06, 0x07, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x02, 0x01,
             0x06, 0x08, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x03, 0x01, 0x01, 0x03, 0x32, 0x00]
        }
    }
}
