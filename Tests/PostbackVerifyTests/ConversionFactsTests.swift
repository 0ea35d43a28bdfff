import Foundation
import Testing

@_spi(CommandLine) @_spi(Servers) @_spi(Stores) @testable import Attribution
@testable import postback_verify

/// A postback's conversion facts are the same whichever path decided it (the fast path's record or the general
/// path's result), the signed ad network id among them, for AdAttributionKit and SKAdNetwork postbacks alike.
@Suite("Conversion facts on both paths")
struct ConversionFactsTests {
    /// The fixtures' valid postbacks: AdAttributionKit (fast-path shaped and not) and SKAdNetwork 1.0 to 4.0.
    static let folders = ["valid/postback", "valid/postback-jws", "skadnetwork/valid"]

    static func items() -> [InputItem] {
        let reader = InputReader(paths: folders.map { TestPaths.fixtures.appendingPathComponent($0).path },
                                 maximumItemBytes: AttributionVerifier.maximumItemBytes)
        var items: [InputItem] = []
        while let batch = reader.nextBatch(maximumCount: 64) { items += batch }
        return items
    }

    /// The ad network id a record's signed `fields` carry, read from the record as a consumer reads it.
    static func signedNetwork(_ record: [UInt8]) throws -> String? {
        let object = try #require(try JSONSerialization.jsonObject(with: Data(record)) as? [String: Any])
        let fields = object["fields"] as? [String: Any]
        return (fields?["ad-network-identifier"] ?? fields?["ad-network-id"]) as? String
    }

    @Test("The fast path's facts equal the general path's, the signed ad network id included")
    func samePathsSameFacts() throws {
        let trusting = try FixtureManifestTests.verifier(allowingDevelopment: true, skAdNetworkTestKeys: true)
        let items = Self.items()
        func batch(fastPath: Bool) -> (BatchVerifier, VerifiedBatch) {
            let verifier = BatchVerifier(keyRing: trusting.keyRing, policy: trusting.policy,
                                         records: .jsonLines(explain: false, fastPath: fastPath))
            let batch = VerifiedBatch(items: items)
            verifier.finish(batch)
            return (verifier, batch)
        }
        let (fastVerifier, fast) = batch(fastPath: true)
        let (generalVerifier, general) = batch(fastPath: false)
        var decidedFast = 0, skAdNetwork = 0, compared = 0
        for index in items.indices {
            let facts = fastVerifier.conversionFacts(fast, at: index)
            #expect(facts == generalVerifier.conversionFacts(general, at: index), "\(items[index].source)")
            guard let facts else { continue }
            compared += 1
            if case .fast = fast.outcomes[index].decision { decidedFast += 1 }
            if facts.skAdNetworkVersion != nil { skAdNetwork += 1 }
            let network = try #require(try Self.signedNetwork(general.records[index]), "\(items[index].source)")
            #expect(facts.adNetworkIdentifier == ExactString(network), "\(items[index].source)")
        }
        #expect(decidedFast > 20, "the fast path decided many of them")
        #expect(skAdNetwork > 20, "SKAdNetwork postbacks of every version are among them")
        #expect(compared > decidedFast + 20)
    }

    /// `export --report` reads facts back from stored records (``StoredRecord``): the same facts as verifying gave,
    /// the signed ad network id among them, so a period's report counts networks apart as a run's does.
    @Test("A stored record's facts are the verified postback's, ad network id included")
    func storedRecordFacts() throws {
        let trusting = try FixtureManifestTests.verifier(allowingDevelopment: true, skAdNetworkTestKeys: true)
        let items = Self.items()
        let verifier = BatchVerifier(keyRing: trusting.keyRing, policy: trusting.policy,
                                     records: .jsonLines(explain: false, fastPath: true))
        let batch = VerifiedBatch(items: items)
        verifier.finish(batch)
        var compared = 0
        for index in items.indices {
            guard let facts = verifier.conversionFacts(batch, at: index) else { continue }
            // Parsed as the archive reads a stored record back (ExportedPostback).
            let record = try StrictJSONParser.parse(batch.records[index],
                                                    options: .init(maximumDepth: 32, valueBudget: nil))
            let stored = try #require(StoredRecord(record), "\(items[index].source)")
            #expect(stored.facts == facts, "\(items[index].source)")
            #expect(stored.facts?.adNetworkIdentifier != nil)
            compared += 1
        }
        #expect(compared > 50)
    }

    /// The fast path reads printable ASCII only (``FlatJSONScanner``), so an id with code points that could be
    /// canonically equivalent to another's always reaches the general path, whose facts keep its exact bytes.
    @Test("A network id outside ASCII keeps its exact code points, with the fast path on or off")
    func nonASCIINetwork() throws {
        let signer = try TestPostbackSigner()
        let body = try signer.body(postbackIdentifier: "6D0E6B5C-8F0B-4C57-9E55-2F4E3A1B9D01", signedExtra: "",
                                   unsignedExtra: #","conversion-value":3"#, network: "re\u{301}seau.adattributionkit")
        let trusting = try FixtureManifest.trusting()
        var facts: [ConversionFacts?] = []
        var decidedGeneral = 0
        for fastPath in [true, false] {
            let verifier = BatchVerifier(keyRing: trusting.keyRing, policy: trusting.policy,
                                         records: .jsonLines(explain: false, fastPath: fastPath))
            let batch = VerifiedBatch(items: [InputItem(source: "x", line: 1,
                                                        content: .bytes(ArraySlice(body.utf8)))])
            verifier.finish(batch)
            #expect(batch.outcomes[0].verdict == .valid, "\(String(decoding: batch.records[0], as: UTF8.self))")
            if case .general = batch.outcomes[0].decision { decidedGeneral += 1 }
            facts.append(verifier.conversionFacts(batch, at: 0))
        }
        #expect(decidedGeneral == 2, "the fast path leaves non-ASCII to the general path")
        let network = try #require(facts[0]?.adNetworkIdentifier)
        #expect(network.utf8 == Array("re\u{301}seau.adattributionkit".utf8))
        #expect(network != ExactString("r\u{E9}seau.adattributionkit"))
        #expect(facts[0] == facts[1])
    }
}

extension BatchVerifier {
    /// The conversion facts of item `index` of a completed batch, as the command line reads them through its
    /// pipeline (`conversionFacts(decision:record:)`): nil unless the item is a valid postback.
    func conversionFacts(_ batch: VerifiedBatch, at index: Int) -> ConversionFacts? {
        conversionFacts(decision: batch.outcomes[index].decision, record: batch.records[index])
    }
}
