import Foundation
@testable import ReceiverCore
import Synchronization
import Testing

/// The log's batches: every line written whole, in order, within the interval or at once on close; concurrent
/// callers' lines never interleave; a slow destination holds callers back rather than letting lines pile up.
@Suite struct BatchedLineWriterTests {
    /// What a writer handed its destination, batch by batch.
    final class Batches: Sendable {
        private let batches = Mutex<[[UInt8]]>([])
        private let delay: TimeInterval

        init(delay: TimeInterval = 0) {
            self.delay = delay
        }

        func receive(_ batch: [UInt8]) {
            if delay > 0 { Thread.sleep(forTimeInterval: delay) }
            batches.withLock { $0.append(batch) }
        }

        var all: [[UInt8]] { batches.withLock { $0 } }
        var text: String { String(decoding: all.joined(), as: UTF8.self) }
    }

    static func writer(interval: TimeInterval, threshold: Int, into batches: Batches) -> BatchedLineWriter {
        BatchedLineWriter(interval: interval, threshold: threshold) { batches.receive($0) }
    }

    @Test("a line is written within the interval without a flush")
    func lineWaitsAtMostTheInterval() async throws {
        let batches = Batches()
        let writer = Self.writer(interval: 0.005, threshold: 1 << 30, into: batches)
        defer { writer.close() }
        writer.append(Array("one line\n".utf8))
        let deadline = ContinuousClock.now + .seconds(5)
        while batches.text.isEmpty && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(1))
        }
        #expect(batches.text == "one line\n")
    }

    @Test("close writes every waiting line, in order, before it returns; later lines are written as they come")
    func closeWritesEverything() {
        let batches = Batches()
        // An interval no test waits for: only close can have written the lines.
        let writer = Self.writer(interval: 3600, threshold: 1 << 30, into: batches)
        let lines = (0..<10_000).map { "line \($0)\n" }
        for line in lines { writer.append(Array(line.utf8)) }
        writer.close()
        #expect(batches.text == lines.joined())
        writer.append(Array("after the stop\n".utf8))
        #expect(batches.text == lines.joined() + "after the stop\n")
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
        writer.close()
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

    @Test("a slow destination holds callers back: a batch grows past the threshold by one line per caller at most")
    func slowDestinationBoundsTheBatch() async {
        let batches = Batches(delay: 0.005)
        let threshold = 1024
        let writer = Self.writer(interval: 0.001, threshold: threshold, into: batches)
        let callers = 4
        let line = Array(String(repeating: "x", count: 99).utf8) + [UInt8(ascii: "\n")]
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<callers {
                group.addTask {
                    for _ in 0..<300 { writer.append(line) }
                }
            }
        }
        writer.close()
        #expect(batches.all.map(\.count).reduce(0, +) == callers * 300 * line.count)
        let largest = batches.all.map(\.count).max() ?? 0
        #expect(largest < threshold + callers * line.count)
    }
}
