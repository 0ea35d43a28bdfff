import Foundation
@_spi(Servers) @testable import ReceiverCore
import Synchronization
import Testing

/// The log's batches: every line written whole, in order, within the interval or at once on close; concurrent
/// callers' lines never interleave; a stalled destination (a real pipe nobody reads) never holds a caller: lines
/// past the cap are dropped and counted, notice lines say how many once the pipe is read, and close waits for it
/// only as long as its timeout.
///
/// Regression (CI on a busy machine): the writing thread may take a batch part-way through a burst, so a close can
/// drop more than the lines appended after the pause, and drops can be told in more than one notice; the tests
/// check that written and dropped lines add up, not a split the scheduler chooses.
@Suite struct BatchedLineWriterTests {
    /// What a writer handed its destination, batch by batch.
    final class Batches: Sendable {
        private let batches = Mutex<[[UInt8]]>([])
        private let delay: TimeInterval

        init(delay: TimeInterval = 0) {
            self.delay = delay
        }

        func receive(_ batch: [UInt8]) -> Bool {
            if delay > 0 { Thread.sleep(forTimeInterval: delay) }
            batches.withLock { $0.append(batch) }
            return true
        }

        var all: [[UInt8]] { batches.withLock { $0 } }
        var text: String { String(decoding: all.joined(), as: UTF8.self) }
    }

    static func writer(interval: TimeInterval, threshold: Int, into batches: Batches) -> BatchedLineWriter {
        BatchedLineWriter(interval: interval, threshold: threshold, capacity: 1 << 30) { batches.receive($0) }
    }

    @Test("a line is written within the interval without a flush")
    func lineWaitsAtMostTheInterval() async throws {
        let batches = Batches()
        let writer = Self.writer(interval: 0.005, threshold: 1 << 30, into: batches)
        defer { writer.close(timeout: 5) }
        writer.append(Array("one line\n".utf8))
        let deadline = ContinuousClock.now + .seconds(5)
        while batches.text.isEmpty && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(1))
        }
        #expect(batches.text == "one line\n")
    }

    @Test("close writes every waiting line, in order, before it returns; later lines are written as they come")
    func closeWritesEverything() async throws {
        let batches = Batches()
        // An interval no test waits for: only close can have written the lines.
        let writer = Self.writer(interval: 3600, threshold: 1 << 30, into: batches)
        let lines = (0..<10_000).map { "line \($0)\n" }
        for line in lines { writer.append(Array(line.utf8)) }
        #expect(writer.close(timeout: 30))
        #expect(batches.text == lines.joined())
        writer.append(Array("after the stop\n".utf8))
        // Written by the writer's thread without the hour's interval.
        let deadline = ContinuousClock.now + .seconds(5)
        while !batches.text.hasSuffix("after the stop\n") && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(1))
        }
        #expect(batches.text == lines.joined() + "after the stop\n")
        #expect(writer.droppedLineCount == 0)
    }

    @Test("lines from concurrent callers are never interleaved or torn, each caller's in its order",
          arguments: [256, 64 * 1024])
    func concurrentLinesStayWhole(threshold: Int) async {
        let batches = Batches()
        let writer = Self.writer(interval: 0.001, threshold: threshold, into: batches)
        let callers = 8
        let linesEach = 2000
        await withTaskGroup(of: Void.self) { group in
            for caller in 0..<callers {
                group.addTask {
                    for index in 0..<linesEach {
                        // Lengths from a few bytes to past the smaller threshold.
                        let payload = String(repeating: Character(UnicodeScalar(UInt8(65 + caller))),
                                             count: (index * 37) % 700)
                        writer.append(Array("\(caller) \(index) \(payload)\n".utf8))
                    }
                }
            }
        }
        #expect(writer.close(timeout: 30))
        #expect(batches.all.allSatisfy { $0.last == UInt8(ascii: "\n") }, "a batch ends inside a line")
        let lines = batches.text.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        #expect(lines.count == callers * linesEach)
        var next = [Int](repeating: 0, count: callers)
        for line in lines {
            let fields = line.split(separator: " ", omittingEmptySubsequences: false)
            guard fields.count == 3, let caller = Int(fields[0]), let index = Int(fields[1]),
                  (0..<callers).contains(caller) else {
                Issue.record("a torn line: \(line.prefix(80))")
                continue
            }
            #expect(index == next[caller], "caller \(caller)'s lines out of order")
            next[caller] = index + 1
            let payload = String(repeating: Character(UnicodeScalar(UInt8(65 + caller))), count: (index * 37) % 700)
            #expect(fields[2] == payload[...], "caller \(caller)'s line \(index) mixed with another's")
        }
    }

    /// A pipe: the writer writes to its write end; nothing reads its read end until the test drains it.
    final class StalledPipe: Sendable {
        let readEnd: Int32
        let writeEnd: Int32

        init() throws {
            var ends: [Int32] = [0, 0]
            guard pipe(&ends) == 0 else { throw POSIXError(.EMFILE) }
            readEnd = ends[0]
            writeEnd = ends[1]
        }

        /// Reads in a thread of its own until `stop` says the text read so far is enough, or `timeout` passes;
        /// the text read.
        func drain(timeout: Duration, until stop: @escaping @Sendable (String) -> Bool) async -> String {
            let readEnd = readEnd
            return await withCheckedContinuation { continuation in
                Thread.detachNewThread {
                    var bytes: [UInt8] = []
                    var chunk = [UInt8](repeating: 0, count: 65536)
                    let deadline = ContinuousClock.now + timeout
                    while ContinuousClock.now < deadline {
                        var ready = pollfd(fd: readEnd, events: Int16(POLLIN), revents: 0)
                        guard poll(&ready, 1, 50) > 0 else { continue }
                        let count = chunk.withUnsafeMutableBytes { read(readEnd, $0.baseAddress, $0.count) }
                        if count <= 0 { break }
                        bytes.append(contentsOf: chunk.prefix(count))
                        if bytes.last == UInt8(ascii: "\n"), stop(String(decoding: bytes, as: UTF8.self)) { break }
                    }
                    continuation.resume(returning: String(decoding: bytes, as: UTF8.self))
                }
            }
        }

        func close() {
            Glibc.close(readEnd)
            Glibc.close(writeEnd)
        }
    }

    static let dropNotice = " log lines dropped: standard error did not take them"

    /// The lines the notices in `text` say were dropped, added up.
    static func noticedDrops(in text: String) -> Int {
        text.split(separator: "\n").filter { $0.hasSuffix(dropNotice) }.reduce(0) { total, line in
            total + (Int(line.dropFirst("postback-receiver: ".count).dropLast(dropNotice.count)) ?? 0)
        }
    }

    /// Once the pipe is read, the lines kept come whole and in order, and notice lines count the dropped ones.
    @Test("a stalled pipe never holds a caller: lines past the cap are dropped, counted, and said once it is read",
          .timeLimit(.minutes(1)))
    func stalledPipeDropsAndCounts() async throws {
        let pipe = try StalledPipe()
        let capacity = 256 * 1024
        let writer = BatchedLineWriter(interval: 0.001, threshold: 64 * 1024, capacity: capacity) {
            BatchedLineWriter.writeAll($0, to: pipe.writeEnd)
        }
        // 2 MB of lines: the pipe takes 64 KiB, the writer 256 KiB, the rest is dropped.
        let count = 20_000
        var largest = 0
        var slowest = Duration.zero
        for index in 0..<count {
            let line = Array("line \(index) \(String(repeating: "x", count: 80))\n".utf8)
            let started = ContinuousClock.now
            writer.append(line)
            slowest = max(slowest, ContinuousClock.now - started)
            largest = max(largest, writer.unwrittenByteCount)
        }
        let dropped = writer.droppedLineCount
        #expect(dropped > count / 2, "only \(dropped) of \(count) lines dropped with the pipe stalled")
        #expect(largest <= capacity, "\(largest) bytes waited, over the \(capacity) cap")
        // A write on the stalled pipe would have held the caller for good; a copy under a lock takes microseconds.
        #expect(slowest < .milliseconds(500), "an append took \(slowest)")
        // One notice, or more when the writing thread got a turn between drops (on a busy machine it can take a
        // batch once drops began, before its write stalls): their counts add up to the lines dropped.
        let text = await pipe.drain(timeout: .seconds(20)) { Self.noticedDrops(in: $0) >= dropped }
        let lines = text.split(separator: "\n")
        #expect(Self.noticedDrops(in: text) == dropped, "the notices do not count the \(dropped) lines dropped")
        #expect(lines.filter { $0.contains(Self.dropNotice) }.allSatisfy {
            $0.hasPrefix("postback-receiver: ") && $0.hasSuffix(Self.dropNotice)
        })
        let kept = lines.filter { !$0.contains(Self.dropNotice) }
        #expect(kept.count == count - dropped, "\(kept.count) lines written, not \(count - dropped)")
        var previous = -1
        for line in kept {
            let fields = line.split(separator: " ")
            guard fields.count == 3, fields[0] == "line", let index = Int(fields[1]), fields[2].count == 80 else {
                Issue.record("a torn line: \(line.prefix(80))")
                break
            }
            #expect(index > previous, "line \(index) after line \(previous)")
            previous = index
        }
        #expect(writer.close(timeout: 5), "close timed out with the pipe read")
        pipe.close()
    }

    @Test("close waits for a stalled pipe only as long as its timeout; the lines still waiting are dropped, counted",
          .timeLimit(.minutes(1)))
    func closeGivesUpOnAStalledPipe() async throws {
        let pipe = try StalledPipe()
        let writer = BatchedLineWriter(interval: 0.001, threshold: 64 * 1024, capacity: 1024 * 1024) {
            BatchedLineWriter.writeAll($0, to: pipe.writeEnd)
        }
        func line(_ index: Int) -> [UInt8] { Array("line \(index) \(String(repeating: "y", count: 90))\n".utf8) }
        // 100 KB, more than the pipe takes: the writer's thread is held in its write once it has taken them.
        for index in 0..<1000 { writer.append(line(index)) }
        try await Task.sleep(for: .milliseconds(200))
        // 1,000 more, all under the cap: they wait.
        for index in 1000..<2000 { writer.append(line(index)) }
        #expect(writer.droppedLineCount == 0)
        let started = ContinuousClock.now
        let closed = writer.close(timeout: 0.3)
        let took = ContinuousClock.now - started
        #expect(!closed, "close said every line was written to a pipe nobody reads")
        #expect(took >= .milliseconds(250) && took < .milliseconds(1500), "close took \(took), not about 0.3 s")
        // The 1,000 appended after the pause were waiting; so were any of the first 1,000 the writing thread had not
        // taken before its write stalled (on a busy machine it can take its first batch part-way through them).
        let lost = writer.droppedLineCount
        #expect(lost >= 1000 && lost <= 2000, "\(lost) lines counted lost, not the 1,000 or more waiting")
        // Once the pipe is read, the stalled batch goes out, then the line counting what the close gave up: every
        // line is either written whole, in order, or counted lost, never both.
        let text = await pipe.drain(timeout: .seconds(20)) { $0.contains(Self.dropNotice) }
        #expect(text.hasSuffix("postback-receiver: \(lost)\(Self.dropNotice)\n"))
        let written = text.split(separator: "\n").filter { $0.hasPrefix("line ") }
        #expect(written.count == 2000 - lost, "\(written.count) lines written and \(lost) lost, of 2,000")
        #expect(written.map { Int($0.split(separator: " ")[1]) } == (0..<written.count).map { Optional($0) },
                "the lines written are not the first ones, in order")
        #expect(writer.close(timeout: 5))
        pipe.close()
    }
}
