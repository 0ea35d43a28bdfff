import Attribution

/// A batch of items with their results and rendered records, as the workers hand it to the writer.
struct VerifiedBatch: Sendable {
    var items: [InputItem]
    var results: [VerificationResult]
    /// Each record rendered as if the item were not a duplicate; the writer re-renders the rare duplicate.
    var records: [[UInt8]]
    /// Paths that could not be read while this batch was being read.
    var failures: [InputFailure]
}
