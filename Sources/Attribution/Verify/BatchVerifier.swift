import Dispatch
import Synchronization

/// Verifies a batch of items on several threads and returns the results in input order.
///
/// Items are split into one contiguous chunk per worker; each worker verifies its chunk and hands back its
/// results once, so the only shared state is one lock taken once per chunk.
public struct BatchVerifier: Sendable {
    public let verifier: ItemVerifier
    /// Worker threads; 1 verifies on the calling thread.
    public let jobs: Int

    public init(verifier: ItemVerifier, jobs: Int) {
        self.verifier = verifier
        self.jobs = max(1, jobs)
    }

    /// One result per item, in the items' order.
    public func verify(_ items: [InputItem]) -> [VerificationResult] {
        let workers = min(jobs, items.count)
        guard workers > 1 else { return items.map(verifier.verify) }
        let chunkSize = (items.count + workers - 1) / workers
        let chunks = Mutex([[VerificationResult]](repeating: [], count: workers))
        DispatchQueue.concurrentPerform(iterations: workers) { worker in
            let start = worker * chunkSize
            let end = min(items.count, start + chunkSize)
            guard start < end else { return }
            let results = items[start..<end].map(verifier.verify)
            chunks.withLock { $0[worker] = results }
        }
        return chunks.withLock { $0.flatMap { $0 } }
    }
}
