import Foundation
import ServiceLifecycle
import Synchronization

/// Work done a group at a time: callers that arrive while a group is being processed wait together and are
/// processed as the next group, in one call of `process`. Under light load a group is one caller and adds no delay;
/// under heavy load groups grow (up to the maximum) and the cost per caller falls. The receiver has two:
///
/// - **group commit**: one deduplication claim (which also confirms the previous group's) and one archive
///   transaction (one `fsync`) per group, not per request; with a PostgreSQL state, one transaction for both
///   (``DurableSink``);
/// - **batch verification**: the group's ES256 signatures checked together (``AttributionVerifier/verify(batch:)``: one
///   modular inversion for all, and the key's table of multiples): CPU per request fell from 136 to 74 µs.
///
/// A `Service`: it runs until graceful shutdown, and then still processes what was submitted before it stops. The
/// HTTP server stops first (an application's services stop in reverse order, the server's last-added), so every
/// in-flight request has been answered before this loop ends; a submission after the end is refused.
///
/// **Bounded.** At most `maximumDepth` submissions wait (not yet taken into a group); one more is refused at once
/// with ``QueueOverloaded`` (the receiver answers 503 with `Retry-After`, and Apple sends the postback again), so
/// that an overload costs a retry rather than memory without bound and answers slower than any sender waits for.
final class GroupQueue<Input: Sendable, Output: Sendable>: Service, Sendable {
    private struct Waiting: Sendable {
        let input: Input
        let continuation: CheckedContinuation<Output, any Error>
    }

    private struct State: ~Copyable {
        var pending: [Waiting] = []
        /// Loops waiting for work (at most `concurrency`).
        var loopWaiters: [CheckedContinuation<Void, Never>] = []
        var isStopping = false
        /// Set once the loop has ended: later submissions are refused (answered 500) instead of waiting forever.
        var hasEnded = false
    }

    private enum Next {
        case group([Waiting])
        case end
        case wait
    }

    private let process: @Sendable ([Input]) async throws -> [Output]
    private let onEnd: @Sendable () async -> Void
    private let maximumGroupSize: Int
    private let concurrency: Int
    /// Most submissions waiting at once; beyond it ``submit(_:)`` throws ``QueueOverloaded``.
    let maximumDepth: Int
    private let state = Mutex(State())
    /// Submissions waiting now (read by the metrics without taking the lock).
    private let waiting = Atomic<Int>(0)

    /// `process` gets each group in submission order and returns one output per input, in the same order; if it
    /// throws, every caller of the group gets the error. Up to `concurrency` groups are processed at once (while
    /// one group waits for its `fsync`, the next is already claiming; or one group per core verifying).
    /// `onEnd` runs once the last group is processed, at graceful shutdown.
    /// `maximumDepth` bounds the submissions waiting (see the type's comment).
    init(maximumGroupSize: Int, concurrency: Int = 1, maximumDepth: Int = .max,
                onEnd: @escaping @Sendable () async -> Void = {},
                process: @escaping @Sendable ([Input]) async throws -> [Output]) {
        self.maximumDepth = max(1, maximumDepth)
        self.process = process
        self.onEnd = onEnd
        self.maximumGroupSize = max(1, maximumGroupSize)
        self.concurrency = max(1, concurrency)
    }

    /// Processes `input` with the next group; returns its output. Throws what the group's processing threw, or
    /// ``StorageFailure/stopping`` once the queue has stopped, or ``QueueOverloaded`` when `maximumDepth`
    /// submissions are already waiting.
    func submit(_ input: Input) async throws -> Output {
        try await withCheckedThrowingContinuation { continuation in
            let (refusal, waiter) = state.withLock { state -> ((any Error)?, CheckedContinuation<Void, Never>?) in
                guard !state.hasEnded else { return (StorageFailure.stopping, nil) }
                guard state.pending.count < maximumDepth else { return (QueueOverloaded(), nil) }
                state.pending.append(Waiting(input: input, continuation: continuation))
                waiting.store(state.pending.count, ordering: .relaxed)
                return (nil, state.loopWaiters.popLast())
            }
            if let refusal {
                continuation.resume(throwing: refusal)
            } else {
                waiter?.resume()
            }
        }
    }

    /// Submissions waiting now, not yet taken into a group (the `postback_receiver_queue_depth` gauge).
    var depth: Int { waiting.load(ordering: .relaxed) }

    /// Runs until graceful shutdown, or until cancelled: the service group cancels every service when one fails
    /// (the HTTP server that cannot bind its address), and a queue that waited only for a graceful shutdown would
    /// then keep the process alive for ever, not listening and deaf to SIGTERM.
    func run() async throws {
        await withTaskCancellationHandler {
            await withGracefulShutdownHandler {
                await withTaskGroup(of: Void.self) { loops in
                    for _ in 0..<concurrency {
                        loops.addTask {
                            while let group = await self.nextGroup() {
                                await self.commit(group)
                            }
                        }
                    }
                }
                await onEnd()
            } onGracefulShutdown: {
                self.stop()
            }
        } onCancel: {
            self.stop()
        }
    }

    /// Lets the loops end once nothing is pending.
    private func stop() {
        let waiters = state.withLock { state in
            state.isStopping = true
            defer { state.loopWaiters = [] }
            return state.loopWaiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// The next group to store; nil once stopping with nothing left.
    private func nextGroup() async -> [Waiting]? {
        while true {
            let next = state.withLock { state -> Next in
                if !state.pending.isEmpty {
                    let count = min(state.pending.count, maximumGroupSize)
                    let group = Array(state.pending.prefix(count))
                    state.pending.removeFirst(count)
                    waiting.store(state.pending.count, ordering: .relaxed)
                    return .group(group)
                }
                if state.isStopping {
                    // Nothing pending and stopping: this loop ends; once one has, submissions are refused.
                    state.hasEnded = true
                    return .end
                }
                return .wait
            }
            switch next {
            case .group(let group): return group
            case .end: return nil
            case .wait: break
            }
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let waits = state.withLock { state -> Bool in
                    guard state.pending.isEmpty && !state.isStopping else { return false }
                    state.loopWaiters.append(continuation)
                    return true
                }
                if !waits { continuation.resume() }
            }
        }
    }

    private func commit(_ group: [Waiting]) async {
        do {
            let outputs = try await process(group.map(\.input))
            precondition(outputs.count == group.count, "a group's processing must give one output per input")
            for (waiting, output) in zip(group, outputs) {
                waiting.continuation.resume(returning: output)
            }
        } catch {
            for waiting in group {
                waiting.continuation.resume(throwing: error)
            }
        }
    }
}

/// A ``GroupQueue`` already holds its maximum depth of waiting submissions: answered 503 with `Retry-After`.
struct QueueOverloaded: Error, Sendable, CustomStringConvertible {
    init() {}
    var description: String { "overloaded: the queue is at its bound" }
}
