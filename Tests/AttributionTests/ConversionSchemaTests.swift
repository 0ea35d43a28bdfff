import Foundation
import Testing

@_spi(CommandLine) @_spi(Servers) @_spi(Stores) @testable import Attribution

/// Issue 24 item 1: a conversion schema is read strictly (every refusal names its line and reason), and a valid
/// postback's facts decode to its window, install-time range, campaign and meaning.
@Suite("Conversion schema")
struct ConversionSchemaTests {
    /// A schema text with one app: `windows` and `extra` spliced in (each on lines of their own).
    static func schema(windows: String = "", extraApp: String = "") -> String {
        """
        {
          "schema-version": 1,
          "apps": [
            {
              "advertised-item-identifier": 1108187390,
              "valid-from": "2026-01-01",
              "valid-until": "2026-12-31",
              "currency": "USD",
              "campaigns": {"12": "Brand", "1234": "Video <4>"},
              "windows": {
                "1": {"fine": {"0": {"events": ["install"]},
                               "1-31": {"events": ["install", "purchase"], "revenue": {"low": 0.99, "high": 4.99}}},
                      "coarse": {"low": {"events": ["install"]}}},
                "2": {"coarse": {"high": {"events": ["subscription"], "revenue": {"low": 5, "high": 50}}}}\(windows)
              }
            }\(extraApp)
          ]
        }
        """
    }

    static func parse(_ text: String) throws -> ConversionSchema {
        try ConversionSchema(parsing: Array(text.utf8))
    }

    @Test("The example schema in Fixtures/ is accepted")
    func exampleAccepted() throws {
        let bytes = try TestPaths.bytes(TestPaths.fixtures.appendingPathComponent("schema/example-schema.json"))
        let schema = try ConversionSchema(parsing: bytes)
        #expect(schema.apps.map(\.advertisedItemIdentifier) == [1108187390, 10738027756, 525463029])
    }

    /// Each malformed schema: the text, the line the refusal must name, and words its reason must hold.
    static let malformed: [(name: String, text: String, line: Int, reason: String)] = [
        ("duplicate member", "{\"schema-version\": 1,\n\"apps\": [],\n\"apps\": []}", 3, "duplicate member"),
        ("trailing comma", "{\"schema-version\": 1,\n\"apps\": [],\n}", 3, "at byte"),
        ("wrong version", "{\n\"schema-version\": 3,\n\"apps\": []}", 2, "must be 1 or 2"),
        ("version 0", "{\n\"schema-version\": 0,\n\"apps\": []}", 2, "must be 1 or 2"),
        ("no version", "{\n\"apps\": []\n}", 1, "schema-version"),
        ("unknown member", "{\"schema-version\": 1,\n\"apps\": [],\n\"appz\": 1}", 3, "unknown member \"appz\""),
        ("apps not an array", "{\"schema-version\": 1,\n\"apps\": {}}", 2, "must be an array"),
        ("fine value in window 2", schema(windows: ",\n        \"3\": {\"fine\": {}}"), 15, "only window 1"),
        ("fine value 64", schema().replacingOccurrences(of: "\"1-31\"", with: "\"1-64\""),
         12, "N-M"),
        ("fine value with a leading zero", schema().replacingOccurrences(of: "\"1-31\"", with: "\"01-31\""), 12,
         "no leading zero"),
        ("fine values given twice", schema().replacingOccurrences(of: "\"1-31\"", with: "\"0-31\""), 12,
         "given twice"),
        ("revenue low above high", schema().replacingOccurrences(of: "\"low\": 5,", with: "\"low\": 51,"), 14,
         "above"),
        ("negative revenue", schema().replacingOccurrences(of: "\"low\": 0.99", with: "\"low\": -1"), 12,
         "from 0"),
        ("impossible date", schema().replacingOccurrences(of: "2026-01-01", with: "2026-02-30"), 6, "YYYY-MM-DD"),
        ("until before from", schema().replacingOccurrences(of: "2026-12-31", with: "2025-12-31"), 7, "before"),
        ("campaign key of five digits", schema().replacingOccurrences(of: "\"1234\":", with: "\"12345\":"), 9,
         "unknown member \"12345\""),
        ("campaign id 0", schema().replacingOccurrences(of: "\"campaigns\":", with: "\"campaign-ids\": {\"0\": \"x\"},\n      \"campaigns\":"), 9, "unknown member \"0\""),
        ("campaign id 101", schema().replacingOccurrences(of: "\"campaigns\":", with: "\"campaign-ids\": {\"101\": \"x\"},\n      \"campaigns\":"), 9, "unknown member \"101\""),
        ("campaign id with a leading zero", schema().replacingOccurrences(of: "\"campaigns\":", with: "\"campaign-ids\": {\"042\": \"x\"},\n      \"campaigns\":"), 9, "unknown member \"042\""),
        ("campaign id named by an empty string", schema().replacingOccurrences(of: "\"campaigns\":", with: "\"campaign-ids\": {\"42\": \"\"},\n      \"campaigns\":"), 9, "non-empty"),
        ("lower-case currency", schema().replacingOccurrences(of: "\"USD\"", with: "\"usd\""), 8, "ISO 4217"),
        ("coarse value misspelt",
         schema().replacingOccurrences(of: "\"low\": {\"events\"", with: "\"lo\": {\"events\""),
         13, "unknown member \"lo\""),
        ("events missing", schema().replacingOccurrences(of: "{\"events\": [\"subscription\"], ", with: "{"), 14,
         "events"),
        ("overlapping periods of one app", schema(extraApp: """
            ,
                {"advertised-item-identifier": 1108187390,
                 "valid-from": "2026-06-01"}
            """), 17, "overlaps"),
    ]

    @Test("A malformed schema is refused with its line and reason", arguments: malformed.indices)
    func malformedRefused(_ index: Int) throws {
        let (name, text, line, reason) = Self.malformed[index]
        do {
            _ = try Self.parse(text)
            Issue.record("\(name): accepted")
        } catch let refusal as AttributionError {
            #expect(refusal.code == .invalidSchema, "\(name): \(refusal)")
            #expect(refusal.reason.hasPrefix("line \(line): "), "\(name): \(refusal)")
            #expect(refusal.reason.contains(reason), "\(name): \(refusal)")
        }
    }

    static let arrival = Date(timeIntervalSince1970: 1_773_144_000)  // 2026-03-10T12:00:00Z
    static let day = 86_400.0

    static func facts(index: Int, fine: Int? = nil, coarse: CoarseConversionValue? = nil, source: String = "1234",
                      app: UInt64 = 1108187390) -> ConversionFacts {
        ConversionFacts(environment: .production, advertisedItemIdentifier: app, sourceIdentifier: source,
                        postbackSequenceIndex: index, fineValue: fine, coarseValue: coarse, valuesAreSigned: false,
                        tier: 2)
    }

    /// Window by window: the install range from Apple's figures (days 0-2, 3-7, 8-35; delays 24-48 h, then
    /// 24-144 h), worked by hand: earliest = arrival - (last day + 1) days - longest delay, latest = arrival -
    /// first day - shortest delay.
    @Test("Each window's install range follows Apple's windows and delays",
          arguments: [(0, 3 * day + 48 * 3600, 24 * 3600.0), (1, 8 * day + 144 * 3600, 3 * day + 24 * 3600),
                      (2, 36 * day + 144 * 3600, 8 * day + 24 * 3600)])
    func installRange(index: Int, earliestBefore: Double, latestBefore: Double) throws {
        let schema = try Self.parse(Self.schema())
        let decoded = try #require(schema.decode(Self.facts(index: index), arrival: Self.arrival))
        #expect(decoded.window.number == index + 1)
        #expect(decoded.install.lowerBound == Self.arrival.addingTimeInterval(-earliestBefore))
        #expect(decoded.install.upperBound == Self.arrival.addingTimeInterval(-latestBefore))
    }

    @Test("Fine and coarse values decode to their meaning, campaign and revenue; unsigned values are marked")
    func meanings() throws {
        let schema = try Self.parse(Self.schema())
        let fine = try #require(schema.decode(Self.facts(index: 0, fine: 17), arrival: Self.arrival))
        #expect(fine.meaning?.events == ["install", "purchase"])
        #expect(fine.meaning?.revenue == ConversionSchema.RevenueRange(low: Decimal(string: "0.99")!,
                                                                       high: Decimal(string: "4.99")!))
        #expect(fine.campaign == "Video <4>")
        #expect(fine.currency == "USD")
        #expect(fine.valuesAreSigned == false)
        #expect(fine.appKnown)

        let coarse = try #require(schema.decode(Self.facts(index: 1, coarse: .high, source: "12"),
                                                arrival: Self.arrival))
        #expect(coarse.meaning?.events == ["subscription"])
        #expect(coarse.campaign == "Brand")

        // A value the schema leaves out, a campaign it does not name, an app it does not have.
        let unmapped = try #require(schema.decode(Self.facts(index: 1, coarse: .low, source: "99"),
                                                  arrival: Self.arrival))
        #expect(unmapped.meaning == nil && unmapped.campaign == nil && unmapped.appKnown)
        let unknownApp = try #require(schema.decode(Self.facts(index: 0, fine: 0, app: 7), arrival: Self.arrival))
        #expect(!unknownApp.appKnown && unknownApp.meaning == nil)
        // Outside the validity period (2026-01-01 to 2026-12-31, inclusive) the app is unknown.
        let later = Self.arrival.addingTimeInterval(300 * Self.day)
        #expect(schema.decode(Self.facts(index: 0, fine: 0), arrival: later)?.appKnown == false)
        let lastDay = try #require(schema.app(1108187390, at: Date(timeIntervalSince1970: 1_798_761_599)))
        #expect(lastDay.advertisedItemIdentifier == 1108187390)  // 2026-12-31T23:59:59Z
    }

    @Test("The decoded member is added before the record's closing brace, as JSON")
    func recordMember() throws {
        let schema = try Self.parse(Self.schema())
        let decoded = try #require(schema.decode(Self.facts(index: 0, fine: 0), arrival: Self.arrival))
        let record = Array(#"{"source":"x","line":1}"#.utf8)
        let with = decoded.adding(to: record)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(with)) as? [String: Any])
        let member = try #require(object["decoded"] as? [String: Any])
        #expect(member["window"] as? Int == 1)
        #expect(member["arrival"] as? String == "2026-03-10T12:00:00.000Z")
        #expect(member["install-earliest"] as? String == "2026-03-05T12:00:00.000Z")
        #expect(member["install-latest"] as? String == "2026-03-09T12:00:00.000Z")
        #expect(member["values-signed"] as? Bool == false)
        #expect(member["events"] as? [String] == ["install"])
        #expect(member["revenue"] is NSNull)
        #expect(with.starts(with: record.dropLast()))
        // The times written once per run give the same bytes as those written per record.
        #expect(decoded.adding(to: record, times: DecodedTimes(arrival: Self.arrival)) == with)
        let other = try #require(schema.decode(Self.facts(index: 2), arrival: Self.arrival))
        #expect(other.adding(to: record, times: DecodedTimes(arrival: Self.arrival)) == other.adding(to: record))
    }

    /// An SKAdNetwork postback's facts, as ``ConversionFacts/init(_:)`` reads a valid result's.
    static func skAdNetworkFacts(version: SKAdNetworkVersion, campaignID: UInt64? = nil, source: String? = nil,
                                 index: Int = 0, fine: Int? = nil, coarse: CoarseConversionValue? = nil)
        -> ConversionFacts {
        ConversionFacts(environment: .production, advertisedItemIdentifier: 1108187390, sourceIdentifier: source,
                        postbackSequenceIndex: index, fineValue: fine, coarseValue: coarse, valuesAreSigned: false,
                        tier: nil, campaignID: campaignID, skAdNetworkVersion: version)
    }

    @Test("An SKAdNetwork 1.0-3.0 postback's campaign-id takes its name from campaign-ids, a 4.0 one's source-identifier from campaigns; its value means what window 1's fine value means")
    func skAdNetworkCampaigns() throws {
        let schema = try Self.parse(Self.schema().replacingOccurrences(
            of: "\"campaigns\":", with: "\"campaign-ids\": {\"1\": \"One\", \"12\": \"Twelve\", \"100\": \"Hundred\"},\n      \"campaigns\":"))
        for (id, name) in [(1 as UInt64, "One"), (12, "Twelve"), (100, "Hundred")] {
            let decoded = try #require(schema.decode(Self.skAdNetworkFacts(version: .v3_0, campaignID: id, fine: 17),
                                                     arrival: Self.arrival))
            #expect(decoded.campaign == name)
            #expect(decoded.window.number == 1)
            #expect(decoded.meaning?.events == ["install", "purchase"], "fine value 17 is in \"1-31\"")
            #expect(!decoded.valuesAreSigned)
        }
        // Campaign id 12 is not source identifier "12": each has its own map.
        let v4 = try #require(schema.decode(Self.skAdNetworkFacts(version: .v4_0, source: "12", index: 1,
                                                                   coarse: .high), arrival: Self.arrival))
        #expect(v4.campaign == "Brand")
        #expect(v4.meaning?.events == ["subscription"])
        #expect(schema.decode(Self.skAdNetworkFacts(version: .v2_1, campaignID: 42), arrival: Self.arrival)?
            .campaign == nil)
    }

    /// SKAdNetwork before 4.0 [Apple: updateConversionValue(_:)]: a 24-hour timer from the first launch,
    /// restarted by each increase of the value (values only increase), then the postback within 0-24 hours. Worked
    /// by hand: the latest install is a day before sending (no increase, no delay); the earliest, for a final value
    /// v, is v increases each a day apart, the last timer and the whole delay: (v + 2) days before. No value
    /// bounds v by 63.
    @Test("An SKAdNetwork 1.0-3.0 postback's install range follows its timer, not the windows' delays",
          arguments: [(0 as Int?, 2.0), (1, 3), (20, 22), (63, 65), (nil, 65)])
    func skAdNetworkTimer(finalValue: Int?, earliestDays: Double) throws {
        let schema = try Self.parse(Self.schema())
        for version in [SKAdNetworkVersion.v1_0, .v2_0, .v2_1, .v2_2, .v3_0] {
            let decoded = try #require(schema.decode(
                Self.skAdNetworkFacts(version: version, campaignID: 7, fine: finalValue), arrival: Self.arrival))
            #expect(decoded.install.upperBound == Self.arrival.addingTimeInterval(-Self.day))
            #expect(decoded.install.lowerBound == Self.arrival.addingTimeInterval(-earliestDays * Self.day))
            // The record says the same: its time members are the timer's, also when a run's times are given.
            let record = decoded.adding(to: Array(#"{"n":1}"#.utf8), times: DecodedTimes(arrival: Self.arrival))
            let member = try #require((try JSONSerialization.jsonObject(with: Data(record)) as? [String: Any])?[
                "decoded"] as? [String: Any])
            #expect(member["install-earliest"] as? String
                    == RFC3339Timestamp.string(Self.arrival.addingTimeInterval(-earliestDays * Self.day)))
        }
        // SKAdNetwork 4.0 has windows, as AdAttributionKit: window 1 ends 3 days and up to 48 hours before.
        let v4 = try #require(schema.decode(Self.skAdNetworkFacts(version: .v4_0, source: "12", fine: finalValue),
                                            arrival: Self.arrival))
        #expect(v4.install.lowerBound == Self.arrival.addingTimeInterval(-(3 * Self.day + 48 * 3600)))
    }
}
