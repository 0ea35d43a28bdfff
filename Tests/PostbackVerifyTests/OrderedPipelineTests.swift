import Synchronization
import Testing
@_spi(CommandLine) @_spi(Servers) @_spi(Stores) @testable import Attribution
@testable import postback_verify

/// The CLI's producer → workers → in-order consumer pipeline.
@Suite("Ordered pipeline")
struct OrderedPipelineTests {
    /// Counts live instances, so a test can see how many batches the pipeline still references.
    final class TrackedBatch: Sendable {
        static let live = Mutex(0)
        let number: Int

        init(_ number: Int) {
            self.number = number
            Self.live.withLock { $0 += 1 }
        }

        deinit {
            Self.live.withLock { $0 -= 1 }
        }
    }

    @Test("Outputs arrive in production order, all of them, on any worker count", arguments: [1, 2, 3, 8])
    func order(workers: Int) {
        let counter = Mutex(0)
        var seen: [Int] = []
        OrderedPipeline<Int, Int>(capacity: 5).run(
            workers: workers,
            produce: { counter.withLock { next in next < 2_000 ? { next += 1; return next - 1 }() : nil } },
            transform: { value in
                // Uneven work, so workers finish out of order.
                var spin = 0
                for step in 0..<(value % 7) * 200 { spin &+= step }
                return value + (spin == -1 ? 1 : 0)
            },
            consume: { value, _ in
                seen.append(value)
                return true
            })
        #expect(seen == Array(0..<2_000))
    }

    @Test("Regression: batches taken by workers stayed referenced by the queue while it kept refilling")
    func takenBatchesAreReleased() {
        let produced = Mutex(0)
        var peak = 0
        let capacity = 4
        let workers = 2
        OrderedPipeline<TrackedBatch, TrackedBatch>(capacity: capacity).run(
            workers: workers,
            produce: { produced.withLock { next in next < 3_000 ? { next += 1; return TrackedBatch(next) }() : nil } },
            transform: { $0 },
            consume: { _, _ in
                peak = max(peak, TrackedBatch.live.withLock { $0 })
                return true
            })
        // In flight: at most `capacity` batches; plus the one being consumed; plus one the producer holds while it
        // waits for room; plus, per worker, the batch it has just handed over and not yet dropped (between storing
        // its output and the end of its loop iteration the consumer can take, consume and drop that batch).
        // The bug this guards against kept every batch alive: thousands, not a handful.
        #expect(peak <= capacity + 2 + workers, "peak live batches \(peak)")
    }

    @Test("Consume can stop the run early")
    func stopsEarly() {
        let produced = Mutex(0)
        var consumed = 0
        OrderedPipeline<Int, Int>(capacity: 2).run(
            workers: 2,
            produce: { produced.withLock { next in next += 1; return next } },
            transform: { $0 },
            consume: { _, _ in
                consumed += 1
                return consumed < 10
            })
        #expect(consumed == 10)
    }
}
