import Foundation
import Testing

/// Issue 33 item 1 through the built binary: a version 2 schema names each valid postback's network and app in
/// `decoded`, its campaign by the network's own identifiers (dated ones by the run's start), and the report
/// counts each network's campaigns apart.
@Suite("Schema version 2 on the command line", .serialized)
struct SchemaNetworksCommandLineTests {
    static let schemaPath = "Fixtures/schema/example-schema-v2.json"
    /// AdAttributionKit postbacks of `fixture.adattributionkit` and Apple's development example, and SKAdNetwork
    /// postbacks of `fixture.skadnetwork`: both fixture networks use source identifiers 12 and 123.
    static let inputs = ["Fixtures/valid", "Fixtures/skadnetwork/valid"]
    /// The test-only P-192 key, for the SKAdNetwork 1.0 and 2.0 fixtures (the P-256 one is always given).
    static let p192 = ["--skadnetwork-key-p192", "Fixtures/keys/fixture-skadnetwork-p192.pem"]

    /// The schema, read here with Foundation's parser, independently of the one under test.
    static func schema() throws -> [[String: Any]] {
        let data = try Data(contentsOf: TestPaths.packageRoot.appendingPathComponent(schemaPath))
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        return try #require(object["apps"] as? [[String: Any]])
    }

    /// The start of the UTC day `text` (YYYY-MM-DD) names.
    static func day(_ text: String) -> Date {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withFullDate]
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter.date(from: text)!
    }

    /// A schema campaign value's name at `date`: a name, or the dated entry whose days hold `date`.
    static func name(_ value: Any?, at date: Date) -> String? {
        if let name = value as? String { return name }
        return (value as? [[String: Any]])?.first { entry in
            let from = (entry["valid-from"] as? String).map(day) ?? .distantPast
            let until = (entry["valid-until"] as? String).map { day($0).addingTimeInterval(86_400) } ?? .distantFuture
            return from <= date && date < until
        }?["name"] as? String
    }

    /// What docs/schema.md says `decoded` must name for a record: (network, app name, campaign).
    static func expectedNames(_ record: [String: Any], apps: [[String: Any]], at date: Date)
        -> (network: String?, app: String?, campaign: String?) {
        let skAdNetwork = record["kind"] as? String == "skadnetwork"
        let fields = record["fields"] as! [String: Any]
        let appID = (fields[skAdNetwork ? "app-id" : "advertised-item-identifier"] as! NSNumber).uint64Value
        let networkID = (fields[skAdNetwork ? "ad-network-id" : "ad-network-identifier"] as! String)
        guard let app = apps.first(where: { ($0["advertised-item-identifier"] as! NSNumber).uint64Value == appID })
        else { return (nil, nil, nil) }
        let network = (app["networks"] as? [[String: Any]] ?? []).first {
            ($0["ad-network-id"] as! String).utf8.elementsEqual(networkID.utf8)
        }
        let (member, key) = fields["source-identifier"].map { ("campaigns", $0 as! String) }
            ?? ("campaign-ids", String(fields["campaign-id"] as! Int))
        let campaign = name((network?[member] as? [String: Any])?[key], at: date)
            ?? name((app[member] as? [String: Any])?[key], at: date)
        return (network?["name"] as? String, app["name"] as? String, campaign)
    }

    @Test("decoded names each postback's network, app and the network's campaign, as the last two members")
    func decodedNames() throws {
        let run = try RunReportCommandLineTests.run(["--format", "jsonl", "--allow-development", "--schema",
                                                     Self.schemaPath] + Self.p192 + Self.inputs)
        let apps = try Self.schema()
        var checked = 0, networksNamed = Set<String>(), fallbacks = 0
        for line in run.stdout.split(separator: "\n") {
            let record = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            guard let decoded = record["decoded"] as? [String: Any] else { continue }
            let arrival = try #require(ISO8601DateFormatter.withFractions.date(from: decoded["arrival"] as! String))
            let expected = Self.expectedNames(record, apps: apps, at: arrival)
            #expect(decoded["network"] as? String == expected.network, "\(line)")
            #expect(decoded["app-name"] as? String == expected.app, "\(line)")
            #expect(decoded["campaign"] as? String == expected.campaign, "\(line)")
            // Added at the end of decoded: everything before is as a version 1 schema writes it.
            let tail = #","network":"# + (expected.network.map { "\"\($0)\"" } ?? "null")
                + #","app-name":"# + (expected.app.map { "\"\($0)\"" } ?? "null")
                + "}}"
            #expect(line.hasSuffix(tail), "\(line)")
            checked += 1
            if let network = expected.network { networksNamed.insert(network) }
            if expected.network != nil, expected.campaign == "Brand (any network)" { fallbacks += 1 }
        }
        #expect(checked > 60)
        #expect(networksNamed == ["Fixture Ads", "Fixture SKAdNetwork", "AdAttributionKit development"])
        #expect(fallbacks > 0, "a network without a name for 12 takes the app's")
        #expect(run.stdout.contains(#""campaign":"Winter sale / video / placement 4""#),
                "the dated campaign in force at the run's start")
    }

    @Test("The report counts each network's campaigns apart and names network and app at the end of each entry")
    func reportByNetwork() throws {
        let scratch = try CommandLineScratch()
        let report = scratch.url("report.json")
        let run = try RunReportCommandLineTests.run(["--format", "jsonl", "--allow-development", "--schema",
                                                     Self.schemaPath, "--report", report.path] + Self.p192
                                                        + Self.inputs)
        let json = try RunReportCommandLineTests.json(report)
        let campaigns = try #require(json["campaigns"] as? [[String: Any]])
        // Counted here from the records: postbacks per (app, source, network).
        var counts: [String: Int] = [:]
        for record in run.records where record["decoded"] != nil {
            let fields = record["fields"] as! [String: Any]
            let app = ((fields["advertised-item-identifier"] ?? fields["app-id"]) as! NSNumber).uint64Value
            let source = fields["source-identifier"] as? String ?? "id \(fields["campaign-id"] as! Int)"
            let network = (fields["ad-network-identifier"] ?? fields["ad-network-id"]) as! String
            counts["\(app)/\(source)/\(network)", default: 0] += 1
        }
        #expect(campaigns.count == counts.count)
        for campaign in campaigns {
            let source = campaign["source-identifier"] as? String ?? "id \(campaign["campaign-id"] as! Int)"
            let network = try #require(campaign["ad-network-id"] as? String)
            let key = "\((campaign["advertised-item-identifier"] as! NSNumber).uint64Value)/\(source)/\(network)"
            #expect(campaign["postbacks"] as? Int == counts[key], "\(key)")
        }
        let twelves = campaigns.filter {
            ($0["advertised-item-identifier"] as! NSNumber).uint64Value == 1108187390
                && $0["source-identifier"] as? String == "12"
        }
        #expect(twelves.map { $0["network"] as? String } == ["Fixture Ads", "Fixture SKAdNetwork"])
        #expect(twelves.map { $0["campaign"] as? String } == ["Spring launch (2-digit)", "Brand (any network)"])
        #expect(twelves.allSatisfy { $0["app-name"] as? String == "Fixture Quest" })
        // The new members close each entry, after the members a version 1 report has.
        let text = String(decoding: try Data(contentsOf: report), as: UTF8.self)
        #expect(text.contains(#","ad-network-id":"fixture.skadnetwork","#
            + #""network":"Fixture SKAdNetwork","app-name":"Fixture Quest"}"#))
    }
}

extension ISO8601DateFormatter {
    /// RFC 3339 with milliseconds, as records write times.
    static var withFractions: ISO8601DateFormatter {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter
    }
}
