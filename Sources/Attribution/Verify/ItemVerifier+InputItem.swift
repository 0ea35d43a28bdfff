extension ItemVerifier {
    /// Verifies one item read by ``InputReader``; an oversized item (never buffered) gets its J1 result.
    public func verify(_ item: InputItem) -> VerificationResult {
        switch item.content {
        case .bytes(let bytes): verify(bytes)
        case .oversized(let byteCount): oversizedItem(byteCount: byteCount)
        }
    }
}
