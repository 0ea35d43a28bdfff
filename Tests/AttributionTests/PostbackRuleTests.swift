import Testing
@_spi(CommandLine) @_spi(Servers) @_spi(Stores) @testable import Attribution

/// The rules over postback facts (``PostbackRules``, ``CrowdAnonymityTier``), on payloads and bodies written from
/// the spec's tables (§5-7).
@Suite("Postback rules and tiers")
struct PostbackRuleTests {
    static func payload(_ extra: String = "", index: Int = 0, source: String = "12", didWin: Bool = true,
                        conversion: String = "download", marketplace: Bool = true) -> String {
        "{\"postback-identifier\":\"3F50FE57-29AE-4861-8C0B-AC6ADDDFF72C\",\"ad-network-identifier\":\"x.example\","
            + "\"advertised-item-identifier\":1,\"conversion-type\":\"\(conversion)\","
            + "\"impression-type\":\"app-impression\",\"did-win\":\(didWin),\"postback-sequence-index\":\(index),"
            + "\"source-identifier\":\"\(source)\""
            + (marketplace ? ",\"marketplace-identifier\":\"com.apple.AppStore\"" : "") + extra + "}"
    }

    static func decode(_ text: String) throws -> PostbackPayload {
        let object = try #require(try StrictJSONParser.parse(Array(text.utf8)).objectValue)
        var findings: [Finding] = []
        let payload = PostbackPayload.decode(object, findings: &findings)
        #expect(findings.isEmpty, "\(findings)")
        return try #require(payload)
    }

    static func body(_ text: String) throws -> PostbackBody {
        let object = try #require(try StrictJSONParser.parse(Array(text.utf8)).objectValue)
        var findings: [Finding] = []
        let body = PostbackBody.decode(object, findings: &findings)
        #expect(findings.isEmpty, "\(findings)")
        return body
    }

    static func findings(_ payload: PostbackPayload, body: PostbackBody? = nil, keyID: String) -> [Finding] {
        PostbackRules.findings(PostbackFacts(payload, body: body, keyID: keyID))
    }

    @Test("P5 warns when apple-development-identifier/1 signs another network's postback")
    func p5() throws {
        let payload = try Self.decode(Self.payload())
        let other = Self.findings(payload, keyID: "apple-development-identifier/1")
        #expect(other.map(\.rule) == ["P5"])
        #expect(other.allSatisfy { $0.isWarning })
        #expect(Self.findings(payload, keyID: "apple-cas-identifier/0").isEmpty)
        let development = try Self.decode(Self.payload().replacingOccurrences(
            of: "x.example", with: "development.adattributionkit"))
        #expect(Self.findings(development, keyID: "apple-development-identifier/1").isEmpty)
    }

    @Test("P3 and P4 reject impossible combinations")
    func p3p4() throws {
        let reEngagementLost = try Self.decode(Self.payload(didWin: false, conversion: "re-engagement"))
        #expect(Self.findings(reEngagementLost, keyID: "k").map(\.rule) == ["P3"])
        let lostLater = try Self.decode(Self.payload(index: 1, didWin: false))
        #expect(Self.findings(lostLater, keyID: "k").map(\.rule) == ["P4"])
    }

    struct TierCase: Sendable, CustomTestStringConvertible {
        let name: String
        let payload: String
        let body: String?
        let tier: Int
        let warnings: [RuleID]
        var testDescription: String { name }
    }

    static let tierCases: [TierCase] = [
        TierCase(name: "tier 0: no marketplace, 2 digits, nothing else", payload: payload(marketplace: false),
                 body: "{\"ad-interaction-type\":\"view\"}", tier: 0, warnings: []),
        TierCase(name: "tier 1: coarse value at index 0", payload: payload(),
                 body: "{\"ad-interaction-type\":\"view\",\"coarse-conversion-value\":\"low\"}", tier: 1, warnings: []),
        TierCase(name: "tier 2: fine value and 4 digits", payload: payload(source: "1234"),
                 body: "{\"ad-interaction-type\":\"view\",\"conversion-value\":5}", tier: 2, warnings: []),
        TierCase(name: "tier 3: publisher item", payload: payload(",\"publisher-item-identifier\":7", source: "1234"),
                 body: "{\"ad-interaction-type\":\"view\",\"conversion-value\":5,\"country-code\":\"FR\"}",
                 tier: 3, warnings: []),
        TierCase(name: "second postback with coarse value", payload: payload(index: 1),
                 body: "{\"ad-interaction-type\":\"view\",\"coarse-conversion-value\":\"high\"}", tier: 1,
                 warnings: []),
        TierCase(name: "T1: second postback with 4 digits", payload: payload(index: 1, source: "1234"),
                 body: nil, tier: 2, warnings: ["T1"]),
        TierCase(name: "T2: third postback with a fine value", payload: payload(index: 2),
                 body: "{\"ad-interaction-type\":\"view\",\"conversion-value\":5}", tier: 2, warnings: ["T2"]),
        TierCase(name: "T3: second postback with country", payload: payload(index: 1),
                 body: "{\"ad-interaction-type\":\"view\",\"country-code\":\"FR\"}", tier: 1, warnings: ["T3"]),
        TierCase(name: "T4: publisher item with a coarse value",
                 payload: payload(",\"publisher-item-identifier\":7"),
                 body: "{\"ad-interaction-type\":\"view\",\"coarse-conversion-value\":\"low\"}", tier: 3,
                 warnings: ["T4"]),
        TierCase(name: "T5: 3 digits with a coarse value", payload: payload(source: "123"),
                 body: "{\"ad-interaction-type\":\"view\",\"coarse-conversion-value\":\"low\"}", tier: 2,
                 warnings: ["T5"]),
        TierCase(name: "T6: no marketplace but a conversion value", payload: payload(marketplace: false),
                 body: "{\"ad-interaction-type\":\"view\",\"coarse-conversion-value\":\"low\"}", tier: 0,
                 warnings: ["T6"]),
        TierCase(name: "bare JWS: no unsigned members", payload: payload(source: "99"), body: nil, tier: 1,
                 warnings: []),
    ]

    @Test("Tier inference and tier warnings", arguments: tierCases)
    func tiers(_ tierCase: TierCase) throws {
        let payload = try Self.decode(tierCase.payload)
        let body = try tierCase.body.map(Self.body)
        #expect(CrowdAnonymityTier.lowest(PostbackFacts(payload, body: body, keyID: "k")) == tierCase.tier)
        let findings = Self.findings(payload, body: body, keyID: "k")
        #expect(findings.map(\.rule) == tierCase.warnings)
        #expect(findings.allSatisfy { $0.isWarning })
    }
}
