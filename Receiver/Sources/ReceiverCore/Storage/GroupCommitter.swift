import Foundation
import Synchronization
import ServiceLifecycle

/// Group commit: requests that arrive while a group is being stored wait together and are stored as the next group,
/// in one pass through the sink (one deduplication claim, one transaction, one `fsync`), so durability costs a
/// transaction per group, not per request. Under light load a group is one request and adds no delay; under heavy
/// load groups grow (up to ``maximumGroupSize``) and the cost per request falls.
///
/// A `Service`: it runs until graceful shutdown, and then still stores what was submitted before it stops. The
/// HTTP server stops first (the application's services stop in reverse order), so every in-flight request has been
/// answered, and so stored, before this loop ends.
public final class GroupCommitter: Service, Sendable {
    private struct Waiting: Sendable {
        let postback: ReceivedPostback
        let continuation: CheckedContinuation<SinkOutcome, any Error>
    }

    private struct State: ~Copyable {
        var pending: [Waiting] = []
        var loopWaiter: CheckedContinuation<Void, Never>?
        var isStopping = false
        /// Set once the loop has ended: later submissions are refused (answered 500) instead of waiting forever.
        var hasEnded = false
    }

    private enum Next {
        case group([Waiting])
        case end
        case wait
    }

    private let sink: any PostbackSink
    private let maximumGroupSize: Int
    private let state = Mutex(State())
    private let metrics: ReceiverMetrics?

    public init(sink: any PostbackSink, maximumGroupSize: Int = 512, metrics: ReceiverMetrics? = nil) {
        self.sink = sink
        self.maximumGroupSize = max(1, maximumGroupSize)
        self.metrics = metrics
    }

    /// Stores `postback` with the next group; returns once it is stored (or left out by the quota). Throws when
    /// its group could not be stored, or when the receiver has stopped.
    public func submit(_ postback: ReceivedPostback) async throws -> SinkOutcome {
        try await withCheckedThrowingContinuation { continuation in
            let (accepted, waiter) = state.withLock { state -> (Bool, CheckedContinuation<Void, Never>?) in
                guard !state.hasEnded else { return (false, nil) }
                state.pending.append(Waiting(postback: postback, continuation: continuation))
                defer { state.loopWaiter = nil }
                return (true, state.loopWaiter)
            }
            if accepted {
                waiter?.resume()
            } else {
                continuation.resume(throwing: StorageFailure.stopping)
            }
        }
    }

    public func run() async throws {
        await withGracefulShutdownHandler {
            while let group = await nextGroup() {
                await commit(group)
            }
        } onGracefulShutdown: {
            let waiter = self.state.withLock { state in
                state.isStopping = true
                defer { state.loopWaiter = nil }
                return state.loopWaiter
            }
            waiter?.resume()
        }
    }

    /// The next group to store; nil once stopping with nothing left.
    private func nextGroup() async -> [Waiting]? {
        while true {
            let next = state.withLock { state -> Next in
                if !state.pending.isEmpty {
                    let count = min(state.pending.count, maximumGroupSize)
                    let group = Array(state.pending.prefix(count))
                    state.pending.removeFirst(count)
                    return .group(group)
                }
                if state.isStopping {
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
                    state.loopWaiter = continuation
                    return true
                }
                if !waits { continuation.resume() }
            }
        }
    }

    private func commit(_ group: [Waiting]) async {
        do {
            let outcomes = try await sink.store(group.map(\.postback))
            metrics?.committed()
            for (waiting, outcome) in zip(group, outcomes) {
                waiting.continuation.resume(returning: outcome)
            }
        } catch {
            for waiting in group {
                waiting.continuation.resume(throwing: error)
            }
        }
    }
}
