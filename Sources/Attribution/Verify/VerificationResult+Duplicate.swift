/// Rule D1's finding, worded once for every deduplication (in memory, SQLite state, or a store of your own).
extension VerificationResult {
    /// Makes this valid result a `duplicate` of `first`: sets ``duplicateOf`` and adds the D1 error.
    package mutating func markDuplicate(of first: DuplicateReference) {
        duplicateOf = first
        let what = skAdNetwork.map {
            "transaction-id \($0.transactionID) at postback-sequence-index \($0.postbackSequenceIndex ?? 0)"
        } ?? "postback-identifier \(deduplicationKey ?? "")"
        let when = first.firstSeen.map { " (first seen by the run started \(RFC3339Timestamp.string($0)))" } ?? ""
        errors.append(Finding(.d1, "\(what) was already seen valid at \(first.source):\(first.line)\(when)"))
    }
}
