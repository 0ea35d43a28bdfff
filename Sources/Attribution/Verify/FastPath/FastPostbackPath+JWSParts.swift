extension FastPostbackPath {
    /// A compact JWS split at its two dots, each segment non-empty, the signing input as received.
    struct JWSParts {
        let header: UnsafeBufferPointer<UInt8>
        let payload: UnsafeBufferPointer<UInt8>
        let signature: UnsafeBufferPointer<UInt8>
        /// The header segment, the dot and the payload segment, as received (RFC 7515 §5.2 step 8).
        let signingInput: UnsafeBufferPointer<UInt8>

        /// Nil unless exactly two dots split `token` into three non-empty segments.
        init?(_ token: UnsafeBufferPointer<UInt8>) {
            let dot = UInt8(ascii: ".")
            guard let first = RawBytes.firstIndex(of: dot, in: token, from: 0),
                  let second = RawBytes.firstIndex(of: dot, in: token, from: first + 1),
                  RawBytes.firstIndex(of: dot, in: token, from: second + 1) == nil,
                  first > 0, second > first + 1, second + 1 < token.count else { return nil }
            header = UnsafeBufferPointer(rebasing: token[..<first])
            payload = UnsafeBufferPointer(rebasing: token[(first + 1)..<second])
            signature = UnsafeBufferPointer(rebasing: token[(second + 1)...])
            signingInput = UnsafeBufferPointer(rebasing: token[..<second])
        }
    }
}
