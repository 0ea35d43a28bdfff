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

/// Where a trusted key comes from, reported in every result (`environment`).
public enum KeyEnvironment: String, Sendable, Hashable, CaseIterable, ExactlySpelled {
    package static let spellings = makeSpellings()

    /// Apple's production postback key (`apple-cas-identifier/0`).
    case production
    /// One of Apple's development keys: any device in developer mode can mint such a postback for any app.
    case development
    /// A key the user supplied (`--key KID=PATH`): an ad network's impression key, or a new Apple kid.
    case custom
}
