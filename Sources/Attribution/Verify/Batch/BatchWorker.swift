/// What a pipeline's threads do to a batch: each item through the fast path when that answers, else through the
/// general path, and its record rendered, in three steps (prepare, check signatures, complete). A caller runs all
/// three on one thread (``finish(_:)``), or each on its own thread (the command line, with cores to spare: the
/// reader prepares, a worker checks signatures and the writer completes).
package struct BatchWorker: Sendable {
    let verifier: AttributionVerifier
    /// Nil when the fast path is off (text output, `--expect invalid`, `--no-fast-path`).
    let fastPath: FastPostbackPath?
    /// Renders a general result as a record (the command line's text or JSON Lines), on the thread that completes.
    let render: @Sendable (VerificationResult, _ source: String, _ line: Int) -> [UInt8]

    package init(
        verifier: AttributionVerifier, fastPath: FastPostbackPath?,
        render: @escaping @Sendable (VerificationResult, _ source: String, _ line: Int) -> [UInt8]
    ) {
        self.verifier = verifier
        self.fastPath = fastPath
        self.render = render
    }

    /// All three steps on one thread, each over the whole batch before the next, so the
    /// batch's signatures are checked together (one inversion for the batch: `ECPublicKey.areValidES256Signatures`).
    package func finish(_ batch: VerifiedBatch) {
        prepare(batch)
        checkSignatures(batch)
        complete(batch)
    }

    // MARK: - Split steps

    /// Step 1 (reader): the fast path's preparation where it applies, the general path's elsewhere.
    package func prepare(_ batch: VerifiedBatch) {
        batch.routes.reserveCapacity(batch.items.count)
        for item in batch.items {
            if let fastPath, case .bytes(let bytes) = item.content,
               let prepared = fastPath.prepare(bytes, source: item.source, line: item.line) {
                batch.routes.append(.fast(batch.fastPrepared.count))
                batch.fastPrepared.append(prepared)
            } else {
                batch.routes.append(.general(batch.generalPrepared.count))
                batch.generalPrepared.append(verifier.prepare(item))
            }
        }
    }

    /// Step 2 (worker): the ECDSA, nothing else; the fast path's items checked together in one batch, the general
    /// path's in another.
    package func checkSignatures(_ batch: VerifiedBatch) {
        fastPath?.checkSignatures(&batch.fastPrepared)
        verifier.checkSignatures(&batch.generalPrepared)
    }

    /// Step 3 (writer): payloads, rules and records.
    package func complete(_ batch: VerifiedBatch) {
        batch.outcomes.reserveCapacity(batch.items.count)
        batch.records.reserveCapacity(batch.items.count)
        // By index, and the fast path's records moved out rather than copied: a valid item costs no reference
        // counting of its input or its prepared parts here (this step runs once per item on a busy core).
        for position in batch.items.indices {
            switch batch.routes[position] {
            case .fast(let index):
                if let fastPath,
                   let (identifier, record, content) = fastPath.takeRecord(from: &batch.fastPrepared[index]) {
                    batch.append(.fast(postbackIdentifier: identifier, content: content), record: record)
                } else if let rejected = fastPath?.rejectedCheck(of: batch.fastPrepared[index]) {
                    // The signature failed the fast path's check: the general path words it, with that answer (no
                    // second ECDSA: a forgery costs one signature check).
                    let item = batch.items[position]
                    append(verifier.verify(item, rejected: rejected), of: item, to: batch)
                } else {
                    let item = batch.items[position]
                    append(verifier.verify(item), of: item, to: batch)
                }
            case .general(let index):
                append(verifier.complete(batch.generalPrepared[index]), of: batch.items[position], to: batch)
            }
        }
    }

    // MARK: - Helpers

    /// A general result and its record (rendered as if the item were not a duplicate).
    private func append(_ result: VerificationResult, of item: InputItem, to batch: VerifiedBatch) {
        batch.append(.general(result), record: render(result, item.source, item.line))
    }
}
