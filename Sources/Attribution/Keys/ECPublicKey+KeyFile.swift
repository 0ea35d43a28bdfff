import Foundation

extension ECPublicKey {
    /// The public key in a key file's bytes: PEM (`-----BEGIN PUBLIC KEY-----`) or DER SubjectPublicKeyInfo, refused
    /// unless it is an EC public key on `curve` (spec section 3: a bad key file is refused when loaded, not later).
    public init(keyFileContents bytes: [UInt8], curve: Curve = .p256) throws(AttributionError) {
        if let text = String(bytes: bytes, encoding: .utf8), text.contains("-----BEGIN") {
            try self.init(pemRepresentation: text, curve: curve)
        } else {
            try self.init(derRepresentation: bytes, curve: curve)
        }
    }

    /// The public key in the key file at `path` (see ``init(keyFileContents:curve:)``).
    public init(keyFile path: String, curve: Curve = .p256) throws(AttributionError) {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw AttributionError(.invalidKey, rule: .j3, "cannot read the key file")
        }
        try self.init(keyFileContents: [UInt8](data), curve: curve)
    }
}
