import Testing
@_spi(CommandLine) @_spi(Servers) @_spi(Stores) @testable import Attribution

/// The tables (``MessageLayout``) are the one place a message's members are defined: a member added to a table
/// reaches the general decoders and the fast path alike, with no change to either, and the two still agree byte
/// for byte (`FastPathComparison.compare`, in the command line's tests).
@Suite("Message tables")
struct MessageLayoutTests {
    /// One body, and what both paths must make of it under the extended tables.
    struct Case: Sendable, CustomTestStringConvertible {
        let testDescription: String
        let signedExtra: String
        let unsignedExtra: String
        /// The one finding the general path gives, as `RULE: message`; nil when the item is valid (and the fast
        /// path must then answer, with the general path's record).
        let finding: String?
    }

    /// A signed optional integer 0 ... 9, a signed required Boolean and an unsigned optional string `on`/`off`:
    /// one member of each type, with a value domain where the type has one.
    static let signedCount = MessageMember("example-count", .integer, signed: true, required: false,
                                           domain: .integers(0...9))
    static let signedFlag = MessageMember("example-flag", .boolean, signed: true, required: true)
    static let unsignedSwitch = MessageMember("example-switch", .string, signed: false, required: false,
                                              domain: .oneOf(["on", "off"], wording: "\"on\" or \"off\""))

    static let extended = MessageLayouts(
        postbackPayload: MessageLayout.postbackPayload.adding(signedCount).adding(signedFlag),
        postbackBody: MessageLayout.postbackBody.adding(unsignedSwitch))

    static let cases: [Case] = [
        Case(testDescription: "every added member, valid", signedExtra: #","example-count":3,"example-flag":true"#,
             unsignedExtra: #","example-switch":"on""#, finding: nil),
        Case(testDescription: "the optional ones absent", signedExtra: #","example-flag":false"#,
             unsignedExtra: #","conversion-value":7"#, finding: nil),
        Case(testDescription: "in another order", signedExtra: #","example-flag":true,"example-count":0"#,
             unsignedExtra: #","example-switch":"off","country-code":"FR""#, finding: nil),
        Case(testDescription: "a signed integer outside its range",
             signedExtra: #","example-count":10,"example-flag":true"#, unsignedExtra: "",
             finding: "P2: example-count is 10, outside 0...9"),
        Case(testDescription: "a signed member of the wrong type",
             signedExtra: #","example-count":"3","example-flag":true"#, unsignedExtra: "",
             finding: "P1: example-count must be an integer, not a string"),
        Case(testDescription: "a required signed member missing", signedExtra: "", unsignedExtra: "",
             finding: "P1: payload has no example-flag (a boolean is required)"),
        Case(testDescription: "an unsigned string outside its values", signedExtra: #","example-flag":true"#,
             unsignedExtra: #","example-switch":"maybe""#,
             finding: #"U1: example-switch is "maybe", not "on" or "off""#),
        Case(testDescription: "an unsigned member of the wrong type", signedExtra: #","example-flag":true"#,
             unsignedExtra: #","example-switch":true"#,
             finding: "U1: example-switch must be a string, not a boolean"),
    ]

    static func verifier(_ layouts: MessageLayouts) throws -> AttributionVerifier {
        let base = try FixtureManifest.verifier(allowingDevelopment: false)
        return AttributionVerifier(keyRing: base.keyRing, policy: base.policy, cache: nil, layouts: layouts)
    }

    @Test("A member added to a table: the fast path answers where the general path finds nothing, alike",
          arguments: cases)
    func addedMember(_ testCase: Case) throws {
        let body = try TestPostbackSigner().body(postbackIdentifier: "3F50FE57-29AE-4861-8C0B-AC6ADDDFF72C",
                                                 signedExtra: testCase.signedExtra,
                                                 unsignedExtra: testCase.unsignedExtra)
        let bytes = ArraySlice(body.utf8)
        let verifier = try Self.verifier(Self.extended)
        let general = verifier.verify(bytes)
        #expect((general.errors + general.warnings).map { "\($0.rule): \($0.message)" }
                    == (testCase.finding.map { [$0] } ?? []))
        // With a finding the fast path must decline; without, it must answer with the general path's record.
        FastPathComparison.compare(bytes, verifier: verifier, expectAnswer: testCase.finding == nil)
        if testCase.finding == nil {
            // The members reached the record: signed ones in `fields`, unsigned ones in `unsigned`.
            #expect(general.fields?.contains(Self.signedFlag.name) == true)
            #expect(general.unsigned?.contains(Self.unsignedSwitch.name)
                        == testCase.unsignedExtra.contains(Self.unsignedSwitch.name))
        }
    }

    @Test("Under Apple's tables the same members are unknown: the fast path declines them, the general path keeps them")
    func appleTables() throws {
        let body = try TestPostbackSigner().body(postbackIdentifier: "3F50FE57-29AE-4861-8C0B-AC6ADDDFF72C",
                                                 signedExtra: #","example-count":3,"example-flag":true"#,
                                                 unsignedExtra: #","example-switch":"on""#)
        let verifier = try Self.verifier(.apple)
        FastPathComparison.compare(ArraySlice(body.utf8), verifier: verifier, expectAnswer: false)
        let general = verifier.verify(ArraySlice(body.utf8))
        #expect(general.verdict == .valid && general.errors.isEmpty && general.warnings.isEmpty)
        #expect(general.unsigned?.contains(Self.unsignedSwitch.name) == true)
    }

    /// S5 reads the AdAttributionKit body's members: an SKAdNetwork body's unsigned values get U1's sentences.
    @Test("SKAdNetwork's S5 and AdAttributionKit's U1 and U2 say the same of the same values",
          arguments: [#"{"conversion-value":64}"#, #"{"conversion-value":"12"}"#, #"{"conversion-value":1.5}"#,
                      #"{"coarse-conversion-value":"Low"}"#, #"{"country-code":"fr"}"#, #"{"country-code":7}"#,
                      #"{"conversion-value":3,"coarse-conversion-value":"low"}"#])
    func s5ReadsTheBodyTable(_ text: String) throws {
        let members = try #require(try StrictJSONParser.parse(Array(text.utf8)).objectValue)
        var u1: [Finding] = []
        let body = PostbackBody.decode(members, findings: &u1)
        let u2 = body.conversionValue != nil && body.coarseConversionValue != nil
            ? PostbackRules.all.filter { $0.id == .u2 }.map { Finding($0.id, $0.message(Self.anyFacts)) } : []
        let s5 = SKAdNetworkRules.checkUnsignedMembers(members)
        #expect(!s5.isEmpty && s5.allSatisfy { $0.rule == .s5 })
        let bodySentences = (u1 + u2).map {
            $0.message.replacingOccurrences(of: "a body ", with: "the body ")
        }
        #expect(s5.map(\.message) == bodySentences)
    }

    static let anyFacts = PostbackFacts(
        isDevelopmentSettingsKey: false, isDevelopmentNetwork: false, conversionType: .download, didWin: true,
        postbackSequenceIndex: 0, sourceIdentifierDigits: 2, hasMarketplace: true, hasPublisherItem: false,
        body: nil)

    @Test("Each table names every member once; SKAdNetwork's versions and unsigned members read the same definitions")
    func tables() throws {
        for layout in [MessageLayout.postbackPayload, .postbackBody, .impressionPayload] {
            #expect(Set(layout.members.map(\.name)).count == layout.members.count)
            #expect(layout.members.count <= MessageLayout.capacity)
        }
        #expect(MessageLayout.postbackPayload.members.allSatisfy { $0.isSigned })
        #expect(MessageLayout.postbackBody.members.allSatisfy { !$0.isSigned })
        // SKAdNetwork 4.0's index and source identifier are AdAttributionKit's members' values.
        for field in [SKAdNetworkField.postbackSequenceIndex, .sourceIdentifier] {
            let aak = try #require(MessageLayout.postbackPayload.slot(named: Array(field.rawValue.utf8)))
            // An index of 3 and a 1-digit identifier are outside them: the same sentence either way.
            func complaints(_ domain: ValueDomain) -> [String?] {
                [domain.complaint(aboutInteger: 3, literal: "3"), domain.complaint(about: "7")]
            }
            let skAdNetwork = complaints(field.member.domain)
            #expect(skAdNetwork == complaints(MessageLayout.postbackPayload[aak].domain))
            #expect(skAdNetwork.contains { $0 != nil })
        }
        #expect(SKAdNetworkVersion.unsignedLayout.members.map(\.name)
                    == ["conversion-value", "coarse-conversion-value", "country-code"])
        #expect(SKAdNetworkVersion.unsignedLayout.members.allSatisfy { !$0.isSigned && !$0.isRequired })
    }
}
