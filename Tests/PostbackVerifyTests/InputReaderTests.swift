import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Testing

@_spi(CommandLine) @_spi(Servers) @_spi(Stores) @testable import Attribution
@testable import postback_verify

@Suite("InputReader")
struct InputReaderTests {
    /// An item with its source, as tests compare them.
    struct SourcedItem: Equatable, CustomStringConvertible {
        let source: String
        let item: ExpectedInputItem

        init(_ source: String, _ item: ExpectedInputItem) {
            self.source = source
            self.item = item
        }

        init(_ item: InputItem) {
            self.init(item.source, ExpectedInputItem(item))
        }

        var description: String { "\(source):\(item)" }
    }

    static func readAll(_ reader: InputReader, batch: Int = 100) -> [SourcedItem] {
        var items: [SourcedItem] = []
        while let next = reader.nextBatch(maximumCount: batch) {
            #expect(!next.isEmpty && next.count <= batch)
            items += next.map(SourcedItem.init)
        }
        return items
    }

    static let prettyJSON = "{\n  \"jws-string\": \"a.b.c\",\n  \"n\": [1, 2]\n}\n"

    /// A tree with nested directories, ignored extensions and names whose byte order differs from a walk's order.
    static func makeTree(in directory: InputTestDirectory) throws {
        try directory.write(Array("b1\nb2\n".utf8), to: "tree/b.jsonl")
        try directory.write(Array("a1".utf8), to: "tree/a.txt")
        try directory.write(Array("z1\n".utf8), to: "tree/a/z.jws")
        try directory.write(Array(prettyJSON.utf8), to: "tree/a.json")
        try directory.write(Array("ab\n".utf8), to: "tree/a-b.txt")
        try directory.write(Array("A1\n".utf8), to: "tree/A.txt")
        try directory.write(Array("e1\n# comment\ne3".utf8), to: "tree/c/d/e.txt")
        try directory.write(Array("ignored\n".utf8), to: "tree/readme.md")
        try directory.write(Array("ignored\n".utf8), to: "tree/c/noextension")
        try directory.write(Array("ignored\n".utf8), to: "tree/upper.JSON")
        try directory.write(Array("ignored\n".utf8), to: "tree/json")
        try directory.write([], to: "tree/empty/.keep")
    }

    static func treeItems(under root: String) -> [SourcedItem] {
        [
            SourcedItem("\(root)/A.txt", .init(1, "A1")),
            SourcedItem("\(root)/a-b.txt", .init(1, "ab")),
            SourcedItem("\(root)/a.json", .init(1, prettyJSON)),
            SourcedItem("\(root)/a.txt", .init(1, "a1")),
            SourcedItem("\(root)/a/z.jws", .init(1, "z1")),
            SourcedItem("\(root)/b.jsonl", .init(1, "b1")),
            SourcedItem("\(root)/b.jsonl", .init(2, "b2")),
            SourcedItem("\(root)/c/d/e.txt", .init(1, "e1")),
            SourcedItem("\(root)/c/d/e.txt", .init(3, "e3")),
        ]
    }

    @Test("a directory gives its input files recursively, in byte order of path", arguments: ["", "/"])
    func directoryExpansion(trailingSlash: String) throws {
        let directory = try InputTestDirectory()
        defer { directory.remove() }
        try Self.makeTree(in: directory)
        let reader = InputReader(paths: ["\(directory.path)/tree\(trailingSlash)"])
        #expect(Self.readAll(reader) == Self.treeItems(under: "\(directory.path)/tree"))
        #expect(reader.failures.isEmpty)
    }

    @Test("batches span file boundaries", arguments: [1, 2, 3, 4, 100])
    func batchesSpanFiles(batch: Int) throws {
        let directory = try InputTestDirectory()
        defer { directory.remove() }
        try Self.makeTree(in: directory)
        let reader = InputReader(paths: ["\(directory.path)/tree"])
        var sizes: [Int] = []
        var items: [SourcedItem] = []
        while let next = reader.nextBatch(maximumCount: batch) {
            sizes.append(next.count)
            items += next.map(SourcedItem.init)
        }
        #expect(items == Self.treeItems(under: "\(directory.path)/tree"))
        // Regular files never make a batch stop short: every batch but the last is full.
        #expect(sizes.dropLast().allSatisfy { $0 == batch })
    }

    @Test("an explicit file is read whatever its extension; only .json is whole")
    func explicitFiles() throws {
        let directory = try InputTestDirectory()
        defer { directory.remove() }
        let markdown = try directory.write(Array("m1\n\nm3\n".utf8), to: "notes.md")
        let blankJSON = try directory.write(Array("  \n".utf8), to: "blank.json")
        let emptyJSON = try directory.write([], to: "empty.json")
        let commentJSON = try directory.write(Array("# not skipped\n".utf8), to: "comment.json")
        let bare = try directory.write(Array("x\r\ny".utf8), to: "bare")
        let reader = InputReader(paths: [markdown, blankJSON, emptyJSON, commentJSON, bare])
        #expect(Self.readAll(reader) == [
            SourcedItem(markdown, .init(1, "m1")),
            SourcedItem(markdown, .init(3, "m3")),
            SourcedItem(blankJSON, .init(1, "  \n")),
            SourcedItem(emptyJSON, .init(1, "")),
            SourcedItem(commentJSON, .init(1, "# not skipped\n")),
            SourcedItem(bare, .init(1, "x")),
            SourcedItem(bare, .init(2, "y")),
        ])
        #expect(reader.failures.isEmpty)
    }

    @Test(
        "a .json file over the cap is one oversized item sized without reading it",
        arguments: [16_384, 16_385, 5_000_000]
    )
    func oversizedJSONFile(size: Int) throws {
        let directory = try InputTestDirectory()
        defer { directory.remove() }
        let path = try directory.write([UInt8](repeating: UInt8(ascii: "{"), count: size), to: "big.json")
        let expected: InputItem.Content = size <= 16_384
            ? .bytes(ArraySlice(repeating: UInt8(ascii: "{"), count: size)) : .oversized(byteCount: size)
        let items = Self.readAll(InputReader(paths: [path]))
        #expect(items == [SourcedItem(path, ExpectedInputItem(line: 1, content: expected))])
    }

    @Test("an unreadable path is recorded and the other paths are still read in order")
    func unreadablePathAmongReadable() throws {
        let directory = try InputTestDirectory()
        defer { directory.remove() }
        let first = try directory.write(Array("f1\nf2\n".utf8), to: "first.txt")
        try Self.makeTree(in: directory)
        let last = try directory.write(Array("{}".utf8), to: "last.json")
        let missing = "\(directory.path)/missing.jsonl"
        let reader = InputReader(paths: [first, missing, "\(directory.path)/tree", "/nonexistent/x.json", last])
        #expect(Self.readAll(reader, batch: 3) == [
            SourcedItem(first, .init(1, "f1")),
            SourcedItem(first, .init(2, "f2")),
        ] + Self.treeItems(under: "\(directory.path)/tree") + [
            SourcedItem(last, .init(1, "{}")),
        ])
        #expect(reader.failures == [
            InputFailure(path: missing, message: "No such file or directory"),
            InputFailure(path: "/nonexistent/x.json", message: "No such file or directory"),
        ])
    }

    @Test("symbolic links: files followed, directory links and loops not, broken links reported")
    func symbolicLinks() throws {
        let directory = try InputTestDirectory()
        defer { directory.remove() }
        let root = "\(directory.path)/root"
        try directory.write(Array("real\n".utf8), to: "root/sub/real.txt")
        try directory.write(Array("outside\n".utf8), to: "elsewhere/out.txt")
        #expect(symlink(root, "\(root)/loop") == 0)
        #expect(symlink("..", "\(root)/sub/up") == 0)
        #expect(symlink("\(directory.path)/elsewhere", "\(root)/linked-dir") == 0)
        #expect(symlink("sub/real.txt", "\(root)/alias.txt") == 0)
        #expect(symlink("nowhere.txt", "\(root)/broken.txt") == 0)
        let reader = InputReader(paths: [root])
        #expect(Self.readAll(reader) == [
            SourcedItem("\(root)/alias.txt", .init(1, "real")),
            SourcedItem("\(root)/sub/real.txt", .init(1, "real")),
        ])
        #expect(reader.failures == [
            InputFailure(path: "\(root)/broken.txt", message: "No such file or directory"),
        ])
    }

    @Test("a FIFO after a file: the file's items come without waiting, then the FIFO's line by line")
    func fifoIsStreamed() throws {
        let directory = try InputTestDirectory()
        defer { directory.remove() }
        let file = try directory.write(Array("f1\nf2".utf8), to: "first.txt")
        let fifo = "\(directory.path)/live.jws"
        try #require(mkfifo(fifo, 0o600) == 0)
        let openWriter = DispatchSemaphore(value: 0)
        let finish = DispatchSemaphore(value: 0)
        let writer = Thread {
            // The timeouts only keep a broken reader from hanging the suite.
            _ = openWriter.wait(timeout: .now() + 10)
            let descriptor = open(fifo, O_WRONLY)
            LineItemReaderTests.write("live1\nli", to: descriptor)
            _ = finish.wait(timeout: .now() + 10)
            LineItemReaderTests.write("ve2\n", to: descriptor)
            close(descriptor)
        }
        writer.start()
        let reader = InputReader(paths: [file, fifo])

        var started = ContinuousClock.now
        let fromFile = reader.nextBatch(maximumCount: 100)?.map(SourcedItem.init)
        #expect(ContinuousClock.now - started < .seconds(5))
        #expect(fromFile == [SourcedItem(file, .init(1, "f1")), SourcedItem(file, .init(2, "f2"))])

        openWriter.signal()
        started = ContinuousClock.now
        let firstLive = reader.nextBatch(maximumCount: 100)?.map(SourcedItem.init)
        #expect(ContinuousClock.now - started < .seconds(5))
        #expect(firstLive == [SourcedItem(fifo, .init(1, "live1"))])

        finish.signal()
        #expect(Self.readAll(reader) == [SourcedItem(fifo, .init(2, "live2"))])
        #expect(reader.failures.isEmpty)
    }

    @Test("a directory of many files is read with one descriptor open at a time")
    func manyFilesOpenedLazily() throws {
        let directory = try InputTestDirectory()
        defer { directory.remove() }
        for index in 0..<2_000 {
            try directory.write(Array("item \(index)\n".utf8), to: "many/\(String(index + 10_000)).jws")
        }
        let many = "\(directory.path)/many"
        let reader = InputReader(paths: [many])
        var count = 0
        var mostOpen = 0
        while let batch = reader.nextBatch(maximumCount: 7) {
            for item in batch {
                #expect(item.content == .bytes(ArraySlice("item \(count)".utf8)))
                count += 1
            }
            mostOpen = max(mostOpen, Self.openDescriptors(under: many))
        }
        #expect(count == 2_000)
        #expect(mostOpen <= 1)
    }

    @Test("PATH arguments: none or - is standard input")
    func pathArguments() {
        #expect(InputPath.parse(arguments: []) == [.standardInput])
        #expect(InputPath.parse(arguments: ["-"]) == [.standardInput])
        #expect(InputPath.parse(arguments: ["a.json", "-", "dir"]) == [.path("a.json"), .standardInput, .path("dir")])
    }

    /// How many of this process's descriptors are open on files under `directory` (other tests run alongside).
    static func openDescriptors(under directory: String) -> Int {
        let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return descriptors.filter { descriptor in
            let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(descriptor)")
            return target?.hasPrefix(directory + "/") ?? false
        }.count
    }
}
