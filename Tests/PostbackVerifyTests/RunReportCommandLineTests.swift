#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing

/// Issue 24 items 1, 2 and 5 through the built binary: `--schema`, `--report`, `--label`, the summary line, and
/// records unchanged without a schema.
@Suite("Run report and decoding on the command line", .serialized)
struct RunReportCommandLineTests {
    static let schema = "Fixtures/schema/example-schema.json"
    /// Valid and invalid fixtures, Apple's development example among them, and exact repeats (duplicates).
    /// Apple's SKAdNetwork examples fail here (the fixture SKAdNetwork key stands in for Apple's); the fixtures'
    /// own, of every version signed with a P-256 key, are valid.
    static let inputs = ["Fixtures/valid", "Fixtures/invalid/postback", "Fixtures/dedupe", "Fixtures/skadnetwork/valid"]

    static func run(_ arguments: [String], stdin: String = "") throws -> CommandLineTests.Run {
        try CommandLineTests.run(TestPostbackSigner.keyArguments + arguments, stdin: stdin)
    }

    static func json(_ url: URL) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
    }

    /// The counts a report must give, computed here from the records alone (and the schema file, read here).
    struct Expected {
        var items = 0, valid = 0, duplicates = 0, warnings = 0
        var reasons: [String: Int] = [:], rules: [String: Int] = [:], environments: [String: Int] = [:]
        var tiers = [Int](repeating: 0, count: 4)
        var windows = [Int](repeating: 0, count: 3), withoutValue = [Int](repeating: 0, count: 3)
        var fine = [Int](repeating: 0, count: 64)
        var coarse: [String: Int] = ["low": 0, "medium": 0, "high": 0]
        /// By "app/source/ad network id": postbacks, window-1 postbacks, revenue low and high sums.
        var campaigns: [String: (postbacks: Int, first: Int, low: Double, high: Double)] = [:]
        /// By "app/source": postbacks per window (1-3), and how many postbacks' meanings name each event.
        var windowsByCampaign: [String: [Int]] = [:]
        var eventsByCampaign: [String: [String: Int]] = [:]

        init(records: [[String: Any]], schema: [String: Any]?) {
            let apps = (schema?["apps"] as? [[String: Any]]) ?? []
            for record in records {
                items += 1
                let errors = record["errors"] as? [[String: Any]] ?? []
                for warning in record["warnings"] as? [[String: Any]] ?? [] {
                    warnings += 1
                    rules[warning["rule"] as! String, default: 0] += 1
                }
                if record["duplicate-of"] != nil { duplicates += 1 }
                guard errors.isEmpty else {
                    reasons[errors[0]["code"] as! String, default: 0] += 1
                    continue
                }
                valid += 1
                environments[record["environment"] as! String, default: 0] += 1
                // AdAttributionKit and SKAdNetwork postbacks alike (docs/schema.md); SKAdNetwork before 4.0 signs
                // no index (its one postback is window 1) and names a campaign id instead of a source identifier.
                let kind = record["kind"] as? String
                guard kind == "postback" || kind == "skadnetwork", let fields = record["fields"] as? [String: Any]
                else { continue }
                let skAdNetwork = kind == "skadnetwork"
                let unsigned = record["unsigned"] as? [String: Any] ?? [:]
                if !skAdNetwork { tiers[record["tier"] as! Int] += 1 }
                let index = fields["postback-sequence-index"] as? Int ?? 0
                windows[index] += 1
                let fineValue = unsigned["conversion-value"] as? Int
                let coarseValue = unsigned["coarse-conversion-value"] as? String
                if fineValue == nil && coarseValue == nil { withoutValue[index] += 1 }
                if let fineValue { fine[fineValue] += 1 }
                if let coarseValue { coarse[coarseValue, default: 0] += 1 }
                guard schema != nil else { continue }
                let app = (fields[skAdNetwork ? "app-id" : "advertised-item-identifier"] as! NSNumber).uint64Value
                let source = fields["source-identifier"] as? String ?? "campaign-id \(fields["campaign-id"] as! Int)"
                let network = (fields["ad-network-identifier"] ?? fields["ad-network-id"]) as! String
                let key = "\(app)/\(source)/\(network)"
                var totals = campaigns[key] ?? (0, 0, 0, 0)
                totals.postbacks += 1
                if index == 0 { totals.first += 1 }
                let entry = apps.first { ($0["advertised-item-identifier"] as! NSNumber).uint64Value == app }
                let window = (entry?["windows"] as? [String: Any])?[String(index + 1)] as? [String: Any]
                var meaning: [String: Any]?
                if let fineValue, let ranges = window?["fine"] as? [String: Any] {
                    meaning = ranges.first { key, _ in
                        let bounds = key.split(separator: "-").map { Int($0)! }
                        return (bounds[0]...(bounds.last!)).contains(fineValue)
                    }?.value as? [String: Any]
                }
                if meaning == nil, let coarseValue {
                    meaning = (window?["coarse"] as? [String: Any])?[coarseValue] as? [String: Any]
                }
                if let revenue = meaning?["revenue"] as? [String: Any] {
                    totals.low += (revenue["low"] as! NSNumber).doubleValue
                    totals.high += (revenue["high"] as! NSNumber).doubleValue
                }
                campaigns[key] = totals
                windowsByCampaign[key, default: [0, 0, 0]][index] += 1
                for event in Set(meaning?["events"] as? [String] ?? []) {
                    eventsByCampaign[key, default: [:]][event, default: 0] += 1
                }
            }
        }
    }

    @Test("The JSON report's counts are those of the run's records", arguments: [false, true])
    func reportMatchesRecords(withSchema: Bool) throws {
        let scratch = try CommandLineScratch()
        let report = scratch.url("report.json")
        let run = try Self.run(["--format", "jsonl", "--allow-development", "--report", report.path]
            + (withSchema ? ["--schema", Self.schema] : []) + Self.inputs)
        #expect(run.status == 1, "\(run.stderr)")
        let schema = withSchema
            ? try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: TestPaths.packageRoot
                .appendingPathComponent(Self.schema))) as? [String: Any]) : nil
        let expected = Expected(records: run.records, schema: schema)
        #expect(expected.valid > 50 && expected.duplicates > 0 && expected.warnings > 0, "the inputs cover it all")
        let json = try Self.json(report)
        #expect(json["items"] as? Int == expected.items)
        #expect(json["valid"] as? Int == expected.valid)
        #expect(json["invalid"] as? Int == expected.items - expected.valid)
        #expect(json["duplicates"] as? Int == expected.duplicates)
        #expect(json["warnings"] as? Int == expected.warnings)
        #expect(json["invalid-reasons"] as? [String: Int] == expected.reasons)
        #expect(json["warnings-by-rule"] as? [String: Int] == expected.rules)
        let environments = try #require(json["valid-by-environment"] as? [String: Int])
        #expect(environments.filter { $0.value > 0 } == expected.environments)
        let tiers = try #require(json["tiers"] as? [String: Int])
        #expect((0..<4).map { tiers[String($0)] } == expected.tiers)
        let windows = try #require(json["windows"] as? [[String: Any]])
        #expect(windows.map { $0["postbacks"] as? Int } == expected.windows)
        #expect(windows.map { $0["without-value"] as? Int } == expected.withoutValue)
        for (index, window) in windows.enumerated() where expected.windows[index] > 0 {
            let rate = try #require(window["null-rate"] as? Double)
            #expect(abs(rate - Double(expected.withoutValue[index]) / Double(expected.windows[index])) < 0.0001)
        }
        #expect(json["fine-values"] as? [Int] == expected.fine)
        #expect(json["coarse-values"] as? [String: Int] == expected.coarse)
        guard withSchema else {
            for member in ["campaigns", "totals", "events"] { #expect(json[member] is NSNull, "\(member)") }
            return
        }
        let campaigns = try #require(json["campaigns"] as? [[String: Any]])
        #expect(campaigns.count == expected.campaigns.count)
        #expect(expected.campaigns["1108187390/campaign-id 42/fixture.skadnetwork"].map { $0.postbacks > 5 }
                == true, "SKAdNetwork 1.0-3.0 postbacks are counted by their campaign id")
        #expect(expected.campaigns["1108187390/12/fixture.adattributionkit"] != nil
                && expected.campaigns["1108187390/12/fixture.skadnetwork"] != nil,
                "two networks' source identifier 12 are two campaigns")
        for campaign in campaigns {
            let key = "\((campaign["advertised-item-identifier"] as! NSNumber).uint64Value)/"
                + "\(campaign["source-identifier"] as? String ?? "campaign-id \(campaign["campaign-id"] as! Int)")/"
                + "\(campaign["ad-network-id"] as! String)"
            // A version 1 schema names neither networks nor apps.
            #expect(campaign["network"] is NSNull && campaign["app-name"] is NSNull, "\(key)")
            let totals = try #require(expected.campaigns[key], "\(key) is not in the records")
            #expect(campaign["postbacks"] as? Int == totals.postbacks, "\(key)")
            #expect(campaign["window-1-postbacks"] as? Int == totals.first, "\(key)")
            #expect(abs((campaign["revenue-low"] as! NSNumber).doubleValue - totals.low) < 0.000001, "\(key)")
            #expect(abs((campaign["revenue-high"] as! NSNumber).doubleValue - totals.high) < 0.000001, "\(key)")
            let windows = (1...3).map { campaign["window-\($0)-postbacks"] as? Int ?? -1 }
            #expect(windows == expected.windowsByCampaign[key], "\(key)")
            #expect(campaign["events"] as? [String: Int] == expected.eventsByCampaign[key, default: [:]], "\(key)")
        }
        // The totals add the campaigns up; the events by app add up their campaigns' events.
        let totals = try #require(json["totals"] as? [String: Any])
        #expect(totals["postbacks"] as? Int == expected.campaigns.values.map(\.postbacks).reduce(0, +))
        for window in 0..<3 {
            #expect(totals["window-\(window + 1)-postbacks"] as? Int
                == expected.windowsByCampaign.values.map { $0[window] }.reduce(0, +))
        }
        var eventsByApp: [String: [String: Int]] = [:]
        for (key, events) in expected.eventsByCampaign {
            let app = String(key.prefix { $0 != "/" })
            eventsByApp[app, default: [:]].merge(events, uniquingKeysWith: +)
        }
        let apps = try #require(json["events"] as? [[String: Any]])
        #expect(apps.count == eventsByApp.filter { !$0.value.isEmpty }.count)
        for app in apps {
            let id = "\((app["advertised-item-identifier"] as! NSNumber).uint64Value)"
            #expect(app["events"] as? [String: Int] == eventsByApp[id], "\(id)")
        }
        #expect(json["days"] is NSNull, "a run's items carry no day")
        #expect(json["inputs"] as? [String] == Self.inputs)
    }

    @Test("Without a schema records are those of a plain run; with one, valid postbacks gain decoded on both paths")
    func recordsUnchangedWithoutSchema() throws {
        let scratch = try CommandLineScratch()
        let plain = try Self.run(["--format", "jsonl", "--allow-development"] + Self.inputs)
        let reported = try Self.run(["--format", "jsonl", "--allow-development", "--report",
                                     scratch.url("r.html").path, "--label", "x"] + Self.inputs)
        #expect(plain.stdout.utf8.elementsEqual(reported.stdout.utf8))
        let fast = try Self.run(["--format", "jsonl", "--allow-development", "--schema", Self.schema] + Self.inputs)
        let general = try Self.run(["--format", "jsonl", "--allow-development", "--schema", Self.schema,
                                    "--no-fast-path"] + Self.inputs)
        let plainLines = plain.stdout.split(separator: "\n")
        for (lines, path) in [(fast.stdout.split(separator: "\n"), "fast"),
                              (general.stdout.split(separator: "\n"), "general")] {
            try #require(lines.count == plainLines.count)
            var decodedCount = 0, skAdNetworkDecoded = 0
            for (line, plainLine) in zip(lines, plainLines) {
                let record = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
                let isValidPostback = record["verdict"] as? String == "valid"
                    && ["postback", "skadnetwork"].contains(record["kind"] as? String)
                guard isValidPostback else {
                    #expect(line.utf8.elementsEqual(plainLine.utf8), "\(path): \(line)")
                    continue
                }
                decodedCount += 1
                if record["kind"] as? String == "skadnetwork" { skAdNetworkDecoded += 1 }
                // The record is the plain one with `,"decoded":{…}` before its closing brace.
                #expect(line.utf8.starts(with: plainLine.utf8.dropLast()), "\(path): \(line)")
                let decoded = try #require(record["decoded"] as? [String: Any])
                let index = (record["fields"] as! [String: Any])["postback-sequence-index"] as? Int ?? 0
                #expect(decoded["window"] as? Int == index + 1)
                #expect(decoded["values-signed"] as? Bool == false)
            }
            #expect(decodedCount > 50, "\(path)")
            #expect(skAdNetworkDecoded > 10, "\(path)")
        }
        // Both paths decode alike (the times aside: each run has its own start).
        func withoutTimes(_ text: String) -> [String] {
            text.split(separator: "\n").map {
                String($0).replacing(/"(arrival|install-earliest|install-latest)":"[^"]*"/, with: "")
            }
        }
        #expect(withoutTimes(fast.stdout) == withoutTimes(general.stdout))
    }

    @Test("A malformed schema stops the run before anything is read, naming the line and reason")
    func malformedSchemaRefused() throws {
        let scratch = try CommandLineScratch()
        let path = scratch.url("bad.json").path
        try Data("{\n  \"schema-version\": 1,\n  \"apps\": [{\"advertised-item-identifier\": \"x\"}]\n}\n".utf8)
            .write(to: URL(fileURLWithPath: path))
        let run = try Self.run(["--format", "jsonl", "--schema", path, "Fixtures/valid/postback"])
        #expect(run.status == 2)
        #expect(run.stdout.isEmpty)
        #expect(run.stderr.contains("--schema \(path): line 3: \"advertised-item-identifier\" must be"),
                "\(run.stderr)")
    }

    @Test("Text from input and the command line is HTML-escaped in the page, and kept exactly in the JSON")
    func hostileLabelEscaped() throws {
        let scratch = try CommandLineScratch()
        let label = "<script>alert('x')</script>&\"é\u{1}"
        let page = scratch.url("report.html"), json = scratch.url("report.json")
        // The postback on standard input: the page names standard input by its label.
        let postback = String(decoding: try TestPaths.bytes(TestPaths.packageRoot
            .appendingPathComponent("Fixtures/valid/postback/t5-3digit-source-coarse.json")), as: UTF8.self)
        for report in [page, json] {
            let run = try Self.run(["--format", "jsonl", "--schema", Self.schema, "--report", report.path,
                                    "--label", label.replacingOccurrences(of: "\u{1}", with: "")], stdin: postback)
            #expect(run.status == 0, "\(run.stderr)")
        }
        let html = String(decoding: try Data(contentsOf: page), as: UTF8.self)
        #expect(!html.contains("<script"))
        #expect(html.contains("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;&quot;é"))
        #expect(html.contains("Retargeting &lt;lapsed&gt;") && !html.contains("<lapsed>"))
        #expect(!html.contains("http://") && !html.contains("https://") && !html.contains(" src="),
                "the page fetches nothing")
        let reportLabel = try #require(try Self.json(json)["label"] as? String)
        #expect(reportLabel.utf8.elementsEqual("<script>alert('x')</script>&\"é".utf8))
    }

    @Test("--label refuses control characters")
    func labelRefusesControls() throws {
        let run = try Self.run(["--label", "a\u{1B}[31m", "Fixtures/valid/postback"])
        #expect(run.status == 2)
        #expect(!run.stderr.contains("\u{1B}"))
    }

    @Test("A postback read from standard input is remembered under --label, and the report names the label")
    func standardInputLabel() throws {
        let scratch = try CommandLineScratch()
        let state = scratch.url("state.sqlite").path
        let postback = "Fixtures/valid/postback/tier1-index0-no-value.json"
        let body = String(decoding: try TestPaths.bytes(TestPaths.packageRoot.appendingPathComponent(postback)),
                          as: UTF8.self)
        let first = try Self.run(["--format", "jsonl", "--state", state, "--label", "upload 2026-03-10"],
                                 stdin: body)
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.records.first?["source"] as? String == "-")
        let again = try Self.run(["--format", "jsonl", "--state", state, postback])
        #expect(again.records.first?["duplicate-of-source"] as? String == "upload 2026-03-10")
        // Without --label the report names standard input `stdin` and the run's date.
        let report = scratch.url("r.json")
        _ = try Self.run(["--format", "jsonl", "--report", report.path], stdin: body)
        let label = try #require(try Self.json(report)["label"] as? String)
        #expect(label.hasPrefix("stdin 20") && label.hasSuffix("Z"), "\(label)")
    }

    @Test("A run a signal stops still writes its report, saying so, with the records written")
    func interruptedRunReports() throws {
        let scratch = try CommandLineScratch()
        let report = scratch.url("report.json"), output = scratch.url("records.jsonl")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        let process = Process()
        process.executableURL = try CommandLineTests.binary()
        process.arguments = TestPostbackSigner.keyArguments + ["--format", "jsonl", "--report", report.path]
        process.currentDirectoryURL = TestPaths.packageRoot
        let input = Pipe()
        process.standardInput = input
        process.standardOutput = try FileHandle(forWritingTo: output)
        process.standardError = FileHandle.nullDevice
        try process.run()
        let body = try TestPaths.bytes(TestPaths.packageRoot
            .appendingPathComponent("Fixtures/valid/postback/compact-one-line-body.json"))
        CommandLineTests.writeIgnoringClosedPipe(Data(body) + Data("\n".utf8), to: input.fileHandleForWriting)
        // The record of the line written, then the signal while the run waits for more input.
        let deadline = Date().addingTimeInterval(30)
        while (try? Data(contentsOf: output))?.isEmpty ?? true, Date() < deadline { usleep(20_000) }
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
        try input.fileHandleForWriting.close()
        #expect(process.terminationStatus == 143)
        let json = try Self.json(report)
        #expect((json["interrupted"] as? String)?.contains("SIGTERM") == true, "\(json["interrupted"] ?? "")")
        #expect(json["items"] as? Int == 1 && json["valid"] as? Int == 1)
        #expect(String(decoding: try Data(contentsOf: output), as: UTF8.self).split(separator: "\n").count == 1)
    }

    @Test("The summary line names valid items on development keys and warnings by rule")
    func summaryLine() throws {
        let run = try Self.run(["--allow-development", "Fixtures/valid/apple",
                                "Fixtures/valid/postback/u4-no-ad-interaction-type.json"])
        #expect(run.stderr.contains("2 items: 2 valid (1 on development keys), 0 invalid; 1 warning (U4 1);"),
                "\(run.stderr)")
    }
}
