@_spi(CommandLine) import Attribution

/// What the pipeline carries: a batch of items, with the paths that could not be read while it was read (reported
/// when the batch is written, so messages follow the records they came with).
struct ReadBatch: Sendable {
    let batch: VerifiedBatch
    let failures: [InputFailure]
}

/// Which threads run which verification steps.
///
/// `--jobs N` is the number of worker threads, and the workers always run the signature step (the ECDSA, most
/// of an item's cost). When there are more cores than workers, the cheap steps move off them: the reader
/// thread also prepares items (JSON, base64url, header, key, digest; on the fast path also payload, rules and the
/// record) and the writer thread also completes the general path's items (payload, rules) and renders records, so
/// `--jobs 1` keeps one core on ECDSA alone. When every core has a
/// worker, the workers do every step, so no single thread becomes the bottleneck.
enum StageLayout {
    /// Reader prepares, workers check signatures, writer completes and renders.
    case split
    /// Workers prepare, check, complete and render; reader and writer only read and write.
    case workers

    init(jobs: Int, cores: Int) {
        self = jobs < cores ? .split : .workers
    }
}
