/// The two keys SKAdNetwork postbacks are verified with, one per curve (spec §3), with the key IDs results
/// report: `skadnetwork-p256` (versions 2.1 and later) and `skadnetwork-p192` (1.0 and 2.0).
///
/// ``apple`` holds Apple's keys and is what every ``KeyRing`` starts with. A key can be replaced for testing your
/// own signing (``replacing(with:)``); results verified by a replaced key report environment `custom`.
struct SKAdNetworkKeys: Sendable, Hashable {
    /// The key ID results report for the P-256 key.
    static let p256KeyID = "skadnetwork-p256"
    /// The key ID results report for the P-192 key.
    static let p192KeyID = "skadnetwork-p192"

    /// Apple's SKAdNetwork 1.0 and 2.0 key, base64 DER SubjectPublicKeyInfo on P-192, as Apple prints it
    /// [Apple: "Verifying an install-validation postback"].
    static let appleP192Base64DER = "MEkwEwYHKoZIzj0CAQYIKoZIzj0DAQEDMgAEMyHD625uvsmGq4C43cQ9BnfN2xslVT5V1nOm"
        + "AMP6qaRRUll3PB1JYmgSm+62sosG"

    /// Apple's keys, loaded once: P-256 byte-identical to `apple-cas-identifier/0` (Apple publishes the same key
    /// for SKAdNetwork 2.1 and later), and the P-192 key. Environment `production`.
    static let apple: SKAdNetworkKeys = {
        // Loaded without libcrypto's decoding until first used, as Apple's other keys (`ECPublicKeyTests` loads it
        // through every check).
        let p192: ECPublicKey
        do {
            p192 = ECPublicKey(validated: try Base64.decode(Array(appleP192Base64DER.utf8)), curve: .p192)
        } catch {
            preconditionFailure("Apple's SKAdNetwork P-192 key is not base64: \(error)")
        }
        return SKAdNetworkKeys(
            p256: TrustedKey(keyID: p256KeyID, key: ApplePublishedKey.production.publicKey, environment: .production),
            p192: TrustedKey(keyID: p192KeyID, key: p192, environment: .production))
    }()

    /// The key for versions 2.1 and later.
    let p256: TrustedKey
    /// The key for versions 1.0 and 2.0.
    let p192: TrustedKey

    /// Two keys, each on its curve: only ``apple`` and ``replacing(with:)`` make them, so that always holds.
    init(p256: TrustedKey, p192: TrustedKey) {
        precondition(p256.key.curve == .p256 && p192.key.curve == .p192, "SKAdNetwork keys on the wrong curves")
        self.p256 = p256
        self.p192 = p192
    }

    /// These keys with the one on `key`'s curve replaced by `key` (environment `custom`), for verifying
    /// postbacks you signed yourself: Apple's private keys are not available to tests.
    func replacing(with key: ECPublicKey) -> SKAdNetworkKeys {
        switch key.curve {
        case .p256:
            SKAdNetworkKeys(p256: TrustedKey(keyID: Self.p256KeyID, key: key, environment: .custom), p192: p192)
        case .p192:
            SKAdNetworkKeys(p256: p256, p192: TrustedKey(keyID: Self.p192KeyID, key: key, environment: .custom))
        }
    }

    /// The key that signs postbacks of `version`.
    func key(for version: SKAdNetworkVersion) -> TrustedKey {
        switch version.curve {
        case .p256: p256
        case .p192: p192
        }
    }
}
