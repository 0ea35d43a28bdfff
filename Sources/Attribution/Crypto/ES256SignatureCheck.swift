/// One ES256 signature to check in a batch (``ECPublicKey/areValidES256Signatures(_:)``): a key, the raw
/// signature (64 bytes r‖s) and the SHA-256 of the JWS signing input.
struct ES256SignatureCheck: Sendable {
    let key: ECPublicKey
    let signature: [UInt8]
    let digest: SHA256Digest
}

extension ES256SignatureCheck {
    /// True when `other` checks the same signature bytes over the same digest with the same key (its DER form).
    func isSameCheck(as other: ES256SignatureCheck) -> Bool {
        digest == other.digest && signature == other.signature && key == other.key
    }
}
