import Foundation
import Testing

@_spi(CommandLine) @_spi(Servers) @_spi(Stores) @testable import Attribution

/// Issue 33 item 1: schema version 2 names campaigns per signed ad network (with the network's name), optionally
/// by date range, and apps by name; version 1 schemas decode as before, byte for byte.
@Suite("Conversion schema version 2: networks, dated campaigns, names")
struct ConversionSchemaNetworkTests {
    /// A version 2 schema with one app, two networks that both use source identifier `1234` and campaign id 42,
    /// app-wide names for `1234`, `12` and campaign id 42, and `1234` of the first network dated. `networks` and
    /// `extraNetwork` are spliced in (each on lines of their own).
    static func schema(version: Int = 2, extraNetwork: String = "", appName: String = "\"Quest\"") -> String {
        """
        {
          "schema-version": \(version),
          "apps": [
            {
              "advertised-item-identifier": 1108187390,
              "name": \(appName),
              "valid-from": "2026-01-01",
              "valid-until": "2026-12-31",
              "currency": "USD",
              "campaigns": {"12": "Brand (app)", "1234": "Video (app)"},
              "campaign-ids": {"42": "Forty-two (app)"},
              "networks": [
                {
                  "ad-network-id": "alpha.adattributionkit",
                  "name": "Alpha Ads",
                  "campaigns": {
                    "1234": [
                      {"name": "Alpha spring", "valid-until": "2026-03-31"},
                      {"name": "Alpha summer", "valid-from": "2026-04-01", "valid-until": "2026-08-31"}
                    ],
                    "777": "Alpha retargeting"
                  },
                  "campaign-ids": {"42": "Alpha forty-two"}
                },
                {
                  "ad-network-id": "beta.skadnetwork",
                  "name": "Beta Network",
                  "campaigns": {"1234": "Beta video"},
                  "campaign-ids": {"42": [{"name": "Beta forty-two", "valid-from": "2026-02-01"}]}
                }\(extraNetwork)
              ],
              "windows": {"1": {"fine": {"0-63": {"events": ["install"]}}}}
            }
          ]
        }
        """
    }

    static func parse(_ text: String) throws -> ConversionSchema {
        try ConversionSchema(parsing: Array(text.utf8))
    }

    /// The start of a UTC day plus `seconds`.
    static func day(_ text: String, plus seconds: Double = 0) -> Date {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withFullDate]
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter.date(from: text)!.addingTimeInterval(seconds)
    }

    static func facts(network: String?, source: String? = "1234", campaignID: UInt64? = nil, fine: Int? = 5,
                      app: UInt64 = 1108187390) -> ConversionFacts {
        ConversionFacts(environment: .production, advertisedItemIdentifier: app, sourceIdentifier: source,
                        postbackSequenceIndex: 0, fineValue: fine, coarseValue: nil, valuesAreSigned: false,
                        tier: source == nil ? nil : 2, campaignID: campaignID,
                        skAdNetworkVersion: campaignID == nil ? nil : .v3_0,
                        adNetworkIdentifier: network.map(ExactString.init))
    }

    static func decode(_ schema: ConversionSchema, _ facts: ConversionFacts, at date: Date) throws
        -> DecodedConversion {
        try #require(schema.decode(facts, arrival: date))
    }

    @Test("The version 2 example schema in Fixtures/ is accepted, with its apps' and networks' names")
    func exampleAccepted() throws {
        let bytes = try TestPaths.bytes(TestPaths.fixtures.appendingPathComponent("schema/example-schema-v2.json"))
        let schema = try ConversionSchema(parsing: bytes)
        #expect(schema.version == 2)
        #expect(schema.apps.map(\.advertisedItemIdentifier) == [1108187390, 10738027756, 525463029])
        #expect(schema.apps[0].networks.map(\.adNetworkIdentifier) == [ExactString("fixture.adattributionkit"),
                                                                      ExactString("fixture.skadnetwork")])
        #expect(schema.apps.allSatisfy { $0.name != nil })
    }

    @Test("Two networks' same source identifier and campaign id name two campaigns, each the network's own")
    func perNetwork() throws {
        let schema = try Self.parse(Self.schema())
        let may = Self.day("2026-05-10", plus: 3600)
        let alpha = try Self.decode(schema, Self.facts(network: "alpha.adattributionkit"), at: may)
        let beta = try Self.decode(schema, Self.facts(network: "beta.skadnetwork"), at: may)
        #expect(alpha.campaign == "Alpha summer" && alpha.network == "Alpha Ads")
        #expect(beta.campaign == "Beta video" && beta.network == "Beta Network")
        #expect(alpha.appName == "Quest" && beta.appName == "Quest")
        // SKAdNetwork 1.0-3.0 campaign ids, per network too.
        let alpha42 = try Self.decode(schema, Self.facts(network: "alpha.adattributionkit", source: nil,
                                                         campaignID: 42), at: may)
        let beta42 = try Self.decode(schema, Self.facts(network: "beta.skadnetwork", source: nil, campaignID: 42),
                                     at: may)
        #expect(alpha42.campaign == "Alpha forty-two" && alpha42.network == "Alpha Ads")
        #expect(beta42.campaign == "Beta forty-two" && beta42.network == "Beta Network")
        // Campaign id 42 is not source identifier "42", nor 1234 campaign id 1234's.
        #expect(try Self.decode(schema, Self.facts(network: "beta.skadnetwork", source: "42"), at: may).campaign
                == nil)
    }

    /// `valid-until` is inclusive, as an app's is: the last millisecond of 2026-03-31 is still the spring
    /// campaign's, the first of 2026-04-01 the summer one's; after 2026-08-31 the network names no campaign for
    /// the identifier, and the app's own name applies.
    @Test("A dated campaign applies from the start of its first day to the end of its last",
          arguments: [("2026-01-01", 0.0, "Alpha spring"), ("2026-03-31", 86_399.999, "Alpha spring"),
                      ("2026-04-01", 0, "Alpha summer"), ("2026-08-31", 86_399.999, "Alpha summer"),
                      ("2026-09-01", 0, "Video (app)")])
    func datedBoundaries(day: String, seconds: Double, expected: String) throws {
        let schema = try Self.parse(Self.schema())
        let decoded = try Self.decode(schema, Self.facts(network: "alpha.adattributionkit"),
                                      at: Self.day(day, plus: seconds))
        #expect(decoded.campaign == expected)
        #expect(decoded.network == "Alpha Ads")
    }

    @Test("A campaign-ids list dated from a day applies from that day only, before it the app's name")
    func datedCampaignID() throws {
        let schema = try Self.parse(Self.schema())
        let facts = Self.facts(network: "beta.skadnetwork", source: nil, campaignID: 42)
        #expect(try Self.decode(schema, facts, at: Self.day("2026-01-31", plus: 86_399.999)).campaign
                == "Forty-two (app)")
        #expect(try Self.decode(schema, facts, at: Self.day("2026-02-01")).campaign == "Beta forty-two")
    }

    /// The network's name over the app's; the app's where the network names none; an unknown network takes the
    /// app's names and no network name.
    @Test("Precedence: a network's campaign names before the app's")
    func precedence() throws {
        let schema = try Self.parse(Self.schema())
        let may = Self.day("2026-05-10")
        // The network names 1234: its name wins over the app's "Video (app)".
        #expect(try Self.decode(schema, Self.facts(network: "beta.skadnetwork"), at: may).campaign == "Beta video")
        // The network does not name 12: the app's name.
        let brand = try Self.decode(schema, Self.facts(network: "beta.skadnetwork", source: "12"), at: may)
        #expect(brand.campaign == "Brand (app)" && brand.network == "Beta Network")
        // A network the entry does not name: the app's names, network null.
        let other = try Self.decode(schema, Self.facts(network: "gamma.adattributionkit"), at: may)
        #expect(other.campaign == "Video (app)" && other.network == nil && other.appName == "Quest")
        // A network's own identifier is not the app's: another network's postback with 777 has no name.
        #expect(try Self.decode(schema, Self.facts(network: "beta.skadnetwork", source: "777"), at: may).campaign
                == nil)
        #expect(try Self.decode(schema, Self.facts(network: "alpha.adattributionkit", source: "777"), at: may)
            .campaign == "Alpha retargeting")
        // Facts without a network (built by a caller that has none) take the app's names.
        #expect(try Self.decode(schema, Self.facts(network: nil), at: may).campaign == "Video (app)")
    }

    @Test("Ad network ids are matched by code points: canonically equivalent ids are two networks")
    func networksByCodePoints() throws {
        // "é" precomposed (U+00E9) and decomposed (e + U+0301): equal as Swift Strings, different ids.
        let composed = "r\u{E9}seau.example", decomposed = "re\u{301}seau.example"
        #expect(composed == decomposed, "the premise: String == merges them")
        let schema = try Self.parse(Self.schema(extraNetwork: """
            ,
                    {"ad-network-id": "\(composed)", "name": "Composed", "campaigns": {"1234": "C"}},
                    {"ad-network-id": "\(decomposed)", "name": "Decomposed", "campaigns": {"1234": "D"}}
            """))
        let may = Self.day("2026-05-10")
        let first = try Self.decode(schema, Self.facts(network: composed), at: may)
        let second = try Self.decode(schema, Self.facts(network: decomposed), at: may)
        #expect(first.network == "Composed" && first.campaign == "C")
        #expect(second.network == "Decomposed" && second.campaign == "D")
    }

    /// The members `decoded` holds, in order, as a consumer parsing the record reads them.
    static func decodedMemberNames(_ decoded: DecodedConversion) -> [String] {
        var record = Array(#"{"n":1}"#.utf8)
        record = decoded.adding(to: record)
        let text = String(decoding: record, as: UTF8.self)
        let member = text[text.range(of: #""decoded":{"#)!.upperBound...]
        return member.matches(of: /"([a-z-]+)":/).map { String($0.output.1) }
            .filter { !["low", "high", "currency"].contains($0) }
    }

    static let versionOneMembers = ["window", "arrival", "install-earliest", "install-latest", "fine-value",
                                    "coarse-value", "values-signed", "app-known", "campaign", "events", "revenue"]

    @Test("decoded ends with network and app-name with version 2 (null when unnamed), has neither with version 1")
    func recordMembers() throws {
        let may = Self.day("2026-05-10")
        let schema = try Self.parse(Self.schema())
        let named = try Self.decode(schema, Self.facts(network: "alpha.adattributionkit"), at: may)
        #expect(Self.decodedMemberNames(named) == Self.versionOneMembers + ["network", "app-name"])
        let record = named.adding(to: Array(#"{"n":1}"#.utf8))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(record)) as? [String: Any])
        let member = try #require(object["decoded"] as? [String: Any])
        #expect(member["network"] as? String == "Alpha Ads")
        #expect(member["app-name"] as? String == "Quest")
        #expect(member["campaign"] as? String == "Alpha summer")

        // No app name, an unknown network, an unknown app: the members are there, null.
        let unnamed = try Self.parse(Self.schema().replacingOccurrences(of: "\"name\": \"Quest\",\n", with: ""))
        let other = try Self.decode(unnamed, Self.facts(network: "gamma.adattributionkit"), at: may)
        let otherRecord = String(decoding: other.adding(to: Array(#"{"n":1}"#.utf8)), as: UTF8.self)
        #expect(otherRecord.hasSuffix(#","network":null,"app-name":null}}"#))
        let unknownApp = try Self.decode(schema, Self.facts(network: "alpha.adattributionkit", app: 7), at: may)
        #expect(!unknownApp.appKnown && unknownApp.network == nil && unknownApp.appName == nil)
        #expect(Self.decodedMemberNames(unknownApp) == Self.versionOneMembers + ["network", "app-name"])

        // A version 1 schema: the members stop at revenue.
        let v1 = try ConversionSchemaTests.parse(ConversionSchemaTests.schema())
        let v1Decoded = try Self.decode(v1, Self.facts(network: "alpha.adattributionkit"), at: may)
        #expect(Self.decodedMemberNames(v1Decoded) == Self.versionOneMembers)
        #expect(v1Decoded.network == nil && v1Decoded.appName == nil)
    }

    @Test("A version 1 schema relabelled version 2 decodes the same, gaining only two null members at the end")
    func versionOneAsVersionTwo() throws {
        let text = ConversionSchemaTests.schema()
        let v1 = try ConversionSchemaTests.parse(text)
        let v2 = try Self.parse(text.replacingOccurrences(of: "\"schema-version\": 1", with: "\"schema-version\": 2"))
        #expect(v1.version == 1 && v2.version == 2)
        let arrival = ConversionSchemaTests.arrival
        let times = DecodedTimes(arrival: arrival)
        var compared = 0
        for source in ["12", "1234", "99"] {
            for index in 0...2 {
                for network in ["fixture.adattributionkit", nil] {
                    let facts = ConversionFacts(
                        environment: .production, advertisedItemIdentifier: 1108187390, sourceIdentifier: source,
                        postbackSequenceIndex: index, fineValue: index == 0 ? 17 : nil,
                        coarseValue: index == 0 ? nil : .high, valuesAreSigned: false, tier: 1,
                        adNetworkIdentifier: network.map(ExactString.init))
                    let record = Array(#"{"n":1}"#.utf8)
                    let one = try #require(v1.decode(facts, arrival: arrival)).adding(to: record, times: times)
                    let two = try #require(v2.decode(facts, arrival: arrival)).adding(to: record, times: times)
                    #expect(two == Array(one.dropLast(2)) + Array(#","network":null,"app-name":null}}"#.utf8))
                    compared += 1
                }
            }
        }
        #expect(compared == 18)
    }

    /// Each malformed schema: the text, the line the refusal must name, and words its reason must hold.
    static let malformed: [(name: String, text: String, line: Int, reason: String)] = {
        let base = schema()
        func replacing(_ old: String, _ new: String) -> String {
            precondition(base.contains(old), old)
            return base.replacingOccurrences(of: old, with: new)
        }
        func extra(_ network: String) -> String { schema(extraNetwork: ",\n" + network) }
        let summer = #"{"name": "Alpha summer", "valid-from": "2026-04-01", "valid-until": "2026-08-31"}"#
        return [
            ("version 3", replacing("\"schema-version\": 2", "\"schema-version\": 3"), 2, "must be 1 or 2, not 3"),
            ("networks in version 1", schema(version: 1), 6, "\"name\" needs \"schema-version\": 2"),
            ("networks in version 1, no name", schema(version: 1).replacingOccurrences(
                of: "\"name\": \"Quest\",\n", with: ""), 11, "\"networks\" needs \"schema-version\": 2"),
            ("a dated list in version 1", ConversionSchemaTests.schema().replacingOccurrences(
                of: "\"12\": \"Brand\"", with: "\"12\": [{\"name\": \"Brand\"}]"), 9, "needs \"schema-version\": 2"),
            ("empty app name", schema(appName: "\"\""), 6, "an app's \"name\" must be a non-empty string"),
            ("app name not a string", schema(appName: "7"), 6, "non-empty string"),
            ("networks not an array", replacing("\"networks\": [", "\"networks\": {\"x\": [")
                .replacingOccurrences(of: "}\n      ],\n      \"windows\"", with: "}\n      ]},\n      \"windows\""),
             12, "\"networks\" must be an array"),
            ("network without ad-network-id", replacing("\"ad-network-id\": \"beta.skadnetwork\",", ""), 25,
             "needs \"ad-network-id\""),
            ("empty ad-network-id", replacing("\"beta.skadnetwork\"", "\"\""), 26, "non-empty string"),
            ("ad-network-id not a string", replacing("\"beta.skadnetwork\"", "42"), 26, "non-empty string"),
            ("network without a name", replacing("\"name\": \"Beta Network\",", ""), 25, "needs \"name\""),
            ("empty network name", replacing("\"Beta Network\"", "\"\""), 27,
             "a network's \"name\" must be a non-empty string"),
            ("unknown member in a network", replacing("\"campaigns\": {\"1234\": \"Beta video\"}",
                                                      "\"campaign\": {\"1234\": \"Beta video\"}"), 28,
             "unknown member \"campaign\" in a network"),
            ("the same network twice", extra(#"{"ad-network-id": "beta.skadnetwork", "name": "Beta again"}"#), 31,
             "network \"beta.skadnetwork\" is given twice"),
            ("two networks of one name", extra(#"{"ad-network-id": "gamma.example", "name": "Alpha Ads"}"#), 31,
             "have the same name \"Alpha Ads\""),
            ("a network's source identifier of five digits", replacing("\"777\":", "\"77777\":"), 21,
             "unknown member \"77777\""),
            ("a network's campaign id 101", replacing("{\"42\": \"Alpha forty-two\"}", "{\"101\": \"x\"}"), 23,
             "unknown member \"101\""),
            ("a campaign neither name nor list", replacing("\"Beta video\"", "7"), 28,
             "a non-empty name or a non-empty list"),
            ("an empty campaign name", replacing("\"Beta video\"", "\"\""), 28, "a non-empty name"),
            ("an empty list", replacing("[{\"name\": \"Beta forty-two\", \"valid-from\": \"2026-02-01\"}]", "[]"), 29,
             "must be a non-empty list"),
            ("a dated campaign without a name", replacing("{\"name\": \"Beta forty-two\", ", "{"), 29,
             "needs \"name\""),
            ("a dated campaign with an empty name", replacing("\"Beta forty-two\"", "\"\""), 29,
             "a dated campaign's \"name\" must be a non-empty string"),
            ("an unknown member in a dated campaign", replacing("\"valid-from\": \"2026-02-01\"",
                                                                "\"valid-since\": \"2026-02-01\""), 29,
             "unknown member \"valid-since\" in a dated campaign"),
            ("an impossible date", replacing("\"2026-03-31\"", "\"2026-02-30\""), 18, "YYYY-MM-DD"),
            ("a dated campaign ending before it starts", replacing("\"valid-until\": \"2026-08-31\"",
                                                                   "\"valid-until\": \"2026-03-01\""), 19,
             "\"valid-until\" is before \"valid-from\""),
            ("two dated campaigns sharing a day", replacing("\"valid-from\": \"2026-04-01\"",
                                                            "\"valid-from\": \"2026-03-31\""), 19,
             "\"Alpha spring\" and \"Alpha summer\" of \"1234\" share days"),
            ("two undated campaigns of one identifier", replacing(summer, #"{"name": "Alpha summer"}"#), 19,
             "share days (from the start until 2026-03-31 and from the start open-ended)"),
            ("a dated campaign outside the app's period", replacing("\"2026-08-31\"}", "\"2026-08-31\"},\n"
                + "                      {\"name\": \"Next year\", \"valid-from\": \"2027-01-01\"}"), 20,
             "never applies"),
        ]
    }()

    @Test("A malformed version 2 schema is refused with its line and reason", arguments: malformed.indices)
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

    @Test("A version 2 schema without networks or names decodes as version 1 does")
    func withoutNetworks() throws {
        let text = ConversionSchemaTests.schema()
            .replacingOccurrences(of: "\"schema-version\": 1", with: "\"schema-version\": 2")
        let schema = try Self.parse(text)
        let decoded = try Self.decode(schema, Self.facts(network: "alpha.adattributionkit", source: "1234"),
                                      at: ConversionSchemaTests.arrival)
        #expect(decoded.campaign == "Video <4>")
        #expect(decoded.network == nil && decoded.appName == nil)
        #expect(schema.apps[0].networks.isEmpty)
    }
}
