/// One ES256 signature to check in a batch (``ECPublicKey/areValidES256Signatures(_:)``): a key, the raw
/// signature (64 bytes r‖s) and the SHA-256 of the JWS signing input.
public struct ES256SignatureCheck: Sendable {
    public let key: ECPublicKey
    public let signature: [UInt8]
    public let digest: SHA256Digest

    public init(key: ECPublicKey, signature: [UInt8], digest: SHA256Digest) {
        self.key = key
        self.signature = signature
        self.digest = digest
    }
}
