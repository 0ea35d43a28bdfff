import Foundation
import Testing

/// Nothing lost, nothing invented: a large mixed corpus through the binary gives one record per item, in order.
@Suite("Stream accounting", .serialized)
struct StreamAccountingTests {
    /// Lines of every kind: valid and invalid tokens, garbage, NUL, a lone CR, invalid UTF-8, an oversized line,
    /// blank and comment lines (no record), and a last line without a terminator.
    static func corpus() throws -> (text: [UInt8], itemLines: [Int]) {
        let fixtures = TestPaths.fixtures
        let tokens = try FileManager.default.contentsOfDirectory(atPath: fixtures.appendingPathComponent(
            "valid/impression").path).sorted().filter { $0.hasSuffix(".jws") }.compactMap {
                String(decoding: try TestPaths.bytes(fixtures.appendingPathComponent("valid/impression/\($0)")),
                       as: UTF8.self).split(separator: "\n").first { !$0.hasPrefix("#") }.map(String.init)
            }
        try #require(!tokens.isEmpty)
        let kinds: [[UInt8]] = [
            Array("not a token".utf8), [0, 1, 2, 0], Array("a\rb".utf8), [0xFF, 0xFE, 0x80],
            Array(repeating: UInt8(ascii: "x"), count: 20_000), Array("{\"jws-string\":5}".utf8),
            Array("a.b.c".utf8),
        ]
        var text: [UInt8] = []
        var itemLines: [Int] = []
        var line = 0
        for round in 0..<3_000 {
            for (index, token) in tokens.enumerated() where (round + index) % 3 == 0 {
                line += 1
                text += Array(token.utf8) + (round % 2 == 0 ? [0x0A] : [0x0D, 0x0A])
                itemLines.append(line)
            }
            line += 1
            text += Array(round % 5 == 0 ? "# comment\n".utf8 : "   \t\n".utf8)
            line += 1
            text += kinds[round % kinds.count] + [0x0A]
            itemLines.append(line)
        }
        line += 1
        text += Array("last line without a newline".utf8)
        itemLines.append(line)
        return (text, itemLines)
    }

    @Test("Records equal items, in order, with no gap and no extra, on every job count", arguments: [1, 2, 4])
    func accounting(jobs: Int) throws {
        let (text, itemLines) = try Self.corpus()
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("accounting-\(jobs).txt")
        try Data(text).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let run = try CommandLineTests.run([
            "--format", "jsonl", "--jobs", String(jobs),
            "--key", "fixture.adattributionkit=Fixtures/keys/fixture.adattributionkit.pem", file.path,
        ])
        #expect(run.status == 1)
        let records = run.records
        #expect(records.count == itemLines.count)
        #expect(records.map { $0["line"] as? Int ?? -1 } == itemLines)
        let valid = records.filter { $0["verdict"] as? String == "valid" }.count
        #expect(valid > 0 && valid < records.count)
        #expect(run.stderr.contains("\(itemLines.count) items: \(valid) valid, \(records.count - valid) invalid"))
    }
}
