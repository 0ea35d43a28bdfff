import Attribution

/// What a worker does to a batch when it runs every step (``StageLayout/workers``): each item through the fast path
/// when that answers, else through the general path, and its record rendered.
struct BatchWorker: Sendable {
    let verifier: ItemVerifier
    /// Nil when the fast path is off (text output, `--expect invalid`, `--no-fast-path`).
    let fastPath: FastPostbackPath?
    let render: RecordRenderer

    func finish(_ batch: VerifiedBatch) {
        batch.outcomes.reserveCapacity(batch.items.count)
        batch.records.reserveCapacity(batch.items.count)
        for item in batch.items {
            if let fastPath, case .bytes(let bytes) = item.content {
                var record: [UInt8] = []
                record.reserveCapacity(1024)
                let identifier = fastPath.appendRecord(for: bytes, source: item.source, line: item.line, to: &record)
                if let identifier {
                    batch.outcomes.append(.fast(postbackIdentifier: identifier))
                    batch.records.append(record)
                    continue
                }
            }
            let result = verifier.verify(item)
            batch.outcomes.append(.general(result))
            batch.records.append(render(result, source: item.source, line: item.line))
        }
    }
}
