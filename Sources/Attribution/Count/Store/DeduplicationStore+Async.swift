import Dispatch
import Foundation

/// The store's methods for async code: each runs the blocking call on a dispatch queue of its own, never on
/// Swift's cooperative thread pool, so a slow database holds one of those threads, not the server's executors.
extension DeduplicationStore {
    /// ``claim(_:at:)`` for async code, run on the store's dispatch queue.
    /// - Parameters:
    ///   - sightings: the valid postbacks to answer, in order.
    ///   - time: when they were seen (a run's start, a request's arrival).
    /// - Returns: one answer per sighting, in order.
    /// - Throws: what the synchronous call throws (``AttributionError`` for the built-in stores); a claim that throws
    ///   holds nothing.
    public func claim(_ sightings: [PostbackSighting], at time: Date) async throws -> [DeduplicationAnswer] {
        try await BlockingStoreCall.run { try self.claim(sightings, at: time) }
    }

    /// ``confirm(_:)`` for async code, run on the store's dispatch queue.
    /// - Parameter keys: keys this owner claimed whose records were written and flushed (or stored).
    /// - Throws: what the synchronous call throws (``AttributionError`` for the built-in stores).
    public func confirm(_ keys: [ExactString]) async throws {
        try await BlockingStoreCall.run { try self.confirm(keys) }
    }

    /// ``release(_:)`` for async code, run on the store's dispatch queue.
    /// - Parameter keys: keys this owner claimed whose records were not written.
    /// - Throws: what the synchronous call throws (``AttributionError`` for the built-in stores).
    public func release(_ keys: [ExactString]) async throws {
        try await BlockingStoreCall.run { try self.release(keys) }
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
