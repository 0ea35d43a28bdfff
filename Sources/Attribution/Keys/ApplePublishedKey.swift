/// One of the postback-signing keys Apple publishes, by `kid` [Apple: "Verifying a postback"].
struct ApplePublishedKey: Sendable, Hashable {
    /// The JWS header `kid` that names this key.
    let keyID: String
    /// Production or development.
    let environment: KeyEnvironment
    /// The SubjectPublicKeyInfo DER, base64, exactly as Apple prints it.
    let base64DER: String

    /// Apple's production key: the only one trusted by default.
    static let production = ApplePublishedKey(
        keyID: "apple-cas-identifier/0",
        environment: .production,
        base64DER: "MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEWdp8GPcGqmhgzEFj9Z2nSpQVddayaPe4FMzqM9wib1"
            + "+aHaaIzoHoLN9zW4K8y4SPykE3YVK3sVqW6Af0lfx3gg=="
    )

    /// Apple's development key for end-to-end test flows.
    static let development0 = ApplePublishedKey(
        keyID: "apple-development-identifier/0",
        environment: .development,
        base64DER: "MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAELeEDzpJEP+/qRSE5hJVC1p1J0ssUnQGMzBBbvnACBok8"
            + "OVGGLgxL0myrKiy6lvRtSlLRsWit87i+vftD8AEqeQ=="
    )

    /// Apple's development key for postbacks made in a device's developer settings.
    static let development1 = ApplePublishedKey(
        keyID: "apple-development-identifier/1",
        environment: .development,
        base64DER: "MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE8YzdO7eM97s/IJ25kdW5CZ3A14USE5IJ5Ha/vhWaxI6U"
            + "BI1ZxCEvjrKxVluVGe6qWwF1BDFq+QHqKfH5u+wxHQ=="
    )

    /// All of Apple's published AdAttributionKit keys.
    static let all: [ApplePublishedKey] = [production, development0, development1]

    /// The key as a verifier can use it. The bytes are a compile-time constant, loaded without the checks of
    /// ``ECPublicKey/init(derRepresentation:curve:)`` and decoded by libcrypto on first use (`ECPublicKeyTests`
    /// loads every published key through those checks).
    var publicKey: ECPublicKey {
        do {
            return ECPublicKey(validated: try Base64.decode(Array(base64DER.utf8)), curve: .p256)
        } catch {
            preconditionFailure("Apple's published key \(keyID) is not base64: \(error)")
        }
    }
}
