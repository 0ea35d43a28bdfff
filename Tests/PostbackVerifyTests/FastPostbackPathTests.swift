import Foundation
import Testing
@_spi(CommandLine) @_spi(Servers) @_spi(Stores) @testable import Attribution
@testable import postback_verify

/// The fast path must never disagree with the general path: when it answers, the item is valid with no finding by
/// the manifest (written from the spec, not from our output) and by the general path, and its record is the
/// general path's record byte for byte; when it does not answer, it wrote nothing.
@Suite("Fast postback path")
struct FastPostbackPathTests {
    /// Every fixture item, read as the CLI reads it, with the verifier its manifest entry asks for.
    struct Case: Sendable, CustomTestStringConvertible {
        let entry: FixtureManifest.Entry
        var testDescription: String { entry.testDescription }
    }

    static let cases = FixtureManifest.entries.filter { !($0.skadnetworkTestKeys ?? false) }.map(Case.init)

    @Test("On every fixture, an answer is the manifest's valid-without-warning result and the general record",
          arguments: cases)
    func fixture(_ testCase: Case) throws {
        let entry = testCase.entry
        let verifier = try FixtureManifestTests.verifier(allowingDevelopment: entry.allowDevelopment)
        let reader = InputReader(paths: [TestPaths.fixtures.appendingPathComponent(entry.path).path],
                                 maximumItemBytes: AttributionVerifier.maximumItemBytes)
        while let items = reader.nextBatch(maximumCount: 64) {
            for item in items where item.line == entry.line ?? 1 {
                guard case .bytes(let bytes) = item.content else { continue }
                if FastPathComparison.compare(bytes, verifier: verifier, source: item.source, line: item.line) {
                    // Valid, or a repeat of a valid one (D1 is the caller's, with the returned identifier).
                    #expect(entry.verdict == "valid" || entry.code == "duplicate")
                    // D2 (content differs from the first sighting) is the caller's too.
                    #expect(entry.warnings.allSatisfy { $0 == "D2" } && entry.kind == "postback")
                }
            }
        }
    }

    @Test("It answers for the plain valid postback bodies, and leaves the unusual ones to the general path")
    func coverage() throws {
        let verifier = try FixtureManifestTests.verifier(allowingDevelopment: true)
        func body(_ name: String) throws -> ArraySlice<UInt8> {
            ArraySlice(try TestPaths.bytes(TestPaths.fixtures.appendingPathComponent("valid/postback/\(name)")))
        }
        for plain in ["compact-one-line-body.json", "advertised-item-0.json", "advertised-item-max.json",
                      "high-s-signature.json", "low-s-signature.json", "body-no-trailing-newline.json",
                      // Apple writes the kid's slash escaped (`apple-cas-identifier\/0`): decoded, not declined.
                      "kid-escaped-slash-in-header.json"] {
            FastPathComparison.compare(try body(plain), verifier: verifier, source: plain, expectAnswer: true)
        }
        // Extra header members, a non-ASCII signed field: the general path's.
        for unusual in ["header-extra-members-ignored.json", "non-ascii-extra-signed-field.json"] {
            FastPathComparison.compare(try body(unusual), verifier: verifier, source: unusual, expectAnswer: false)
        }
        // The others carry warnings (T1-T6, U4, U5) or unusual JSON (unknown members, escapes, non-ASCII).
        var answered = 0
        let directory = TestPaths.fixtures.appendingPathComponent("valid/postback")
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path) where name.hasSuffix(".json") {
            if FastPathComparison.compare(try body(name), verifier: verifier, source: name) { answered += 1 }
        }
        #expect(answered >= 25, "answered \(answered)")
    }

    @Test("Every one-byte change of a plain body: any answer agrees with the general path")
    func mutations() throws {
        let verifier = try FixtureManifestTests.verifier(allowingDevelopment: false)
        let original = try TestPaths.bytes(
            TestPaths.fixtures.appendingPathComponent("valid/postback/compact-one-line-body.json"))
        var answered = 0
        for position in original.indices {
            for replacement: UInt8 in [0x20, UInt8(ascii: "\""), UInt8(ascii: "0"), UInt8(ascii: "\\"), 0xC3] {
                var mutated = original
                guard mutated[position] != replacement else { continue }
                mutated[position] = replacement
                if FastPathComparison.compare(ArraySlice(mutated), verifier: verifier) { answered += 1 }
            }
        }
        // Whitespace between tokens and digit changes in unsigned values keep some mutations valid.
        #expect(answered > 0)
    }

    /// The worker's way: a whole batch prepared, its signatures checked together, then completed. Over every fixture
    /// and every one-byte change of a plain body in one batch (forged signatures among genuine ones), each item's
    /// answer and record must be the single call's.
    @Test("Signatures checked as one batch give every item the single call's answer and record")
    func batchOfSteps() throws {
        let verifier = try FixtureManifestTests.verifier(allowingDevelopment: false)
        let fast = FastPostbackPath(verifier)
        let original = try TestPaths.bytes(
            TestPaths.fixtures.appendingPathComponent("valid/postback/compact-one-line-body.json"))
        var bodies: [[UInt8]] = [original]
        for position in original.indices {
            for replacement: UInt8 in [UInt8(ascii: "A"), UInt8(ascii: "0"), UInt8(ascii: "_")]
            where original[position] != replacement {
                var mutated = original
                mutated[position] = replacement
                bodies.append(mutated)
            }
        }
        let directory = TestPaths.fixtures.appendingPathComponent("valid/postback")
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        where name.hasSuffix(".json") {
            bodies.append(try TestPaths.bytes(directory.appendingPathComponent(name)))
        }
        let preparedBodies = bodies.compactMap { body in
            fast.prepare(ArraySlice(body), source: "b", line: 1).map { (body, $0) }
        }
        var prepared = preparedBodies.map(\.1)
        fast.checkSignatures(&prepared)
        var answered = 0, declinedAfterCheck = 0
        for ((body, _), checked) in zip(preparedBodies, prepared) {
            var single: [UInt8] = []
            let singleIdentifier = fast.appendRecord(for: ArraySlice(body), source: "b", line: 1, to: &single)
            let batched = fast.record(of: checked)
            let batchedIdentifier = batched?.postbackIdentifier.description
            #expect(batchedIdentifier == singleIdentifier && (batched?.record ?? []) == single,
                    "\(String(decoding: body, as: UTF8.self))")
            if batchedIdentifier != nil { answered += 1 }
            if checked.signatureVerified == false { declinedAfterCheck += 1 }
        }
        // Genuine items are answered; changed signature characters are prepared and then fail the batch check.
        #expect(answered >= 25)
        #expect(declinedAfterCheck > 100, "\(declinedAfterCheck) forged signatures in the batch")
    }

    @Test("Unsigned members: the fast path answers exactly when the item stays valid without a finding",
          arguments: [
            (#","conversion-value":64"#, false), (#","conversion-value":1.0"#, false),
            (#","conversion-value":-1"#, false), (#","conversion-value":01"#, false),
            (#","country-code":"us""#, false), (#","jws-string":"x""#, false), (#","extra":null"#, false),
            (#","ad-interaction-type":"view""#, false), (#","ad-\u0069nteraction-type":"view""#, false),
            (#","nested":{}"#, false), (#","conversion-value":18446744073709551616"#, false),
            (#","conversion-value":"5""#, false), (#","coarse-conversion-value":"LOW""#, false),
            (#","coarse-conversion-value":"low""#, true), (#" , "conversion-value" :\#t63 "#, true),
            (#","conversion-value":0"#, true),
            // Escapes are decoded exactly; those of characters a record would have to escape are declined.
            (#","country-code":"\u0055S""#, true), (#","country-c\u006fde":"US""#, true),
            (#","country-code":"U\/""#, false), (#","country-code":"U\u00c9""#, false),
            (#","country-code":"U\"""#, false), (#","country-code":"U\u0022""#, false),
            (#","country-code":"U\u005""#, false), (#","country-code":"U\x53""#, false),
          ])
    func unsignedVariants(_ extra: String, answers: Bool) throws {
        let verifier = try FixtureManifestTests.verifier(allowingDevelopment: false)
        var body = try TestPaths.bytes(
            TestPaths.fixtures.appendingPathComponent("valid/postback/compact-one-line-body.json"))
        while let last = body.last, last == 0x0A || last == 0x20 { body.removeLast() }
        #expect(body.last == UInt8(ascii: "}"))
        body.removeLast()
        body += Array(extra.utf8) + [UInt8(ascii: "}")]
        FastPathComparison.compare(ArraySlice(body), verifier: verifier, expectAnswer: answers)
    }
}
