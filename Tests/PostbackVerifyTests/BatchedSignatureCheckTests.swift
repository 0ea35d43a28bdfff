import Foundation
import Testing
@_spi(CommandLine) @_spi(Servers) @_spi(Stores) @testable import Attribution
@testable import postback_verify

/// The general path's signature step over a whole batch (``AttributionVerifier/checkSignatures(_:)``, the batch ES256
/// check) must give every item exactly the result ``AttributionVerifier/verify(_:)-(InputItem)`` gives it alone.
@Suite("Signatures checked in batches")
struct BatchedSignatureCheckTests {
    @Test("Every fixture item in one batch: batched signature checks give each item its own result",
          arguments: [false, true])
    func allFixtures(allowingDevelopment: Bool) throws {
        let verifier = try FixtureManifestTests.verifier(allowingDevelopment: allowingDevelopment)
        let paths = Set(FixtureManifest.entries.filter { !($0.skadnetworkTestKeys ?? false) }.map(\.path))
        let reader = InputReader(paths: paths.sorted().map { TestPaths.fixtures.appendingPathComponent($0).path },
                                 maximumItemBytes: AttributionVerifier.maximumItemBytes)
        var items: [InputItem] = []
        while let batch = reader.nextBatch(maximumCount: 256) { items += batch }
        var prepared = items.map(verifier.prepare)
        let pending = prepared.filter { $0.pendingES256Check != nil }.count
        verifier.checkSignatures(&prepared)
        var verified = 0, failed = 0
        for (item, prepared) in zip(items, prepared) {
            let batched = verifier.complete(prepared)
            let single = verifier.verify(item)
            #expect(JSONLinesRecord.render(batched, source: item.source, line: item.line)
                        == JSONLinesRecord.render(single, source: item.source, line: item.line),
                    "\(item.source):\(item.line)")
            if batched.signature == .verified { verified += 1 }
            if batched.signature == .failed { failed += 1 }
        }
        // Most fixtures reach the ECDSA; among them are genuine signatures and forged or mismatched ones.
        #expect(pending > 100, "\(pending) signatures checked in the batch")
        #expect(verified > 100 && failed > 5, "\(verified) verified, \(failed) failed")
    }
}
