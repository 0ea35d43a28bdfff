extension FastPostbackPath {
    /// A compact JWS split at its two dots, each segment non-empty, the signing input as received.
    struct JWSParts {
        let header: ByteCursor
        let payload: ByteCursor
        let signature: ByteCursor
        /// The header segment, the dot and the payload segment, as received (RFC 7515 §5.2 step 8).
        let signingInput: ByteCursor

        /// Nil unless exactly two dots split `token` into three non-empty segments.
        init?(_ token: ByteCursor) {
            let dot = UInt8(ascii: ".")
            guard let first = token.firstIndex(of: dot),
                  let second = token.firstIndex(of: dot, from: first + 1),
                  token.firstIndex(of: dot, from: second + 1) == nil,
                  first > 0, second > first + 1, second + 1 < token.count else { return nil }
            header = token.span(upTo: first)
            payload = token.span((first + 1)..<second)
            signature = token.span(from: second + 1)
            signingInput = token.span(upTo: second)
        }
    }
}
