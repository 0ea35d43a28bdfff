/// What an input item turned out to be, as the contract's `kind` member names it.
public enum ItemKind: String, Sendable, Hashable {
    /// An AdAttributionKit postback: a body with `jws-string`, or a bare postback JWS.
    case postback
    /// An ad network's impression JWS (payload has `impression-identifier`, no `postback-identifier`).
    case impression
    /// A legacy SKAdNetwork postback body (has `attribution-signature`).
    case skadnetwork
    /// Not recognisable as any of the above.
    case unknown
}
