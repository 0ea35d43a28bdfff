/// Marks repeated postbacks as duplicates (rule D1), in input order.
///
/// Only items whose verdict is valid count as seen, so a forged or broken item carrying a genuine postback's
/// identifier can never make the genuine one look like a duplicate. Memory grows with the number of distinct
/// valid postbacks, nothing else.
public struct Deduplicator: Sendable {
    private var seen: [String: DuplicateReference] = [:]

    public init() {}

    /// How many distinct valid postbacks have been seen.
    public var count: Int { seen.count }

    /// Applies D1 to `result`, the item at `source`:`line`, which must come after every item already applied.
    public mutating func apply(to result: inout VerificationResult, source: String, line: Int) {
        guard result.verdict == .valid, let key = result.deduplicationKey else { return }
        if let first = seen[key] {
            result.duplicateOf = first
            let what = result.skAdNetwork.map {
                "transaction-id \($0.transactionID) at postback-sequence-index \($0.postbackSequenceIndex ?? 0)"
            } ?? "postback-identifier \(key)"
            result.errors.append(.error(
                .duplicate, "D1", "\(what) was already seen valid at \(first.source):\(first.line)"))
        } else {
            seen[key] = DuplicateReference(source: source, line: line)
        }
    }
}
