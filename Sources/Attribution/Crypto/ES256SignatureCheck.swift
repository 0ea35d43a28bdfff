/// One ES256 signature to check in a batch (``ECPublicKey/areValidES256Signatures(_:)``): a key, the raw
/// signature (64 bytes r‖s) and the SHA-256 of the JWS signing input.
package struct ES256SignatureCheck: Sendable {
    package let key: ECPublicKey
    package let signature: [UInt8]
    package let digest: SHA256Digest

    package init(key: ECPublicKey, signature: [UInt8], digest: SHA256Digest) {
        self.key = key
        self.signature = signature
        self.digest = digest
    }
}

extension ES256SignatureCheck {
    /// True when `other` checks the same signature bytes over the same digest with the same key (its DER form).
    package func isSameCheck(as other: ES256SignatureCheck) -> Bool {
        digest == other.digest && signature == other.signature && key == other.key
    }
}
