/// The keys a verifier trusts, by `kid`. Keys never come from the token itself (`jwk`, `jku`, `x5c`, `x5u` are
/// ignored), an unknown `kid` is a rejection, and Apple's development keys are trusted only when asked for.
///
/// Immutable once built and `Sendable`: one ring is shared by every worker thread.
public struct KeyRing: Sendable {
    private var keys: [ExactString: TrustedKey]
    /// Whether Apple's development kids are trusted (rule J4); they are always *known* (rule J3).
    public let allowsDevelopmentKeys: Bool
    /// The keys SKAdNetwork postbacks are verified with (not looked up by kid): Apple's unless replaced with
    /// ``replaceSKAdNetworkKey(with:)`` for testing.
    var skAdNetworkKeys: SKAdNetworkKeys = .apple

    /// Apple's production key, plus Apple's development keys when `allowingDevelopmentKeys` is true.
    /// - Parameter allowingDevelopmentKeys: also trust Apple's development kids (never on production traffic).
    public init(allowingDevelopmentKeys: Bool = false) {
        self.allowsDevelopmentKeys = allowingDevelopmentKeys
        var keys: [ExactString: TrustedKey] = [:]
        for published in ApplePublishedKey.all {
            keys[ExactString(published.keyID)] = TrustedKey(
                keyID: published.keyID, key: published.publicKey, environment: published.environment)
        }
        self.keys = keys
    }

    /// Trusts `key` for `keyID` (environment `custom`): an ad network's impression key, or a new Apple kid.
    ///
    /// Refuses to replace one of Apple's published kids: a typo must not silently swap out Apple's key.
    /// - Parameters:
    ///   - key: the P-256 public key.
    ///   - keyID: the kid tokens signed with it name.
    /// - Throws: ``AttributionError`` with code `invalid-key` for an empty kid, a key not on P-256, one of Apple's
    ///   kids, or a kid already given a different key.
    public mutating func add(_ key: ECPublicKey, keyID: String) throws(AttributionError) {
        guard !keyID.isEmpty else {
            throw AttributionError(.invalidKey, "a key ID must not be empty")
        }
        guard key.curve == .p256 else {
            throw AttributionError(.invalidKey, "key for \(keyID) is not a P-256 key")
        }
        if ApplePublishedKey.all.contains(where: { $0.keyID.isExactlyEqual(to: keyID) }) {
            throw AttributionError(.invalidKey, "\(keyID) is one of Apple's built-in keys")
        }
        if let existing = keys[ExactString(keyID)], existing.key != key {
            throw AttributionError(.invalidKey, "two different keys given for \(keyID)")
        }
        keys[ExactString(keyID)] = TrustedKey(keyID: keyID, key: key, environment: .custom)
    }

    /// Every key ``trustedKey(for:)`` accepts: Apple's production key, the added keys, and Apple's development keys
    /// only when they are allowed.
    var trustedKeys: [TrustedKey] {
        keys.values.filter { $0.environment != .development || allowsDevelopmentKeys }
    }

    /// The key for a header `kid`, or the error that rejects it (J3 unknown, J4 untrusted development key).
    func trustedKey(for keyID: String) -> Result<TrustedKey, AttributionError> {
        guard let trusted = keys[ExactString(keyID)] else {
            return .failure(AttributionError(.j3, Self.unknownKeyReason(keyID)))
        }
        if trusted.environment == .development && !allowsDevelopmentKeys {
            return .failure(AttributionError(.j4, "\(keyID) is Apple's development key, which any device in developer "
                + "mode signs with: production traffic must not trust it"))
        }
        return .success(trusted)
    }
}

extension KeyRing {
    /// The test-only kids that sign this repository's fixtures (Fixtures/README.md), each with its public key file
    /// from the repository's root. Only named in the unknown-key message, so that someone running the fixtures
    /// finds the option that trusts them; never trusted unless given with `--key`, like any other kid.
    static let fixtureKeyFiles: [(keyID: String, path: String)] = [
        ("fixture.adattributionkit", "Fixtures/keys/fixture.adattributionkit.pem"),
        ("fixture-apple-identifier/0", "Fixtures/keys/fixture-apple-identifier-0.pem"),
    ]

    /// Why an unknown kid is refused, and the option that trusts a key of one's own: for a fixture kid, with the
    /// fixture's key file.
    static func unknownKeyReason(_ keyID: String) -> String {
        let refusal = "no trusted key has kid \(JSONValue.quoted(keyID))"
        if let fixture = fixtureKeyFiles.first(where: { $0.keyID.isExactlyEqual(to: keyID) }) {
            return refusal + "; it is this repository's test-only fixture kid: to check the fixtures, trust its "
                + "key with --key \(fixture.keyID)=\(fixture.path) (from the repository's root; never on "
                + "production traffic)"
        }
        return refusal + "; if Apple published this kid, or it is your own impression key, load its public key "
            + "with --key KID=PATH"
    }

    /// Replaces the SKAdNetwork key on `key`'s curve (P-256 for 2.1 and later, P-192 for 1.0 and 2.0) with
    /// `key`; results it verifies report environment `custom`. For testing your own signing only: genuine
    /// SKAdNetwork postbacks verify only with Apple's keys.
    /// - Parameter key: the replacement key, on P-256 or P-192.
    public mutating func replaceSKAdNetworkKey(with key: ECPublicKey) {
        skAdNetworkKeys = skAdNetworkKeys.replacing(with: key)
    }
}
