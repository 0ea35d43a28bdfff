import Foundation
import Testing
@_spi(CommandLine) @_spi(Servers) @_spi(Stores) @testable import Attribution
@testable import postback_verify

/// Every fixture gets the result `Fixtures/manifest.json` gives. The manifest was written from the spec by the
/// fixture script (`Fixtures/make-fixtures.py`), independently of this verifier's output.
@Suite("Fixtures")
struct FixtureManifestTests {
    struct Entry: Codable, Sendable, CustomTestStringConvertible {
        let path: String
        let line: Int?
        let verdict: String
        let code: String?
        let rule: String?
        let warnings: [String]
        let allowDevelopment: Bool
        let kind: String
        let kindCertain: Bool?
        let signature: String?
        let tier: Int?
        let environment: String?
        let duplicateOf: Int?
        let what: String
        /// Under `Fixtures/skadnetwork/`: verify with the test-only SKAdNetwork keys in place of Apple's.
        let skadnetworkTestKeys: Bool?
        /// SKAdNetwork: `skadnetwork-p256` or `skadnetwork-p192`, once the version was read.
        let keyID: String?
        /// SKAdNetwork: the exact signed string the result must report, once the signature check was reached.
        let signedString: String?

        var testDescription: String { "\(path):\(line ?? 1) \(what)" }
    }

    static let entries: [Entry] = {
        let url = TestPaths.fixtures.appendingPathComponent("manifest.json")
        guard let data = try? Data(contentsOf: url),
              let entries = try? JSONDecoder().decode([Entry].self, from: data) else { return [] }
        return entries
    }()

    /// Fixed at 2026-11-21 so I3 (future timestamps) does not depend on when the tests run.
    static let clock: @Sendable () -> UInt64 = { 1_795_305_600_000 }

    static func verifier(allowingDevelopment: Bool, skAdNetworkTestKeys: Bool = false) throws -> AttributionVerifier {
        var ring = KeyRing(allowingDevelopmentKeys: allowingDevelopment)
        for keyID in ["fixture.adattributionkit", "fixture-apple-identifier/0"] {
            let file = keyID.replacingOccurrences(of: "/", with: "-") + ".pem"
            let pem = String(decoding: try TestPaths.bytes(
                TestPaths.fixtures.appendingPathComponent("keys/\(file)")), as: UTF8.self)
            try ring.add(try ECPublicKey(pemRepresentation: pem), keyID: keyID)
        }
        if skAdNetworkTestKeys {
            for curve in [ECPublicKey.Curve.p256, .p192] {
                let file = curve == .p256 ? "fixture-skadnetwork-p256.pem" : "fixture-skadnetwork-p192.pem"
                let pem = String(decoding: try TestPaths.bytes(
                    TestPaths.fixtures.appendingPathComponent("keys/\(file)")), as: UTF8.self)
                ring.replaceSKAdNetworkKey(with: try ECPublicKey(pemRepresentation: pem, curve: curve))
            }
        }
        return AttributionVerifier(keyRing: ring, policy: VerificationPolicy(clock: clock))
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
        #expect(Self.entries.count > 200)
        let rules = Set(Self.entries.flatMap { ($0.rule.map { [$0] } ?? []) + $0.warnings })
        let missing = RuleID.allCases.map(\.rawValue).filter { !rules.contains($0) }
        #expect(missing == ["P5"], "P5 needs Apple's development key; PostbackRuleTests covers it")
        let listed = Set(Self.entries.map(\.path))
        let files = try FileManager.default.subpathsOfDirectory(atPath: TestPaths.fixtures.path)
            .filter { ["valid/", "invalid/", "dedupe/", "skadnetwork/"].contains(where: $0.hasPrefix) }
            .filter { [".json", ".jsonl", ".jws", ".txt"].contains(where: $0.hasSuffix) }
        #expect(Set(files) == listed)
    }

    @Test("Each fixture gets its manifest result", arguments: entries)
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
