@_spi(CommandLine) import Attribution
import Foundation

/// Producer → worker pool → in-order consumer, with a bounded number of batches in flight.
///
/// One thread produces batches (the input reader), `workers` threads transform them (verification and
/// formatting), and the calling thread consumes the results strictly in production order. At most `capacity`
/// batches exist at once (queued, being worked on, or finished but not yet consumed), so memory is bounded by the
/// batch size whatever the input length, and a slow consumer throttles the producer.
final class OrderedPipeline<Input: Sendable, Output: Sendable>: @unchecked Sendable {
    // @unchecked: every stored property below is read and written only while `condition` is locked.
    private let condition = NSCondition()
    /// Batches waiting for a worker; at most `capacity` long, so taking from the front is cheap.
    private var queued: [(sequence: Int, input: Input)] = []
    private var finished: [Int: Output] = [:]
    private var produced = 0
    private var consumed = 0
    private var producerDone = false
    private let capacity: Int

    /// - Parameter capacity: the most batches in flight at once (queued, being transformed, or awaiting `consume`).
    init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// Runs the pipeline to the end of input: once the producer and workers have started, `prepare` runs on the
    /// calling thread (false stops there, like `consume`); then `consume` sees every output in order, on the
    /// calling thread, with a flag telling whether the next output is already waiting (so it can postpone a
    /// flush). `consume` returns false to stop early (the other threads are then left blocked; the caller is about
    /// to exit).
    func run(
        workers: Int,
        prepare: () -> Bool = { true },
        produce: @escaping @Sendable () -> Input?,
        transform: @escaping @Sendable (Input) -> Output,
        consume: (Output, _ moreReady: Bool) -> Bool
    ) {
        let producer = Thread { [self] in
            while let input = produce() {
                condition.lock()
                while produced - consumed >= capacity { condition.wait() }
                queued.append((produced, input))
                produced += 1
                condition.broadcast()
                condition.unlock()
            }
            condition.lock()
            producerDone = true
            condition.broadcast()
            condition.unlock()
        }
        producer.stackSize = 1 << 20
        producer.start()
        for _ in 0..<max(1, workers) {
            let worker = Thread { [self] in
                while let (sequence, input) = takeQueued() {
                    let output = transform(input)
                    condition.lock()
                    finished[sequence] = output
                    condition.broadcast()
                    condition.unlock()
                }
            }
            worker.stackSize = 1 << 20
            worker.start()
        }
        // Set-up of the consumer's own (opening a state file) overlaps the first inputs' production and transform.
        guard prepare() else { return }
        while let (output, moreReady) = takeFinished() {
            guard consume(output, moreReady) else { return }
        }
    }

    /// The outputs after the one being consumed, in order, up to `limit`: those finished, and those already
    /// produced, waited for (a worker has them or is about to: waiting is bounded by their transform, never by
    /// the input, so a live stream's records are not held back for lines not read yet). For `consume` to work
    /// ahead on them (`--state` claims several batches in one transaction); they are consumed in their turn.
    func outputsAhead(limit: Int) -> [Output] {
        condition.lock()
        defer { condition.unlock() }
        var ahead: [Output] = []
        while ahead.count < limit, consumed + ahead.count < produced {
            if let output = finished[consumed + ahead.count] {
                ahead.append(output)
            } else if producerDone {
                break  // the last batches: consumed as they finish, not after all of them
            } else {
                condition.wait()
            }
        }
        return ahead
    }

    private func takeQueued() -> (Int, Input)? {
        condition.lock()
        defer { condition.unlock() }
        while queued.isEmpty && !producerDone { condition.wait() }
        guard !queued.isEmpty else { return nil }
        // Removed, not just passed over: a taken batch must not stay referenced while the queue keeps refilling.
        return queued.removeFirst()
    }

    private func takeFinished() -> (Output, Bool)? {
        condition.lock()
        defer { condition.unlock() }
        while finished[consumed] == nil && !(producerDone && consumed == produced) { condition.wait() }
        guard let output = finished.removeValue(forKey: consumed) else { return nil }
        consumed += 1
        condition.broadcast()
        return (output, finished[consumed] != nil)
    }
}
