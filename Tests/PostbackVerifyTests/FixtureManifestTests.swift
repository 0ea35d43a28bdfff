import Foundation
import Testing
@_spi(CommandLine) @_spi(Servers) @_spi(Stores) @testable import Attribution
@testable import postback_verify

/// Every fixture gets the result `Fixtures/manifest.json` gives. The manifest was written from the spec by the
/// fixture script (`Fixtures/make-fixtures.py`), independently of this verifier's output.
@Suite("Fixtures")
struct FixtureManifestTests {
    typealias Entry = FixtureManifest.Entry


    static func verifier(allowingDevelopment: Bool, skAdNetworkTestKeys: Bool = false) throws -> AttributionVerifier {
        try FixtureManifest.verifier(allowingDevelopment: allowingDevelopment, skAdNetworkTestKeys: skAdNetworkTestKeys)
    }

    /// The results for every item of one fixture file, read and deduplicated as the CLI does, by line.
    static func results(
        of path: String, allowingDevelopment: Bool, skAdNetworkTestKeys: Bool = false
    ) throws -> [Int: VerificationResult] {
        let verifier = try verifier(allowingDevelopment: allowingDevelopment, skAdNetworkTestKeys: skAdNetworkTestKeys)
        let reader = InputReader(paths: [TestPaths.fixtures.appendingPathComponent(path).path],
                                 maximumItemBytes: AttributionVerifier.maximumItemBytes)
        let deduplicator = TestDeduplicator()
        var results: [Int: VerificationResult] = [:]
        while let items = reader.nextBatch(maximumCount: 64) {
            for (item, var result) in zip(items, items.map(verifier.verify)) {
                deduplicator.apply(to: &result, source: item.source, line: item.line)
                results[item.line] = result
            }
        }
        #expect(reader.failures.isEmpty)
        return results
    }

    @Test("The manifest covers every fixture file and every rule but P5")
    func coverage() throws {
        #expect(FixtureManifest.entries.count > 200)
        let rules = Set(FixtureManifest.entries.flatMap { ($0.rule.map { [$0] } ?? []) + $0.warnings })
        let missing = RuleID.allCases.map(\.rawValue).filter { !rules.contains($0) }
        #expect(missing == ["P5"], "P5 needs Apple's development key; PostbackRuleTests covers it")
        let listed = Set(FixtureManifest.entries.map(\.path))
        let files = try FileManager.default.subpathsOfDirectory(atPath: TestPaths.fixtures.path)
            .filter { ["valid/", "invalid/", "dedupe/", "skadnetwork/"].contains(where: $0.hasPrefix) }
            .filter { [".json", ".jsonl", ".jws", ".txt"].contains(where: $0.hasSuffix) }
        #expect(Set(files) == listed)
    }

    @Test("Each fixture gets its manifest result", arguments: FixtureManifest.entries)
    func fixture(_ entry: Entry) throws {
        let results = try Self.results(of: entry.path, allowingDevelopment: entry.allowDevelopment,
                                       skAdNetworkTestKeys: entry.skadnetworkTestKeys ?? false)
        let result = try #require(results[entry.line ?? 1], "no item at line \(entry.line ?? 1)")
        #expect(result.verdict.rawValue == entry.verdict)
        #expect(result.firstError?.code?.rawValue == entry.code, "\(result.errors)")
        #expect(result.firstError?.rule.rawValue == entry.rule, "\(result.errors)")
        #expect(result.warnings.map(\.rule.rawValue).sorted() == entry.warnings.sorted(), "\(result.warnings)")
        if let signature = entry.signature {
            #expect(result.signature.rawValue == signature)
        }
        if entry.verdict == "valid" {
            #expect(result.tier == entry.tier)
        }
        if entry.kindCertain ?? true {
            #expect(result.kind.rawValue == entry.kind)
        }
        if let environment = entry.environment {
            #expect(result.environment?.rawValue == environment)
        }
        #expect(result.duplicateOf?.line == entry.duplicateOf)
        if let keyID = entry.keyID {
            #expect(result.keyID == keyID)
        }
        #expect(result.signedString == entry.signedString)
    }
}
