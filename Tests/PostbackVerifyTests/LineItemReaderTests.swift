import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Testing

@_spi(CommandLine) @_spi(Servers) @_spi(Stores) @testable import Attribution
@testable import postback_verify

/// A fresh directory under the temporary directory, for input files written by a test.
struct InputTestDirectory {
    let path: String

    init() throws {
        let temporary = NSTemporaryDirectory().hasSuffix("/") ? NSTemporaryDirectory() : NSTemporaryDirectory() + "/"
        var template = Array("\(temporary)postback-verify-input.XXXXXX".utf8CString)
        guard let created = mkdtemp(&template) else {
            throw InputFailure(path: "mkdtemp", message: String(cString: strerror(errno)))
        }
        path = String(cString: created)
    }

    /// Writes a file (and its parent directories) and returns its full path.
    @discardableResult
    func write(_ bytes: [UInt8], to relativePath: String) throws -> String {
        let full = "\(path)/\(relativePath)"
        let parent = (full as NSString).deletingLastPathComponent
        try FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true)
        try Data(bytes).write(to: URL(fileURLWithPath: full))
        return full
    }

    /// Writes a file chunk by chunk, so a large file never sits in memory.
    func write(to relativePath: String, chunks: Int, chunk: (Int) -> [UInt8]) throws -> String {
        let full = "\(path)/\(relativePath)"
        let descriptor = open(full, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        guard descriptor >= 0 else {
            throw InputFailure(path: full, message: String(cString: strerror(errno)))
        }
        defer { close(descriptor) }
        for index in 0..<chunks {
            let bytes = chunk(index)
            let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            guard written == bytes.count else {
                throw InputFailure(path: full, message: "short write")
            }
        }
        return full
    }

    func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }
}

/// An item as tests compare it: line and content, the source checked separately.
struct ExpectedInputItem: Equatable, Sendable, CustomStringConvertible {
    let line: Int
    let content: InputItem.Content

    init(_ line: Int, _ text: String) {
        self.line = line
        self.content = .bytes(ArraySlice(text.utf8))
    }

    init(_ line: Int, bytes: [UInt8]) {
        self.line = line
        self.content = .bytes(ArraySlice(bytes))
    }

    init(_ line: Int, oversized byteCount: Int) {
        self.line = line
        self.content = .oversized(byteCount: byteCount)
    }

    init(line: Int, content: InputItem.Content) {
        self.line = line
        self.content = content
    }

    init(_ item: InputItem) {
        self.line = item.line
        self.content = item.content
    }

    var description: String {
        switch content {
        case .bytes(let bytes) where bytes.count <= 64:
            "\(line): \(String(reflecting: String(decoding: bytes, as: UTF8.self)))"
        case .bytes(let bytes):
            "\(line): \(bytes.count) bytes"
        case .oversized(let byteCount):
            "\(line): oversized(\(byteCount))"
        case .refused(let reason):
            "\(line): refused(\(reason))"
        }
    }
}

/// One hostile or tricky line-oriented input and the items it must give.
struct LineSplitCase: Sendable, CustomTestStringConvertible {
    let name: String
    let input: [UInt8]
    let expected: [ExpectedInputItem]
    var maximumItemBytes = LineItemReader.defaultMaximumItemBytes

    var testDescription: String { name }

    static let all: [LineSplitCase] = [
        LineSplitCase(name: "empty input", input: [], expected: []),
        LineSplitCase(name: "LF lines", input: Array("a\nb\n".utf8), expected: [.init(1, "a"), .init(2, "b")]),
        LineSplitCase(name: "CRLF lines", input: Array("a\r\nb\r\n".utf8), expected: [.init(1, "a"), .init(2, "b")]),
        LineSplitCase(
            name: "mixed LF and CRLF", input: Array("a\nb\r\nc".utf8),
            expected: [.init(1, "a"), .init(2, "b"), .init(3, "c")]
        ),
        LineSplitCase(
            name: "blank and whitespace-only lines skipped, line numbers kept",
            input: Array("\n  \n\t \r\na\n \t\r\n\r\nb\n\n".utf8), expected: [.init(4, "a"), .init(7, "b")]
        ),
        LineSplitCase(
            name: "comments skipped, line numbers kept",
            input: Array("# c\n  # indented\nx\n\t#tab\r\ny#not a comment\n#last".utf8),
            expected: [.init(3, "x"), .init(5, "y#not a comment")]
        ),
        LineSplitCase(
            name: "last line without newline", input: Array("a\nb".utf8), expected: [.init(1, "a"), .init(2, "b")]
        ),
        LineSplitCase(name: "single line without newline", input: Array("only".utf8), expected: [.init(1, "only")]),
        LineSplitCase(
            name: "lone CR is content",
            input: Array("a\rb\n\r\rc\nx\r\r\n".utf8),
            expected: [.init(1, "a\rb"), .init(2, "\r\rc"), .init(3, "x\r")]
        ),
        LineSplitCase(
            name: "CR alone before spaces is content", input: Array(" \r \n".utf8), expected: [.init(1, " \r ")]
        ),
        LineSplitCase(
            name: "trailing CR at end of input is content", input: Array("a\r".utf8), expected: [.init(1, "a\r")]
        ),
        LineSplitCase(name: "only CRLF is blank", input: Array("\r\n\r\n".utf8), expected: []),
        LineSplitCase(
            name: "surrounding blanks kept in content", input: Array("  a \t\n".utf8), expected: [.init(1, "  a \t")]
        ),
        LineSplitCase(
            // A line starts like an item (`{`), so the file is text with damaged lines, not binary (InputShape).
            name: "NUL bytes kept", input: [0x7B, 0x00, 0x62, 0x0A, 0x00],
            expected: [.init(1, bytes: [0x7B, 0x00, 0x62]), .init(2, bytes: [0x00])]
        ),
        LineSplitCase(
            name: "invalid UTF-8 kept", input: [0xFF, 0xFE, 0xC3, 0x0A, 0xED, 0xA0, 0x80],
            expected: [.init(1, bytes: [0xFF, 0xFE, 0xC3]), .init(2, bytes: [0xED, 0xA0, 0x80])]
        ),
        LineSplitCase(
            name: "exactly 16384 bytes accepted", input: line(16384) + Array("\nnext\n".utf8),
            expected: [.init(1, bytes: line(16384)), .init(2, "next")]
        ),
        LineSplitCase(
            name: "exactly 16384 bytes with CRLF accepted", input: line(16384) + Array("\r\nnext".utf8),
            expected: [.init(1, bytes: line(16384)), .init(2, "next")]
        ),
        LineSplitCase(
            name: "16385 bytes oversized, next line read",
            input: Array("first\n".utf8) + line(16385) + Array("\nnext\n".utf8),
            expected: [.init(1, "first"), .init(2, oversized: 16385), .init(3, "next")]
        ),
        LineSplitCase(
            name: "16385 bytes with CRLF oversized", input: line(16385) + Array("\r\nnext".utf8),
            expected: [.init(1, oversized: 16385), .init(2, "next")]
        ),
        LineSplitCase(
            name: "oversized at end of input without newline", input: Array("a\n".utf8) + line(20_000),
            expected: [.init(1, "a"), .init(2, oversized: 20_000)]
        ),
        LineSplitCase(
            name: "oversized lines longer than the read buffer, in a row",
            input: line(70_000) + [0x0A] + line(200_000) + Array("\r\n".utf8) + line(65_536) + Array("\nend".utf8),
            expected: [
                .init(1, oversized: 70_000), .init(2, oversized: 200_000), .init(3, oversized: 65_536),
                .init(4, "end"),
            ]
        ),
        LineSplitCase(
            name: "oversized comment skipped", input: Array("#".utf8) + line(100_000) + Array("\nnext".utf8),
            expected: [.init(2, "next")]
        ),
        LineSplitCase(
            name: "oversized blank line skipped",
            input: Array(repeating: 0x20, count: 100_000) + Array("\r\nnext".utf8), expected: [.init(2, "next")]
        ),
        LineSplitCase(
            name: "oversized blanks then content",
            input: Array(repeating: 0x20, count: 100_000) + Array("x\n".utf8), expected: [.init(1, oversized: 100_001)]
        ),
        LineSplitCase(
            name: "oversized blanks then a final CR is content",
            input: Array(repeating: 0x09, count: 100_000) + Array("\r".utf8), expected: [.init(1, oversized: 100_001)]
        ),
        LineSplitCase(
            name: "a smaller cap", input: Array("abcd\nabcde\nab\r\n".utf8),
            expected: [.init(1, "abcd"), .init(2, oversized: 5), .init(3, "ab")], maximumItemBytes: 4
        ),
        LineSplitCase(
            name: "lines straddling read boundaries", input: straddlingInput.bytes, expected: straddlingInput.expected
        ),
    ]

    /// Writes split right at the cap, each before the line `next`: chunks and the items expected before `next`.
    static let splitAtTheCap: [([[UInt8]], [ExpectedInputItem])] = {
        let carriageReturn: [UInt8] = [0x0D]
        let blanks = [UInt8](repeating: 0x20, count: 20_000)
        return [
            ([line(16_384) + carriageReturn, Array("\nnext".utf8)], [.init(1, bytes: line(16_384))]),
            ([line(16_385), Array("\r\nnext".utf8)], [.init(1, oversized: 16_385)]),
            ([line(16_385) + carriageReturn, Array("\nnext".utf8)], [.init(1, oversized: 16_385)]),
            ([line(16_386), carriageReturn, Array("\nnext".utf8)], [.init(1, oversized: 16_386)]),
            ([line(16_386) + carriageReturn, Array("x\nnext".utf8)], [.init(1, oversized: 16_388)]),
            ([blanks + carriageReturn, Array("\nnext".utf8)], []),
            ([blanks + carriageReturn, Array("#\nnext".utf8)], [.init(1, oversized: 20_002)]),
        ]
    }()

    static func line(_ count: Int) -> [UInt8] {
        (0..<count).map { UInt8(ascii: "a") + UInt8($0 % 26) }
    }

    /// Thousands of lines of varying length (some blank, some comments) so lines cross every buffer boundary.
    static let straddlingInput: (bytes: [UInt8], expected: [ExpectedInputItem]) = {
        var bytes: [UInt8] = []
        var expected: [ExpectedInputItem] = []
        var state: UInt32 = 12_345
        for number in 1...5_000 {
            state = state &* 1_103_515_245 &+ 12_345
            let length = Int(state >> 16) % 700
            var content = line(length)
            if number % 97 == 0 {
                content = Array("  # comment".utf8)
            } else if number % 89 == 0 {
                content = Array(" \t".utf8)
            } else if length > 0 {
                expected.append(ExpectedInputItem(number, bytes: content))
            }
            bytes += content + (number % 3 == 0 ? Array("\r\n".utf8) : [0x0A])
        }
        return (bytes, expected)
    }()
}

@Suite("LineItemReader")
struct LineItemReaderTests {
    /// Reads every item of a reader, batch by batch.
    static func readAll(_ reader: LineItemReader, batch: Int = 100) throws -> [InputItem] {
        var items: [InputItem] = []
        while let next = try reader.nextBatch(maximumCount: batch) {
            #expect(!next.isEmpty && next.count <= batch)
            items += next
        }
        return items
    }

    @Test("splits a file into the expected items", arguments: LineSplitCase.all)
    func splitsFile(_ testCase: LineSplitCase) throws {
        let directory = try InputTestDirectory()
        defer { directory.remove() }
        let path = try directory.write(testCase.input, to: "input.jsonl")
        let reader = try LineItemReader(path: path, maximumItemBytes: testCase.maximumItemBytes)
        let items = try Self.readAll(reader)
        #expect(items.map(ExpectedInputItem.init) == testCase.expected)
        #expect(items.allSatisfy { $0.source == path })
        #expect(reader.bufferCapacity == LineItemReader.readBufferBytes)
        #expect(try reader.nextBatch(maximumCount: 10) == nil)
    }

    @Test("splits a pipe fed in small odd-sized writes the same way", arguments: LineSplitCase.all)
    func splitsTrickledPipe(_ testCase: LineSplitCase) throws {
        let (readEnd, writeEnd) = try Self.makePipe()
        defer { close(readEnd) }
        Self.trickle(testCase.input, into: writeEnd) { $0 % 4_099 + 7 }
        let reader = LineItemReader(fileDescriptor: readEnd, source: "-", maximumItemBytes: testCase.maximumItemBytes)
        let items = try Self.readAll(reader, batch: 7)
        #expect(items.map(ExpectedInputItem.init) == testCase.expected)
        #expect(items.allSatisfy { $0.source == "-" })
    }

    @Test(
        "lines split by the writer right at the cap are measured on their content",
        arguments: LineSplitCase.splitAtTheCap
    )
    func splitAtTheCap(chunks: [[UInt8]], expected: [ExpectedInputItem]) throws {
        let (readEnd, writeEnd) = try Self.makePipe()
        defer { close(readEnd) }
        let writer = Thread {
            for chunk in chunks {
                _ = chunk.withUnsafeBytes { Glibc.write(writeEnd, $0.baseAddress, $0.count) }
                // Gives the reader time to take this chunk alone; if it is slower, the case only loses coverage.
                usleep(50_000)
            }
            close(writeEnd)
        }
        writer.start()
        let reader = LineItemReader(fileDescriptor: readEnd, source: "-")
        let items = try Self.readAll(reader).map(ExpectedInputItem.init)
        #expect(items == expected + [ExpectedInputItem(2, "next")])
    }

    @Test("next() yields items one at a time")
    func nextYieldsOneByOne() throws {
        let directory = try InputTestDirectory()
        defer { directory.remove() }
        let path = try directory.write(Array("a\n#c\nb\r\n\nc".utf8), to: "input.txt")
        let reader = try LineItemReader(path: path)
        var items: [ExpectedInputItem] = []
        while let item = try reader.next() {
            items.append(ExpectedInputItem(item))
        }
        #expect(items == [.init(1, "a"), .init(3, "b"), .init(5, "c")])
    }

    @Test("a full batch stops at maximumCount and the rest follows in order")
    func batchesAreCapped() throws {
        let directory = try InputTestDirectory()
        defer { directory.remove() }
        let text = (1...10).map { "line \($0)" }.joined(separator: "\n")
        let path = try directory.write(Array(text.utf8), to: "input.txt")
        let reader = try LineItemReader(path: path)
        let sizes = try [reader.nextBatch(maximumCount: 4), reader.nextBatch(maximumCount: 4),
                         reader.nextBatch(maximumCount: 4), reader.nextBatch(maximumCount: 4)].map { $0?.count }
        #expect(sizes == [4, 4, 2, nil])
    }

    @Test("a read error is thrown with the path and the reason, then the input ends")
    func readErrorIsThrown() throws {
        let directory = try InputTestDirectory()
        defer { directory.remove() }
        let descriptor = open(directory.path, O_RDONLY | O_DIRECTORY)
        try #require(descriptor >= 0)
        defer { close(descriptor) }
        let reader = LineItemReader(fileDescriptor: descriptor, source: directory.path)
        let error = #expect(throws: InputFailure.self) { try reader.nextBatch(maximumCount: 10) }
        #expect(error?.path == directory.path)
        #expect(error?.message == "Is a directory")
        #expect(try reader.nextBatch(maximumCount: 10) == nil)
    }

    @Test("a missing file fails to open with the reason")
    func missingFileFailsToOpen() throws {
        let error = #expect(throws: InputFailure.self) {
            try LineItemReader(path: "/nonexistent/postback-verify/input.jsonl")
        }
        #expect(error == InputFailure(
            path: "/nonexistent/postback-verify/input.jsonl", message: "No such file or directory"
        ))
    }

    @Test("a paused pipe's complete lines are returned without waiting for more input")
    func pausedPipeIsAnsweredPromptly() throws {
        let (readEnd, writeEnd) = try Self.makePipe()
        defer { close(readEnd) }
        let resume = DispatchSemaphore(value: 0)
        let writer = Thread {
            Self.write("first\nsec", to: writeEnd)
            // Holds the pipe open; the timeout only keeps a broken reader from hanging the suite.
            _ = resume.wait(timeout: .now() + 10)
            Self.write("ond\nthird", to: writeEnd)
            close(writeEnd)
        }
        writer.start()
        let reader = LineItemReader(fileDescriptor: readEnd, source: "-")
        let started = ContinuousClock.now
        let first = try reader.nextBatch(maximumCount: 100)
        let waited = ContinuousClock.now - started
        resume.signal()
        #expect(waited < .seconds(5))
        #expect(first?.map(ExpectedInputItem.init) == [.init(1, "first")])
        #expect(try Self.readAll(reader).map(ExpectedInputItem.init) == [.init(2, "second"), .init(3, "third")])
    }

    /// Writes `input` into a pipe from another thread in writes of changing sizes (1 first, then `next(size)`),
    /// then closes it.
    static func trickle(_ input: [UInt8], into writeEnd: Int32, next: @escaping @Sendable (Int) -> Int) {
        let writer = Thread {
            var offset = 0
            var size = 1
            while offset < input.count {
                let count = min(size, input.count - offset)
                _ = input[offset..<(offset + count)].withUnsafeBytes { Glibc.write(writeEnd, $0.baseAddress, count) }
                offset += count
                size = next(size)
            }
            close(writeEnd)
        }
        writer.start()
    }

    static func makePipe() throws -> (Int32, Int32) {
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        return (ends[0], ends[1])
    }

    static func write(_ text: String, to descriptor: Int32) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
    }
}

/// Bounded memory, checked deterministically: the reader's own buffer never grows past its fixed size.
///
/// Process-wide peak RSS is not asserted here: tests run in parallel in one process, so it measures the neighbours
/// too. Peak RSS of the real binary is measured by `Benchmarks/run.sh` (1,000,000 items).
@Suite("LineItemReader in bounded memory", .serialized)
struct LineItemReaderMemoryTests {
    @Test("a 64 MiB line without newline is one oversized item, never buffered")
    func hugeLineIsNotBuffered() throws {
        let directory = try InputTestDirectory()
        defer { directory.remove() }
        let chunk = [UInt8](repeating: UInt8(ascii: "x"), count: 64 * 1024)
        let path = try directory.write(to: "huge.jws", chunks: 1024) { _ in chunk }
        let reader = try LineItemReader(path: path)
        let items = try LineItemReaderTests.readAll(reader)
        #expect(items.map(ExpectedInputItem.init) == [.init(1, oversized: 64 * 1024 * 1024)])
        #expect(reader.bufferCapacity == 64 * 1024)
    }

    @Test("1,000,000 short lines are all read, in order")
    func millionLines() throws {
        let directory = try InputTestDirectory()
        defer { directory.remove() }
        let path = try directory.write(to: "many.txt", chunks: 100) { chunk in
            Array((0..<10_000).map { "item \(chunk * 10_000 + $0 + 1)\n" }.joined().utf8)
        }
        let reader = try LineItemReader(path: path)
        var count = 0
        var mismatches = 0
        while let batch = try reader.nextBatch(maximumCount: 1_000) {
            for item in batch {
                count += 1
                if item.line != count || item.content != .bytes(ArraySlice("item \(count)".utf8)) {
                    mismatches += 1
                }
            }
        }
        #expect(count == 1_000_000)
        #expect(mismatches == 0)
        #expect(reader.bufferCapacity == 64 * 1024)
    }
}
