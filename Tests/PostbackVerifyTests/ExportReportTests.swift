import Foundation
import Testing
@_spi(CommandLine) @_spi(Servers) @_spi(Stores) @testable import Attribution
@_spi(CommandLine) @_spi(Servers) @testable import AttributionStores
@testable import postback_verify

/// `export --report` (issue 24, item 4): the run report of a period of received postbacks, counted from their
/// stored records. Held to the command line's own report of the same postbacks: the records are the command
/// line's, stored with arrival times on two days, and the report of one day through export must say what
/// `postback-verify --report` says of that day's files.
extension ArchiveExportTests {
    static let keyOptions = ["--allow-development", "--key",
                             "fixture-apple-identifier/0=Fixtures/keys/fixture-apple-identifier-0.pem"]
    static let schema = "Fixtures/schema/example-schema.json"
    /// 2026-11-25 and 2026-11-26, 12:00 UTC, in milliseconds.
    static let dayOne: Int64 = 1_795_608_000_000
    static let dayTwo: Int64 = dayOne + 86_400_000

    /// The command line's records and report for `paths`.
    func verified(_ paths: [String]) throws -> (records: [String], report: [String: Any]) {
        let report = scratch.url("cli-\(UUID().uuidString).json").path
        let run = try CommandLineTests.run(Self.keyOptions + ["--schema", Self.schema, "--report", report,
                                                              "--format", "jsonl"] + paths)
        #expect(run.status == 0 || run.status == 1, "\(run.stderr)")  // 1: some are invalid, as expected
        let object = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: report)))
        return (run.stdout.split(separator: "\n").map(String.init), try #require(object as? [String: Any]))
    }

    static func rows(_ records: [String], received: Int64, tag: String) -> [ArchivedPostback] {
        records.enumerated().map { index, record in
            ArchivedPostback(received: received + Int64(index), request: "\(tag)-\(index)", route: "appattribution",
                             verdict: record.contains(#""verdict":"valid""#) ? "valid" : "invalid", code: nil,
                             key: nil, body: Array(record.utf8), record: Array(record.utf8))
        }
    }

    /// The members of a report that count (everything but what names the run).
    static let counted = ["items", "valid", "invalid", "duplicates", "warnings", "invalid-reasons", "warnings-by-rule",
                          "valid-by-environment", "tiers", "windows", "fine-values", "coarse-values", "campaigns"]

    @Test("export --report of one day says what postback-verify --report says of that day's postbacks",
          arguments: [Kind.sqlite, .postgreSQL])
    func reportOfADay(_ kind: Kind) throws {
        let first = try verified(["Fixtures/valid/apple", "Fixtures/invalid/apple"])
        // With SKAdNetwork postbacks of every verifying version (their facts are read back from stored records too).
        let second = try verified(["Fixtures/valid/postback", "Fixtures/dedupe", "Fixtures/valid/skadnetwork-apple",
                                   "Fixtures/skadnetwork/valid"])
        #expect((second.report["valid"] as? Int ?? 0) > 0 && (second.report["invalid"] as? Int ?? 0) > 0)
        let archive = try archive(kind)
        try archive.append(Self.rows(first.records, received: Self.dayOne, tag: "one"))
        try archive.append(Self.rows(second.records, received: Self.dayTwo, tag: "two"))
        _ = try Self.settled(first.records.count + second.records.count) { try export(archive.state) }
        let report = scratch.url("export-\(UUID().uuidString).json").path
        let run = try CommandLineTests.run(["export", "--state", archive.state, "--since", "2026-11-26",
                                            "--until", "2026-11-27T00:00:00Z", "--report", report,
                                            "--schema", Self.schema])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.records.count == second.records.count)
        #expect(run.records.allSatisfy { ($0["request"] as? String)?.hasPrefix("two-") == true })
        let exported = try #require(try JSONSerialization.jsonObject(
            with: Data(contentsOf: URL(fileURLWithPath: report))) as? [String: Any])
        for member in Self.counted {
            #expect(NSDictionary(dictionary: [member: exported[member] ?? NSNull()])
                        .isEqual(to: [member: second.report[member] ?? NSNull()]), "\(member)")
        }
        #expect((exported["label"] as? String)?.contains("2026-11-26T00:00:00.000Z") == true)
        #expect(run.stderr.contains("\(second.records.count) items"))
    }

    @Test("without a period, export --report counts every row; the HTML page is written for a .html path")
    func reportOfEverything() throws {
        let first = try verified(["Fixtures/valid/apple", "Fixtures/invalid/apple"])
        let archive = try archive(.sqlite)
        try archive.append(Self.rows(first.records, received: Self.dayOne, tag: "one"))
        let page = scratch.url("export.html").path
        let run = try CommandLineTests.run(["export", "--state", archive.state, "--report", page])
        #expect(run.status == 0, "\(run.stderr)")
        let html = try String(contentsOfFile: page, encoding: .utf8)
        #expect(html.hasPrefix("<!DOCTYPE html>") || html.hasPrefix("<!doctype html>"))
        #expect(html.contains(">\(first.records.count)<"))
    }

    @Test("export --report over two days counts each UTC day: rows, valid, revenue; the page shows the trend")
    func reportTrendByDay() throws {
        let first = try verified(["Fixtures/valid/apple", "Fixtures/invalid/apple"])
        let second = try verified(["Fixtures/valid/postback", "Fixtures/dedupe"])
        let archive = try archive(.sqlite)
        try archive.append(Self.rows(first.records, received: Self.dayOne, tag: "one"))
        try archive.append(Self.rows(second.records, received: Self.dayTwo, tag: "two"))
        let json = scratch.url("days.json").path, page = scratch.url("days.Html").path
        for report in [json, page] {
            let run = try CommandLineTests.run(["export", "--state", archive.state, "--report", report,
                                                "--schema", Self.schema])
            #expect(run.status == 0, "\(run.stderr)")
        }
        let report = try #require(try JSONSerialization.jsonObject(
            with: Data(contentsOf: URL(fileURLWithPath: json))) as? [String: Any])
        let days = try #require(report["days"] as? [[String: Any]])
        #expect(days.map { $0["day"] as? String } == ["2026-11-25", "2026-11-26"])
        for (day, verified) in zip(days, [first, second]) {
            #expect(day["items"] as? Int == verified.records.count)
            #expect(day["valid"] as? Int == verified.records.filter { $0.contains(#""verdict":"valid""#) }.count)
            // The day's revenue is what the command line's report of that day's postbacks totals.
            let totals = try #require(verified.report["totals"] as? [String: Any])
            #expect(NSArray(array: day["revenue"] as? [Any] ?? []).isEqual(to: totals["revenue"] as? [Any] ?? [0]),
                    "\(day)")
        }
        #expect(report["inputs"] as? [String] == [archive.state])
        let html = try String(contentsOfFile: page, encoding: .utf8)
        #expect(html.contains("Trend by day"))
        for (position, day) in days.enumerated() {
            #expect(html.contains("id=\"day-\(position)-date\">\(day["day"] as? String ?? "?")<"))
            #expect(html.contains("id=\"day-\(position)-items\">\(day["items"] as? Int ?? -1)<"))
            #expect(html.contains("id=\"day-\(position)-valid\">\(day["valid"] as? Int ?? -1)<"))
        }
        #expect(html.contains("<span id=\"inputs\"><bdi>\(archive.state)</bdi></span>"), "the header names the state")
    }

    @Test("export's report options are checked before anything is read", arguments: [
        (["--schema", "Fixtures/schema/example-schema.json"], "--schema applies to export's --report only"),
        (["--since", "yesterday"], "--since takes a UTC date"),
        (["--until", "2026-13-01"], "--until takes a UTC date"),
        (["--report", "r.json", "--schema", "Fixtures/valid/apple/postback-development-valid.json"], "--schema"),
        (["--report", ""], "--report needs a file path"),
    ])
    func reportOptionsRefused(_ arguments: [String], message: String) throws {
        let run = try CommandLineTests.run(["export", "--state", scratch.url("none.sqlite").path] + arguments)
        #expect(run.status == 2)
        #expect(run.stdout.isEmpty)
        #expect(run.stderr.contains(message), "\(run.stderr)")
    }
}
