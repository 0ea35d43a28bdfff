import Foundation
import Synchronization

/// `GET /readyz`: whether the store answers a probe within a deadline, so that a load balancer sends postbacks
/// only to a receiver that can store them (`/healthz` only says the process runs: while PostgreSQL was down it
/// said `ok` and every valid postback got 500).
///
/// The probe runs on a thread of its own (it blocks: a database round trip, or a connection attempt), at most one
/// at a time; its answer is kept for one deadline, so that many probes cost the store one query a second. A probe
/// still running past its deadline counts as a failure, and no second one starts behind it.
final class Readiness: Sendable {
    private struct State {
        /// When the last answer was made (uptime nanoseconds), and what it was.
        var checked: UInt64 = 0
        var isReady = false
        var hasAnswer = false
        var isProbing = false
        /// Which probe is running: a deadline applies only to its own probe.
        var generation = 0
        /// Callers waiting for the running probe's answer.
        var waiting: [CheckedContinuation<Bool, Never>] = []
    }

    private let probe: (@Sendable () throws -> Void)?
    private let deadline: Duration
    private let state = Mutex(State())

    /// `probe` nil: nothing to probe (no storage), always ready.
    init(probe: (@Sendable () throws -> Void)?, deadline: Duration) {
        self.probe = probe
        self.deadline = deadline
    }

    private var deadlineNanoseconds: UInt64 {
        UInt64(deadline.components.seconds) * 1_000_000_000 + UInt64(deadline.components.attoseconds / 1_000_000_000)
    }

    /// Whether the store answered its latest probe within the deadline (probing again when that answer is older
    /// than the deadline).
    func check() async -> Bool {
        guard let probe else { return true }
        let now = DispatchTime.now().uptimeNanoseconds
        let (startsProbe, generation): (Bool?, Int) = state.withLock { state in
            if state.hasAnswer && now &- state.checked < deadlineNanoseconds { return (nil, 0) }
            if state.isProbing { return (false, 0) }
            state.isProbing = true
            state.generation += 1
            return (true, state.generation)
        }
        if startsProbe == nil { return state.withLock { $0.isReady } }
        return await withCheckedContinuation { continuation in
            let stuck = state.withLock { state -> Bool? in
                // A probe running past its deadline: not ready, and no second probe queued behind it.
                if startsProbe == false && state.hasAnswer && !state.isReady { return false }
                state.waiting.append(continuation)
                return nil
            }
            if let stuck {
                continuation.resume(returning: stuck)
                return
            }
            guard startsProbe == true else { return }
            Thread.detachNewThread {
                let isReady = (try? probe()) != nil
                self.answer(isReady, probeEnded: true, generation: generation)
            }
            DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(Int(deadlineNanoseconds))) {
                self.answer(false, probeEnded: false, generation: generation)
            }
        }
    }

    /// Records an answer and wakes the waiting callers: the probe's own, or the deadline's (a failure) if the
    /// probe has not answered by then. The probe's answer after a deadline's failure still counts next time.
    private func answer(_ isReady: Bool, probeEnded: Bool, generation: Int) {
        let waiting = state.withLock { state -> [CheckedContinuation<Bool, Never>] in
            if probeEnded {
                state.isProbing = false
            } else if !state.isProbing || state.generation != generation || state.waiting.isEmpty {
                return []  // the probe answered first
            }
            state.checked = DispatchTime.now().uptimeNanoseconds
            state.isReady = isReady
            state.hasAnswer = true
            defer { state.waiting = [] }
            return state.waiting
        }
        for continuation in waiting { continuation.resume(returning: isReady) }
    }
}
