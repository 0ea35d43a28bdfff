/// A key the key ring trusts, with the environment every result verified by it reports.
package struct TrustedKey: Sendable, Hashable {
    package let keyID: String
    package let key: ECPublicKey
    package let environment: KeyEnvironment

    package init(keyID: String, key: ECPublicKey, environment: KeyEnvironment) {
        self.keyID = keyID
        self.key = key
        self.environment = environment
    }
}
