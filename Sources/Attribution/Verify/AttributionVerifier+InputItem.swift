extension AttributionVerifier {
    /// Verifies one item read by the command line's reader; an oversized item (never buffered) gets its J1 result.
    @_spi(CommandLine) @_spi(Stores) public func verify(_ item: InputItem) -> VerificationResult {
        var prepared = prepare(item)
        checkSignature(&prepared)
        return complete(prepared)
    }

    /// Step 1 of ``verify(_:)-(InputItem)`` (see ``prepare(_:)-(ArraySlice<UInt8>)``).
    func prepare(_ item: InputItem) -> PreparedItem {
        switch item.content {
        case .refused(let reason):
            var prepared = PreparedItem()
            prepared.findings.append(Finding(.j1, reason))
            return prepared
        case .bytes(let bytes):
            return prepare(bytes)
        case .oversized(let byteCount):
            var prepared = PreparedItem()
            prepared.findings.append(Self.oversized(byteCount: byteCount))
            return prepared
        }
    }

    /// Verifies an item whose ES256 signature a caller has already checked and found invalid (``rejected``: the
    /// fast path's check of the same bytes): the general path finds and words the item's findings without a
    /// second ECDSA, so a forged postback costs one signature check, never two. Should the general path arrive at
    /// a different check (another key, signature or digest: it never does for the same bytes), it runs that one.
    func verify(_ item: InputItem, rejected: ES256SignatureCheck) -> VerificationResult {
        var prepared = prepare(item)
        if let pending = prepared.pendingES256Check, pending.isSameCheck(as: rejected) {
            prepared.jws?.settleSignatureCheck(valid: false)
        } else {
            checkSignature(&prepared)
        }
        return complete(prepared)
    }
}
