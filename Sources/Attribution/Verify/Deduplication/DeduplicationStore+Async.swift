import Dispatch
import Foundation

/// The store's methods for async code: each runs the blocking call on a dispatch queue of its own, never on
/// Swift's cooperative thread pool, so a slow database holds one of those threads, not the server's executors.
extension DeduplicationStore {
    public func claim(_ sightings: [PostbackSighting], at time: Date) async throws -> [DeduplicationAnswer] {
        try await BlockingStoreCall.run { try self.claim(sightings, at: time) }
    }

    public func claim(_ sightings: [PostbackSighting], at time: Date, confirming: [ExactString]) async throws
        -> [DeduplicationAnswer] {
        try await BlockingStoreCall.run { try self.claim(sightings, at: time, confirming: confirming) }
    }

    public func confirm(_ keys: [ExactString]) async throws {
        try await BlockingStoreCall.run { try self.confirm(keys) }
    }

    public func release(_ keys: [ExactString]) async throws {
        try await BlockingStoreCall.run { try self.release(keys) }
    }

    /// Claims `sightings`, awaits `store` with the answers (store the records there), then confirms the first
    /// sightings; if `store` throws, releases them and rethrows.
    public func deduplicate<Outcome>(
        _ sightings: [PostbackSighting], at time: Date, store: ([DeduplicationAnswer]) async throws -> Outcome
    ) async throws -> Outcome {
        guard !sightings.isEmpty else { return try await store([]) }
        let answers: [DeduplicationAnswer] = try await claim(sightings, at: time)
        let claimed = Self.claimedKeys(sightings, answers)
        let outcome: Outcome
        do {
            outcome = try await store(answers)
        } catch {
            try? await release(claimed)
            throw error
        }
        try await confirm(claimed)
        return outcome
    }
}

/// Runs a store's blocking call on a concurrent dispatch queue and resumes the awaiting task with its result.
enum BlockingStoreCall {
    static let queue = DispatchQueue(label: "Attribution.DeduplicationStore", qos: .userInitiated,
                                     attributes: .concurrent)

    static func run<Value: Sendable>(_ call: @escaping @Sendable () throws -> Value) async throws -> Value {
        try await withCheckedThrowingContinuation { continuation in
            queue.async {
                continuation.resume(with: Result { try call() })
            }
        }
    }
}
