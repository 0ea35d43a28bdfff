import Foundation
import Synchronization

/// Whole lines gathered in memory and written in batches: a logged line costs its caller a copy under a lock
/// instead of a system call.
///
/// A thread of the writer's own writes what has gathered ``interval`` after the first line of a batch (5 ms for
/// standard error), so a line waits about that long at most; a caller whose line brings ``threshold`` bytes
/// together (64 KiB) writes them itself at once, so memory stays bounded, and when the destination does not keep
/// up (standard error a stalled pipe) callers wait for it, as they did on their own writes before. ``close()``
/// writes whatever waits, and every later line as it comes; the receiver calls it as it stops and before a
/// start-up failure's line, so a graceful stop loses no line. A `kill -9` or a crash loses the lines of the last
/// few milliseconds.
///
/// A line is appended whole under the lock, and batches are written one at a time, in order, each by one call
/// of the destination (which writes all of it), so lines never interleave or tear.
final class BatchedLineWriter: @unchecked Sendable {
    /// How long after a batch's first line the batch is written.
    let interval: TimeInterval
    /// Bytes waiting that a caller writes at once.
    let threshold: Int
    private let destination: @Sendable ([UInt8]) -> Void

    /// Guards `pending` and `isClosed`; the writing thread waits on it for a first line.
    private let condition = NSCondition()
    private var pending: [UInt8] = []
    private var isClosed = false
    /// The batch being written (its buffer reused): held while the destination writes, so that batches go out
    /// one at a time and in order.
    private let writing = Mutex<[UInt8]>([])

    /// The process's standard error. Its thread starts with the first line logged.
    static let standardError = BatchedLineWriter(interval: 0.005, threshold: 64 * 1024) { batch in
        // Standard error gone (a closed pipe): nothing is left to tell it with.
        try? FileHandle.standardError.write(contentsOf: batch)
    }

    init(interval: TimeInterval, threshold: Int, destination: @escaping @Sendable ([UInt8]) -> Void) {
        self.interval = interval
        self.threshold = threshold
        self.destination = destination
        let thread = Thread { [self] in writeBatches() }
        thread.name = "log-lines"
        thread.start()
    }

    /// Queues `line` (whole: its newline included); after ``close()``, writes it at once.
    func append(_ line: [UInt8]) {
        condition.lock()
        if isClosed {
            condition.unlock()
            writing.withLock { _ in destination(line) }
            return
        }
        if pending.isEmpty {
            condition.signal()  // only the writing thread waits on the condition
        }
        pending.append(contentsOf: line)
        let isFull = pending.count >= threshold
        condition.unlock()
        if isFull {
            writeBatch(closing: false)
        }
    }

    /// Writes every line queued so far, before it returns.
    func flush() {
        writeBatch(closing: false)
    }

    /// Writes every line queued so far and ends the writing thread: later lines are written as they come.
    func close() {
        writeBatch(closing: true)
    }

    private func writeBatches() {
        while true {
            condition.lock()
            while pending.isEmpty && !isClosed {
                condition.wait()
            }
            let isClosed = isClosed
            condition.unlock()
            if isClosed { return }
            // A relative sleep: a change of the wall clock cannot hold lines back.
            Thread.sleep(forTimeInterval: interval)
            writeBatch(closing: false)
        }
    }

    private func writeBatch(closing: Bool) {
        writing.withLock { batch in
            condition.lock()
            swap(&batch, &pending)
            if closing {
                isClosed = true
                condition.signal()
            }
            condition.unlock()
            if !batch.isEmpty { destination(batch) }
            batch.removeAll(keepingCapacity: true)
        }
    }
}
