import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Testing

@_spi(CommandLine) @_spi(Servers) @_spi(Stores) @testable import Attribution
@testable import postback_verify

/// Standard input joins a JSON document printed over several lines into one item (docs/cli.md section 2), by the rule
/// ``PrintedDocument`` states, and never joins a line that is an item of its own.
@Suite("Printed JSON documents on standard input")
struct PrintedDocumentTests {
    static let apple = try! String(contentsOf: TestPaths.vector("reference/apple/postback-development-valid.json"),
                                   encoding: .utf8)
    static let lines = apple.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)

    static let cases: [LineSplitCase] = [
        LineSplitCase(name: "Apple's example as printed is one item, numbered by its first line",
                      input: Array(apple.utf8),
                      expected: [.init(1, apple.hasSuffix("\n") ? String(apple.dropLast()) : apple)]),
        LineSplitCase(name: "two printed documents with CRLF, a comment and a JSON Lines item between them",
                      input: Array("{\r\n  \"a\": 1\r\n}\r\n# note\n{\"b\":2}\n  {\n\t\"c\": [\n\t  3\n\t]\n}".utf8),
                      expected: [.init(1, "{\n  \"a\": 1\n}"), .init(5, "{\"b\":2}"),
                                 .init(6, "  {\n\t\"c\": [\n\t  3\n\t]\n}")]),
        LineSplitCase(name: "a truncated document ends at the next JSON Lines item, which stays an item",
                      input: Array("{\n  \"jws-string\": \"x\",\n{\"jws-string\":\"y\"}\n".utf8),
                      expected: [.init(1, "{\n  \"jws-string\": \"x\","), .init(3, "{\"jws-string\":\"y\"}")]),
        LineSplitCase(name: "a lone { before JSON Lines items is one item of its own",
                      input: Array("{\n{\"a\":1}\n{\"b\":2}\n".utf8),
                      expected: [.init(1, "{"), .init(2, "{\"a\":1}"), .init(3, "{\"b\":2}")]),
        LineSplitCase(name: "a comment ends an open document; an indented # belongs to it",
                      input: Array("{\n  # inside\n# outside\nz\n".utf8),
                      expected: [.init(1, "{\n  # inside"), .init(4, "z")]),
        LineSplitCase(name: "end of input inside a document gives what was read, as one item",
                      input: Array("x\n{\n  \"a\": 1,".utf8), expected: [.init(1, "x"), .init(2, "{\n  \"a\": 1,")]),
        // Issue 33: a document whose first member shares the { line is not joined; each line names the remedy.
        LineSplitCase(name: "regression: a document with a member on its { line is a refused item per line",
                      input: Array("{ \"a\": 1,\n  \"b\": 2\n\n}\n".utf8),
                      expected: [1, 2, 4].map { ExpectedInputItem(line: $0, content: .refused(
                          reason: InputShape.unjoinedDocumentRefusal(firstLine: 1, isStandardInput: true))) }),
        LineSplitCase(name: "a line cut short before an ordinary line, or at the end of input, is an ordinary line",
                      input: Array("{\"a\": 1,\n{\"b\":2}\n{\"c\": 3,".utf8),
                      expected: [.init(1, "{\"a\": 1,"), .init(2, "{\"b\":2}"), .init(3, "{\"c\": 3,")]),
        LineSplitCase(name: "an indented whole object ends a document with a member on its { line",
                      input: Array("{\"a\": 1,\n  \"b\": 2\n  {\"c\":3}\n".utf8),
                      expected: [1, 2].map { ExpectedInputItem(line: $0, content: .refused(
                          reason: InputShape.unjoinedDocumentRefusal(firstLine: 1, isStandardInput: true))) }
                          + [.init(3, "  {\"c\":3}")]),
        LineSplitCase(name: "a document over the item cap is counted, not held",
                      input: Array(("{\n  \"a\": \"" + String(repeating: "x", count: 40) + "\"\n}\nz\n").utf8),
                      expected: [.init(1, oversized: 53), .init(4, "z")], maximumItemBytes: 32),
    ]

    /// A line over the cap is met whole (one large write) or in pieces (small writes): the items must not differ.
    @Test("splits standard input into the expected items, whether fed in small writes or in one",
          arguments: cases, [false, true])
    func joinsOnStandardInput(_ testCase: LineSplitCase, inSmallWrites: Bool) throws {
        let (readEnd, writeEnd) = try LineItemReaderTests.makePipe()
        defer { close(readEnd) }
        LineItemReaderTests.trickle(testCase.input, into: writeEnd) { inSmallWrites ? $0 % 5 + 1 : 1 << 20 }
        let reader = LineItemReader(fileDescriptor: readEnd, source: "-", maximumItemBytes: testCase.maximumItemBytes,
                                    joiningPrintedDocuments: true)
        let items = try LineItemReaderTests.readAll(reader, batch: 3)
        #expect(items.map(ExpectedInputItem.init) == testCase.expected)
    }

    @Test("A line-per-item file does not verify a printed document: it is one refused item that names the remedy")
    func filesRefuseNotJoin() throws {
        let directory = try InputTestDirectory()
        defer { directory.remove() }
        let path = try directory.write(Array(Self.apple.utf8), to: "printed.txt")
        let items = try LineItemReaderTests.readAll(try LineItemReader(path: path))
        let lastLine = Self.lines.lastIndex { !$0.isEmpty }.map { $0 + 1 } ?? 0
        #expect(lastLine > 2)
        // The wording users read, written out here rather than asked of the code that makes it.
        let reason = "lines 1-\(lastLine) hold one JSON document printed over several lines, but this file is read "
            + "one item per line: name it *.json (one document per file), or pipe it (postback-verify < FILE)"
        #expect(items.map(ExpectedInputItem.init) == [ExpectedInputItem(line: 1, content: .refused(reason: reason))])
    }
}
