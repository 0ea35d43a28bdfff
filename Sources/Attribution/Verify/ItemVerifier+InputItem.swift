extension ItemVerifier {
    /// Verifies one item read by the command line's reader; an oversized item (never buffered) gets its J1 result.
    package func verify(_ item: InputItem) -> VerificationResult {
        var prepared = prepare(item)
        checkSignature(&prepared)
        return complete(prepared)
    }

    /// Step 1 of ``verify(_:)-(InputItem)`` (see ``prepare(_:)-(ArraySlice<UInt8>)``).
    package func prepare(_ item: InputItem) -> PreparedItem {
        switch item.content {
        case .refused(let reason):
            var prepared = PreparedItem()
            prepared.findings.append(Finding(.j1, reason))
            return prepared
        case .bytes(let bytes):
            return prepare(bytes)
        case .oversized(let byteCount):
            var prepared = PreparedItem()
            prepared.findings.append(Finding(.j1,
                "the item is \(byteCount) bytes, over the limit of \(Self.maximumItemBytes)"))
            return prepared
        }
    }
}
