@_spi(CommandLine) import Attribution

/// Hands the input reader to the pipeline's producer thread.
///
/// `@unchecked Sendable`: the reader is used by one thread at a time: only the producer thread while the
/// pipeline runs, and the main thread after it has ended.
final class ReaderHandle: @unchecked Sendable {
    let reader: InputReader
    private var failuresReported = 0

    init(_ reader: InputReader) {
        self.reader = reader
    }

    /// The next batch of items, with the read failures recorded since the previous call.
    func next(maximumCount: Int) -> (items: [InputItem], failures: [InputFailure])? {
        guard let items = reader.nextBatch(maximumCount: maximumCount) else { return nil }
        return (items, takeFailures())
    }

    /// Failures not yet handed out.
    func takeFailures() -> [InputFailure] {
        let failures = Array(reader.failures.dropFirst(failuresReported))
        failuresReported = reader.failures.count
        return failures
    }
}
