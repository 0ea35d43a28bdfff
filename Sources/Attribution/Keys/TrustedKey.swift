/// A key the key ring trusts, with the environment every result verified by it reports.
struct TrustedKey: Sendable, Hashable {
    let keyID: String
    let key: ECPublicKey
    let environment: KeyEnvironment
}

/// Where a trusted key comes from, reported in every result (`environment`).
public enum KeyEnvironment: String, Sendable, Hashable, CaseIterable, ExactlySpelled {
    @_spi(CommandLine) @_spi(Stores) public static let spellings = makeSpellings()

    /// Apple's production postback key (`apple-cas-identifier/0`).
    case production
    /// One of Apple's development keys: any device in developer mode can mint such a postback for any app.
    case development
    /// A key the user supplied (`--key KID=PATH`): an ad network's impression key, or a new Apple kid.
    case custom
}
