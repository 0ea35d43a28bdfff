import Attribution

/// What the pipeline carries: a batch of items, with the paths that could not be read while it was read (reported
/// when the batch is written, so messages follow the records they came with).
struct ReadBatch: Sendable {
    let batch: VerifiedBatch
    let failures: [InputFailure]
}
