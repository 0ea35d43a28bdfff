import Foundation
import Testing

@_spi(CommandLine) @_spi(Servers) @_spi(Stores) @testable import Attribution

/// The library's public batch call gives exactly the results of one-by-one verification.
@Suite("Batch verification through the public API")
struct PublicBatchTests {
    @Test("verify(batch:) over every fixture item gives each item verify(_:)'s record, in order")
    func batchEqualsSingle() throws {
        for allowingDevelopment in [false, true] {
            let verifier = try FixtureManifest.verifier(allowingDevelopment: allowingDevelopment)
            var items: [[UInt8]] = []
            for entry in FixtureManifest.entries where entry.line == 1 && !entry.path.hasSuffix(".jsonl") {
                items.append(try TestPaths.bytes(TestPaths.fixtures.appendingPathComponent(entry.path)))
            }
            #expect(items.count > 200)
            let batch = verifier.verify(batch: items)
            #expect(batch.count == items.count)
            for (item, result) in zip(items, batch) {
                let single = verifier.verify(item)
                #expect(JSONLinesRecord.render(result, source: "-", line: 1)
                    == JSONLinesRecord.render(single, source: "-", line: 1))
            }
            #expect(batch.contains { $0.verdict == .valid } && batch.contains { $0.signature == .failed })
        }
    }
}
