extension ECPublicKey {
    /// Loads a PEM `PUBLIC KEY` block (RFC 7468 §13), as `openssl ec -pubout` writes it.
    ///
    /// The text must hold exactly one PEM block; the DER inside is held to the rules of
    /// ``init(derRepresentation:curve:)``. A private key is refused: a verifier never needs one.
    /// - Parameters:
    ///   - pemRepresentation: the PEM text, one `PUBLIC KEY` block.
    ///   - curve: the curve the key must be on; P-256 by default.
    /// - Throws: ``AttributionError`` with code `invalid-key` for text that is not one PEM public key on `curve`
    ///   (a private key or a certificate is named, with the command that gives its public key).
    public init(pemRepresentation: String, curve: Curve = .p256) throws(AttributionError) {
        let block = try PEMBlock(parsing: pemRepresentation)
        guard block.label.utf8.elementsEqual("PUBLIC KEY".utf8) else {
            let reason = block.label.hasSuffix("PRIVATE KEY")
                ? "a private key (\(block.label)); give the public key (`openssl pkey -pubout`)"
                : block.label.utf8.elementsEqual("CERTIFICATE".utf8)
                    ? "a certificate; give its public key (`openssl x509 -pubkey -noout -in FILE`)"
                    : "a PEM \(block.label) block, not PUBLIC KEY"
            throw AttributionError(.invalidKey, reason)
        }
        try self.init(derRepresentation: block.der, curve: curve)
    }
}
