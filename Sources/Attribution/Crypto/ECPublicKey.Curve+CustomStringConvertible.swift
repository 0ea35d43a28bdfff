extension ECPublicKey.Curve: CustomStringConvertible {
    /// The curve's NIST name, `P-256` or `P-192`, as messages and JWK `crv` write it.
    public var description: String { rawValue }
}
