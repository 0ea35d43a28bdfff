extension SKAdNetworkField {
    /// The JSON type of a signed SKAdNetwork member, which also decides how it is written in the signed string.
    package enum ValueType: String, Sendable, Hashable {
        /// Written as received, after JSON unescaping.
        case string
        /// A plain non-negative JSON integer up to 2^64-1, written in decimal.
        case integer
        /// Written `true` or `false`.
        case boolean
    }
}
