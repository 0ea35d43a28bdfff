/// An elliptic-curve public key on one NIST curve, that verifies ES256 JWS and SKAdNetwork signatures.
///
/// Refused when loaded unless it is an EC public key on exactly the asked curve in strict DER form, so a wrong
/// key file fails at start-up rather than as "bad signature" on every postback (spec section 3). Equal and
/// hashed on ``derRepresentation``, which names the curve, so two values are equal when they hold the same key.
public struct ECPublicKey: Sendable {
    /// The curve the key is on.
    public let curve: Curve

    /// The key as a DER SubjectPublicKeyInfo (RFC 5480 §2) with the point uncompressed, as Apple publishes it.
    public let derRepresentation: [UInt8]

    /// The libcrypto key the signatures are checked with.
    let evpKey: EVPPublicKey

    /// Loads a DER SubjectPublicKeyInfo (RFC 5480 §2), e.g. Apple's base64-decoded key from "Verifying a postback".
    ///
    /// Throws `invalid-key` (J3) for anything but an EC public key on `curve` (RSA, Ed25519, P-384, P-256 when
    /// P-192 is asked...), bytes after the DER, and encodings other than the one DER form with a named curve and
    /// an uncompressed point (BER lengths, explicit curve parameters, a compressed point).
    ///
    /// A P-256 key in that one form is checked here without libcrypto (the bytes are the form's, the coordinates
    /// below p, the point on the curve: what libcrypto's decoding and the checks below would accept) and decoded
    /// by libcrypto only when first used (`EVPPublicKey`); anything else is decoded now, which names what it is.
    /// - Parameters:
    ///   - derRepresentation: the DER SubjectPublicKeyInfo bytes.
    ///   - curve: the curve the key must be on; P-256 by default.
    /// - Throws: ``AttributionError`` with code `invalid-key` (rule J3) for anything else, saying what it is.
    public init(derRepresentation: some Collection<UInt8>, curve: Curve = .p256) throws(AttributionError) {
        let der = Array(derRepresentation)
        self.curve = curve
        self.derRepresentation = der
        if curve == .p256, Self.isValidP256SubjectPublicKeyInfo(der) {
            self.evpKey = EVPPublicKey(validatedSubjectPublicKeyInfo: der)
            return
        }
        let evpKey = try EVPPublicKey(subjectPublicKeyInfo: der)
        guard evpKey.isEllipticCurve else {
            throw AttributionError(.invalidKey, "an \(evpKey.typeName) key, not an EC \(curve) key")
        }
        guard let curveName = evpKey.curveName else {
            throw AttributionError(.invalidKey, "an EC key with explicit parameters, not named \(curve)")
        }
        guard curveName == curve.libcryptoName else {
            let found = [Curve.p256, .p192].first { $0.libcryptoName == curveName }?.rawValue ?? curveName
            throw AttributionError(.invalidKey, "an EC key on \(found), not on \(curve)")
        }
        // Any other encoding of the same key (BER lengths, a compressed point) would make two unequal values of
        // one key and could hide bytes libcrypto skips over; the point must be the one libcrypto decoded.
        let uncompressedPointCount = 1 + 2 * curve.coordinateByteCount
        guard let point = evpKey.encodedPoint, point.count == uncompressedPointCount, point.first == 0x04,
              der == curve.subjectPublicKeyInfoPrefix + point else {
            throw AttributionError(
                .invalidKey,
                "not the DER form of a named-curve \(curve) key with an uncompressed point "
                    + "(BER lengths, explicit curve parameters or a compressed point)"
            )
        }
        self.evpKey = evpKey
    }

    /// A key whose DER form is known to be valid on `curve` (checked by the caller, or one of Apple's published
    /// keys, which tests load through the checks), decoded by libcrypto on first use.
    init(validated der: [UInt8], curve: Curve) {
        self.curve = curve
        self.derRepresentation = der
        self.evpKey = EVPPublicKey(validatedSubjectPublicKeyInfo: der)
    }

    /// Whether `der` is the DER SubjectPublicKeyInfo of a P-256 point in the one form ``init(derRepresentation:curve:)``
    /// accepts: the named-curve prefix, then `04 || x || y` with x and y below p and y² = x³ − 3x + b.
    static func isValidP256SubjectPublicKeyInfo(_ der: [UInt8]) -> Bool {
        let prefix = Curve.p256.subjectPublicKeyInfoPrefix
        return der.count == prefix.count + 65 && der.starts(with: prefix)
            && P256Field.affinePoint(uncompressed: der[prefix.count...]) != nil
    }
}

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

extension ECPublicKey.Curve: CustomStringConvertible {
    /// The curve's NIST name, `P-256` or `P-192`, as messages and JWK `crv` write it.
    public var description: String { rawValue }
}

extension ECPublicKey: Hashable {
    /// Two keys are equal when their DER SubjectPublicKeyInfo bytes are, which also compares their curves.
    /// - Parameters:
    ///   - lhs: a key.
    ///   - rhs: another key.
    /// - Returns: true when both hold the same DER bytes.
    public static func == (lhs: ECPublicKey, rhs: ECPublicKey) -> Bool {
        lhs.derRepresentation == rhs.derRepresentation
    }

    /// Hashes the DER SubjectPublicKeyInfo bytes, consistent with `==`.
    /// - Parameter hasher: the hasher to feed the DER bytes.
    public func hash(into hasher: inout Hasher) {
        derRepresentation.withUnsafeBytes { hasher.combine(bytes: $0) }
    }
}
