/// A key the key ring trusts, with the environment every result verified by it reports.
public struct TrustedKey: Sendable, Hashable {
    public let keyID: String
    public let key: ECPublicKey
    public let environment: KeyEnvironment

    public init(keyID: String, key: ECPublicKey, environment: KeyEnvironment) {
        self.keyID = keyID
        self.key = key
        self.environment = environment
    }
}
