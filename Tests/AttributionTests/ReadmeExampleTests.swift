import Foundation
import Testing

@testable import Attribution

// README:begin server
/// What a postback endpoint answers (spec section 11): 200 once the body and its verdict are stored, whatever
/// the verdict; 500 only when they could not be stored, so that the device sends the postback again.
func answerPostback(
    _ body: [UInt8], verifier: ItemVerifier,
    store: (_ body: [UInt8], _ result: VerificationResult) throws -> Void
) -> Int {
    let result = verifier.verify(body)
    do {
        try store(body, result)  // every body, invalid ones too, with result.verdict and result.firstError
    } catch {
        return 500  // not stored: the device retries, up to nine times over at most 9 days
    }
    return 200  // never 400 for an invalid verdict: a refused postback is never sent again
}

/// The signed facts of a genuine postback, and the unsigned values kept apart (anyone on the path can change them).
func describe(_ result: VerificationResult) -> String {
    guard result.verdict == .valid, let postback = result.postback else {
        return "invalid: \(result.firstError?.code?.rawValue ?? "")"  // stable codes: bad-signature, unknown-key, ...
    }
    let unsigned = result.body?.conversionValue.map { " conversion-value \($0) (unsigned)" } ?? ""
    return "\(postback.postbackIdentifier) \(postback.conversionType.rawValue) "
        + "source \(postback.sourceIdentifier)\(unsigned)"
}
// README:end server

/// The README's library example compiles (it is this file's code) and behaves as the README says.
@Suite("README examples")
struct ReadmeExampleTests {
    static let apple = try! TestPaths.bytes(TestPaths.vector("reference/apple/postback-development-valid.json"))
    static let forged = try! TestPaths.bytes(TestPaths.vector("reference/apple/postback-production-bad-signature.json"))

    @Test("The README shows this file's server example verbatim")
    func readmeHasTheExample() throws {
        let source = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
        let start = try #require(source.range(of: "// README:begin server\n"))
        let end = try #require(source.range(of: "// README:end server"))
        let snippet = String(source[start.upperBound..<end.lowerBound])
        let readme = try String(contentsOf: TestPaths.packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
        #expect(readme.contains("```swift\nimport Attribution\n\n" + snippet + "```"))
    }

    @Test("200 for a stored body whatever its verdict; 500 only when storing failed")
    func answers() {
        struct Unavailable: Error {}
        let verifier = ItemVerifier(keyRing: KeyRing(allowingDevelopmentKeys: true))
        var stored: [Verdict] = []
        #expect(answerPostback(Self.apple, verifier: verifier) { stored.append($1.verdict) } == 200)
        #expect(answerPostback(Self.forged, verifier: verifier) { stored.append($1.verdict) } == 200)
        #expect(stored == [.valid, .invalid])
        #expect(answerPostback(Self.apple, verifier: verifier) { _, _ in throw Unavailable() } == 500)
    }

    @Test("describe names the signed facts of a genuine postback and the code of a forged one")
    func describes() {
        let verifier = ItemVerifier(keyRing: KeyRing(allowingDevelopmentKeys: true))
        #expect(describe(verifier.verify(Self.apple))
            == "85546EB7-FD39-44BC-8990-C98A4AC36A49 re-engagement source 1234 conversion-value 24 (unsigned)")
        #expect(describe(verifier.verify(Self.forged)) == "invalid: bad-signature")
    }
}

/// The library's public batch call gives exactly the results of one-by-one verification.
@Suite("Batch verification through the public API")
struct PublicBatchTests {
    @Test("verify(batch:) over every fixture item gives each item verify(_:)'s record, in order")
    func batchEqualsSingle() throws {
        for allowingDevelopment in [false, true] {
            let verifier = try FixtureManifestTests.verifier(allowingDevelopment: allowingDevelopment)
            var items: [[UInt8]] = []
            for entry in FixtureManifestTests.entries where entry.line == 1 && !entry.path.hasSuffix(".jsonl") {
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
