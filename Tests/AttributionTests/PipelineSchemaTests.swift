import Foundation
import Testing

@_spi(CommandLine) @_spi(Servers) @_spi(Stores) @testable import Attribution

/// Issue 31 item 1: the pipeline decodes conversion values, once, on either path, and a ``VerifiedPostback``
/// carries the same data whichever path verified it: the fast path's and the general path's agree for the same
/// body, decoded conversion included, before and after a duplicate marking.
@Suite("Postback pipeline: the same data on either path, decoded by the pipeline")
struct PipelineSchemaTests {
    /// Apple's development example and postbacks of the fixtures in Apple's shape: fine, coarse and no values, in
    /// each window, campaigns the test schema names and does not, and an app it does not have.
    static let postbacks = [
        "valid/apple/postback-development-valid.json",
        "valid/postback/re-engagement-click-fine.json",
        "valid/postback/t1-t2-t3-index1-tier3-fields.json",
        "valid/postback/t2-index1-fine-value.json",
        "valid/postback/t4-country-with-coarse.json",
        "valid/postback/tier1-index1-coarse-high.json",
        "valid/postback/t5-4digit-source-coarse.json",
        "valid/postback/tier1-index0-no-value.json",
        "valid/postback/tier1-index2-coarse-low.json",
        "valid/postback/advertised-item-above-2-32.json",
    ]

    /// The postbacks above with a warning: valid, but the general path words them on both pipelines.
    static let withWarnings: Set = [
        "valid/postback/t1-t2-t3-index1-tier3-fields.json",
        "valid/postback/t2-index1-fine-value.json",
        "valid/postback/t4-country-with-coarse.json",
        "valid/postback/t5-4digit-source-coarse.json",
    ]

    /// The schemas: the conversion-schema tests' own (version 1), and the example version 2 schema, which names
    /// networks and apps.
    static func schemas() throws -> [ConversionSchema] {
        [
            try ConversionSchemaTests.parse(ConversionSchemaTests.schema()),
            try ConversionSchema(parsing: TestPaths.bytes(
                TestPaths.fixtures.appendingPathComponent("schema/example-schema-v2.json"))),
        ]
    }

    /// Inside the test schema's validity (2026), so that its app and campaigns decode.
    static let arrival = Date(timeIntervalSince1970: 1_780_000_000)

    @Test("The fast path and the general path give VerifiedPostbacks with equal data, decoded values included",
          arguments: postbacks)
    func samePostbackEitherPath(path: String) throws {
        let trusting = try FixtureManifest.verifier(allowingDevelopment: true)
        let body = try TestPaths.bytes(TestPaths.fixtures.appendingPathComponent(path))
        for schema in try Self.schemas() {
            func verified(fastPath: Bool) throws -> VerifiedPostback {
                let pipeline = PostbackPipeline(keyRing: trusting.keyRing, policy: trusting.policy,
                                                fastPath: fastPath, schema: schema)
                return try #require(pipeline.verify([(body: body, source: "request-1", arrival: Self.arrival)]).first)
            }
            let fast = try verified(fastPath: true)
            let general = try verified(fastPath: false)
            #expect(fast.isFastPathDecided == !Self.withWarnings.contains(path), "\(path): the fast path's or not")
            #expect(!general.isFastPathDecided)
            #expect(fast.verdict == .valid)
            Self.expectSameData(fast, general, path)
            // The pipeline decoded it, as the schema reads it as of the arrival.
            let decoded = try #require(fast.decoded, "\(path)")
            let facts = try #require(fast.facts)
            let expected = try #require(schema.decode(facts, arrival: Self.arrival))
            #expect(decoded.adding(to: fast.record) == expected.adding(to: fast.record), "\(path)")
            #expect(decoded.arrival == Self.arrival)

            // Marked a duplicate, both are the same duplicate, with nothing decoded.
            let pipeline = PostbackPipeline(keyRing: trusting.keyRing, policy: trusting.policy, schema: schema)
            let first = DuplicateReference(source: "request-0", line: 1, firstSeen: Self.arrival)
            var fastDuplicate = fast, generalDuplicate = general
            pipeline.markDuplicate(&fastDuplicate, of: first)
            pipeline.markDuplicate(&generalDuplicate, of: first)
            #expect(fastDuplicate.isDuplicate && generalDuplicate.isDuplicate)
            #expect(fastDuplicate.decoded == nil && generalDuplicate.decoded == nil)
            Self.expectSameData(fastDuplicate, generalDuplicate, path)
        }
    }

    @Test("Without a schema nothing is decoded, on either path")
    func noSchemaNothingDecoded() throws {
        let trusting = try FixtureManifest.verifier(allowingDevelopment: true)
        let items = try Self.postbacks.map { path in
            (body: try TestPaths.bytes(TestPaths.fixtures.appendingPathComponent(path)), source: path)
        }
        for fastPath in [true, false] {
            let pipeline = PostbackPipeline(keyRing: trusting.keyRing, policy: trusting.policy, fastPath: fastPath)
            let verified = pipeline.verify(items)
            #expect(verified.allSatisfy { $0.verdict == .valid && $0.facts != nil && $0.decoded == nil })
        }
    }

    /// Every member a ``VerifiedPostback`` answers is equal for `fast` and `general`.
    static func expectSameData(_ fast: VerifiedPostback, _ general: VerifiedPostback, _ path: String) {
        #expect(fast.record == general.record, "\(path)")
        #expect(fast.source == general.source && fast.line == general.line)
        #expect(fast.verdict == general.verdict, "\(path)")
        #expect(fast.isDuplicate == general.isDuplicate, "\(path)")
        #expect(fast.firstError?.code == general.firstError?.code, "\(path)")
        #expect(fast.warningRules == general.warningRules, "\(path)")
        #expect(fast.kind == general.kind, "\(path)")
        #expect(fast.signatureVerified == general.signatureVerified, "\(path)")
        #expect(fast.environment == general.environment, "\(path)")
        #expect(fast.deduplicationKey == general.deduplicationKey, "\(path)")
        #expect(fast.sighting?.key == general.sighting?.key, "\(path)")
        #expect(fast.sighting?.content == general.sighting?.content, "\(path)")
        #expect(fast.duplicateDifferences == general.duplicateDifferences, "\(path)")
        #expect(fast.unsignedMembers == general.unsignedMembers, "\(path)")
        #expect(fast.facts == general.facts, "\(path)")
        #expect(fast.couldStillBeGenuine == general.couldStillBeGenuine, "\(path)")
        #expect(fast.hasConversionValue == general.hasConversionValue, "\(path)")
        #expect((fast.decoded == nil) == (general.decoded == nil), "\(path)")
        if let fastDecoded = fast.decoded, let generalDecoded = general.decoded {
            // Its rendering holds every member (window, times, values, campaign, meaning, currency, names).
            #expect(fastDecoded.adding(to: fast.record) == generalDecoded.adding(to: general.record), "\(path)")
            #expect(fastDecoded.campaign == generalDecoded.campaign && fastDecoded.appKnown == generalDecoded.appKnown)
            #expect(fastDecoded.network == generalDecoded.network && fastDecoded.appName == generalDecoded.appName)
        }
        switch (fast.status, general.status) {
        case (.valid(let fastFacts), .valid(let generalFacts)):
            #expect(fastFacts == generalFacts, "\(path)")
        case (.duplicate(let fastFirst), .duplicate(let generalFirst)):
            #expect(fastFirst == generalFirst, "\(path)")
        default:
            Issue.record("\(path): the two paths' statuses differ")
        }
    }
}
