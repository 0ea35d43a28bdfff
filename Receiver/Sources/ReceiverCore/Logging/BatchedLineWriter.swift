import Foundation

/// Whole lines gathered in memory and written in batches by a thread of the writer's own: a logged line costs its
/// caller a copy under a lock, never a system call, and never a wait for the destination.
///
/// The writer's thread writes what has gathered ``interval`` after the first line of a batch (5 ms for standard
/// error), at once when ``threshold`` bytes have gathered (64 KiB), or when the writer is closing or flushed. Only
/// that thread writes: when the destination stalls (standard error a pipe nobody reads, a stalled journald or
/// container log driver), that thread alone waits in `write`, and the callers go on.
///
/// The bytes not yet written (those waiting and the batch being written) are capped at ``capacity`` (1 MiB for
/// standard error). A line that would pass the cap is dropped and counted (``droppedLineCount``, the metric
/// `postback_receiver_log_lines_dropped_total`); once the destination takes a batch again, the batch ends with one
/// line saying how many were dropped since the last such line (``setDropNotice(_:)`` formats it). A line is appended
/// whole under the lock and batches are written one at a time, in order, so lines never interleave or tear.
///
/// ``close(timeout:)`` waits for the lines waiting to be written, at most its timeout (1 s for standard error):
/// the receiver calls it as it stops and after a start-up failure's line, so a graceful stop loses no line while
/// standard error takes them, and a stalled one holds the stop back by the timeout at most; the lines still waiting
/// then are dropped and counted. Lines logged after it are written as they come, without the interval. A `kill -9`
/// or a crash loses the lines of the last few milliseconds.
final class BatchedLineWriter: @unchecked Sendable {
    /// How long after a batch's first line the batch is written.
    let interval: TimeInterval
    /// Bytes waiting that make the writing thread write at once, without the interval.
    let threshold: Int
    /// The most bytes not yet written (waiting, and the batch being written); lines beyond are dropped, counted.
    let capacity: Int
    /// Writes one batch whole; false when the destination refused it (its lines are then counted as dropped).
    private let destination: @Sendable ([UInt8]) -> Bool

    /// Guards every `var` below. The writing thread waits on it for a line; it never holds it while writing.
    private let condition = NSCondition()
    private var pending: [UInt8] = []
    /// Bytes of the batch being written now.
    private var writingBytes = 0
    /// Bytes ever accepted, and bytes ever written (or lost with a refused batch): a flush waits for the second
    /// to reach what the first was when it began.
    private var acceptedBytes = 0
    private var settledBytes = 0
    /// Lines dropped since the last notice was queued, and in all.
    private var unreportedDrops = 0
    private var droppedTotal = 0
    /// Callers waiting in ``flush(timeout:)`` or ``close(timeout:)``: the writing thread skips the interval.
    private var flushers = 0
    private var isClosed = false
    /// The line that tells how many lines were dropped; its newline included.
    private var dropNotice: @Sendable (Int) -> [UInt8] = BatchedLineWriter.plainDropNotice

    /// The process's standard error (file descriptor 2, left blocking: its open file description is shared with
    /// the parent). Its thread starts with the first line logged.
    static let standardError = BatchedLineWriter(interval: 0.005, threshold: 64 * 1024, capacity: 1024 * 1024) {
        writeAll($0, to: STDERR_FILENO)
    }

    /// How long ``close(timeout:)`` waits for standard error at a stop.
    static let standardErrorCloseTimeout: TimeInterval = 1

    init(interval: TimeInterval, threshold: Int, capacity: Int,
         destination: @escaping @Sendable ([UInt8]) -> Bool) {
        self.interval = interval
        self.threshold = threshold
        self.capacity = capacity
        self.destination = destination
        let thread = Thread { [self] in writeBatches() }
        thread.name = "log-lines"
        thread.start()
    }

    /// `postback-receiver: N log lines dropped: standard error did not take them`, before the log format is known.
    static func plainDropNotice(_ count: Int) -> [UInt8] {
        Array("postback-receiver: \(count) log lines dropped: standard error did not take them\n".utf8)
    }

    /// Lines dropped so far: over the cap, refused by the destination, or still waiting when a close gave up.
    var droppedLineCount: Int {
        condition.lock()
        defer { condition.unlock() }
        return droppedTotal
    }

    /// Bytes not yet written now (waiting, and the batch being written): at most ``capacity``.
    var unwrittenByteCount: Int {
        condition.lock()
        defer { condition.unlock() }
        return pending.count + writingBytes
    }

    /// Sets how the line telling how many lines were dropped is written (the log's format).
    func setDropNotice(_ notice: @escaping @Sendable (Int) -> [UInt8]) {
        condition.lock()
        dropNotice = notice
        condition.unlock()
    }

    /// Queues `line` (whole: its newline included), or drops and counts it when it would pass ``capacity``.
    /// Never waits for the destination.
    func append(_ line: [UInt8]) {
        condition.lock()
        defer { condition.unlock() }
        guard pending.count + writingBytes + line.count <= capacity else {
            unreportedDrops += 1
            droppedTotal += 1
            condition.broadcast()  // the notice is owed even if no line waits
            return
        }
        if pending.isEmpty {
            condition.broadcast()  // the writing thread waits for a first line
        }
        pending.append(contentsOf: line)
        acceptedBytes += line.count
    }

    /// Waits until every line queued before the call is written, at most `timeout`; true when they all were.
    @discardableResult
    func flush(timeout: TimeInterval) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        return waitForWrites(timeout: timeout)
    }

    /// Waits for the lines waiting to be written, at most `timeout`; those still waiting then are dropped and
    /// counted (the destination has stalled: the caller is stopping and must not wait for it). Later lines are
    /// written as they come. True when every line was written.
    @discardableResult
    func close(timeout: TimeInterval) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        isClosed = true
        condition.broadcast()
        if waitForWrites(timeout: timeout) { return true }
        let lost = pending.reduce(0) { $0 + ($1 == UInt8(ascii: "\n") ? 1 : 0) }
        unreportedDrops += lost
        droppedTotal += lost
        settledBytes = acceptedBytes  // nothing older is waited for again: what remains is the stalled batch
        pending.removeAll()
        return false
    }

    /// With the lock held: waits until what was accepted so far is settled, at most `timeout`. It polls every
    /// millisecond on the monotonic clock rather than waiting on the condition until a wall-clock date, so a change
    /// of the wall clock can neither shorten nor prolong the wait.
    private func waitForWrites(timeout: TimeInterval) -> Bool {
        let target = acceptedBytes
        let deadline = ContinuousClock.now + .milliseconds(Int64((timeout * 1000).rounded()))
        flushers += 1
        condition.broadcast()
        defer { flushers -= 1 }
        while settledBytes < target {
            guard ContinuousClock.now < deadline else { return false }
            condition.unlock()
            Thread.sleep(forTimeInterval: 0.001)
            condition.lock()
        }
        return true
    }

    private func writeBatches() {
        var batch: [UInt8] = []
        while true {
            condition.lock()
            while pending.isEmpty && unreportedDrops == 0 {
                condition.wait()
            }
            condition.unlock()
            waitForMoreLines()
            condition.lock()
            swap(&batch, &pending)
            let lines = batch.count
            writingBytes = lines
            let settles = acceptedBytes
            let drops = unreportedDrops
            unreportedDrops = 0
            let notice = dropNotice
            condition.unlock()
            if drops > 0 {
                // Past the cap by the notice's few bytes: it is the one line that says what the cap cost.
                batch.append(contentsOf: notice(drops))
            }
            let written = batch.isEmpty || destination(batch)
            condition.lock()
            if !written {
                // Gone from the destination as surely as a line over the cap: counted (not the notice).
                let lost = batch.prefix(lines).reduce(0) { $0 + ($1 == UInt8(ascii: "\n") ? 1 : 0) }
                unreportedDrops += lost
                droppedTotal += lost
            }
            writingBytes = 0
            settledBytes = max(settledBytes, settles)
            condition.broadcast()
            condition.unlock()
            batch.removeAll(keepingCapacity: true)
        }
    }

    /// Waits up to ``interval`` for more lines to join the batch, less once the batch reaches ``threshold``, the
    /// writer closes or a caller flushes. Relative sleeps of a millisecond at most on the monotonic clock: a change
    /// of the wall clock cannot hold lines back.
    private func waitForMoreLines() {
        let wake = ContinuousClock.now + .microseconds(Int64((interval * 1_000_000).rounded()))
        while true {
            condition.lock()
            let isUrgent = isClosed || flushers > 0 || pending.count >= threshold
            condition.unlock()
            let now = ContinuousClock.now
            if isUrgent || now >= wake { return }
            let remaining = (wake - now).components
            let seconds = Double(remaining.seconds) + Double(remaining.attoseconds) / 1e18
            Thread.sleep(forTimeInterval: min(0.001, seconds))
        }
    }

    /// Writes all of `bytes` to `descriptor`, resuming after a partial write or a signal, and waiting with `poll`
    /// if another process made the shared file description non-blocking; false on any other error (a closed pipe).
    static func writeAll(_ bytes: [UInt8], to descriptor: Int32) -> Bool {
        bytes.withUnsafeBytes { buffer in
            guard let base = buffer.baseAddress else { return true }
            var offset = 0
            while offset < buffer.count {
                let count = write(descriptor, base + offset, buffer.count - offset)
                if count > 0 {
                    offset += count
                    continue
                }
                let failure = errno
                if count < 0 && failure == EINTR { continue }
                if count < 0 && (failure == EAGAIN || failure == EWOULDBLOCK) {
                    var ready = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
                    _ = poll(&ready, 1, 100)
                    continue
                }
                return false
            }
            return true
        }
    }
}
