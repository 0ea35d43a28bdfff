/// Marks repeated postbacks as duplicates (rule D1), in input order.
///
/// Only items whose verdict is valid count as seen, so a forged or broken item carrying a genuine postback's
/// identifier can never make the genuine one look like a duplicate. Memory grows with the number of distinct
/// valid postbacks, nothing else.
public struct Deduplicator: Sendable {
    /// Keyed by code points: two ids equal only under Unicode canonical equivalence are two postbacks (spec §2).
    private var seen: [ExactString: DuplicateReference] = [:]

    public init() {}

    /// How many distinct valid postbacks have been seen.
    public var count: Int { seen.count }

    /// Applies D1 to `result`, the item at `source`:`line`, which must come after every item already applied.
    public mutating func apply(to result: inout VerificationResult, source: String, line: Int) {
        guard result.verdict == .valid, let key = result.deduplicationKey else { return }
        if let first = firstSeen(key, source: source, line: line) {
            result.duplicateOf = first
            let what = result.skAdNetwork.map {
                "transaction-id \($0.transactionID) at postback-sequence-index \($0.postbackSequenceIndex ?? 0)"
            } ?? "postback-identifier \(key)"
            result.errors.append(Finding(.d1, "\(what) was already seen valid at \(first.source):\(first.line)"))
        }
    }

    /// The first valid item with this key, when there was one; otherwise records the valid item at
    /// `source`:`line` as the first and returns nil. For callers that know an item is valid without a
    /// ``VerificationResult`` (``FastPostbackPath``); a non-nil answer means the item is a duplicate.
    public mutating func firstSeen(_ key: String, source: String, line: Int) -> DuplicateReference? {
        let key = ExactString(key)
        if let first = seen[key] { return first }
        seen[key] = DuplicateReference(source: source, line: line)
        return nil
    }
}
