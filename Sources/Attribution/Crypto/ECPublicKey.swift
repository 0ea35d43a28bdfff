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
    public init(derRepresentation: some Collection<UInt8>, curve: Curve = .p256) throws(AttributionError) {
        let der = Array(derRepresentation)
        let evpKey = try EVPPublicKey(subjectPublicKeyInfo: der)
        guard evpKey.isEllipticCurve else {
            throw AttributionError(.invalidKey, rule: .j3, "an \(evpKey.typeName) key, not an EC \(curve) key")
        }
        guard let curveName = evpKey.curveName else {
            throw AttributionError(.invalidKey, rule: .j3, "an EC key with explicit parameters, not named \(curve)")
        }
        guard curveName == curve.libcryptoName else {
            let found = [Curve.p256, .p192].first { $0.libcryptoName == curveName }?.rawValue ?? curveName
            throw AttributionError(.invalidKey, rule: .j3, "an EC key on \(found), not on \(curve)")
        }
        // Any other encoding of the same key (BER lengths, a compressed point) would make two unequal values of
        // one key and could hide bytes libcrypto skips over; the point must be the one libcrypto decoded.
        let uncompressedPointCount = 1 + 2 * curve.coordinateByteCount
        guard let point = evpKey.encodedPoint, point.count == uncompressedPointCount, point.first == 0x04,
              der == curve.subjectPublicKeyInfoPrefix + point else {
            throw AttributionError(
                .invalidKey, rule: .j3,
                "not the DER form of a named-curve \(curve) key with an uncompressed point "
                    + "(BER lengths, explicit curve parameters or a compressed point)"
            )
        }
        self.curve = curve
        self.derRepresentation = der
        self.evpKey = evpKey
    }
}
