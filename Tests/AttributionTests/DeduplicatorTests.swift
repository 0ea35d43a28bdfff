import Foundation
import Testing
@_spi(CommandLine) @_spi(Servers) @_spi(Stores) @testable import Attribution

/// Rule D1: repeats of a valid postback are duplicates; invalid items never count as seen.
@Suite("Deduplication (D1)")
struct DeduplicatorTests {
    let verifier = AttributionVerifier(keyRing: KeyRing(allowingDevelopmentKeys: true))

    func genuine() throws -> [UInt8] {
        try TestPaths.bytes(TestPaths.vector("reference/apple/postback-development-valid.json"))
    }

    /// The genuine body with one signature character changed: same postback-identifier, signature fails.
    func forged() throws -> [UInt8] {
        var text = String(decoding: try genuine(), as: UTF8.self)
        let range = try #require(text.range(of: "_1U4oQ\""))
        text.replaceSubrange(range, with: "_1U4oA\"")
        return Array(text.utf8)
    }

    @Test("A second identical valid postback is a duplicate of the first line")
    func repeatIsDuplicate() throws {
        let deduplicator = TestDeduplicator()
        var first = verifier.verify(try genuine())
        var second = verifier.verify(try genuine())
        deduplicator.apply(to: &first, source: "a.jsonl", line: 3)
        deduplicator.apply(to: &second, source: "a.jsonl", line: 7)
        #expect(first.verdict == .valid)
        #expect(second.verdict == .invalid)
        #expect(second.firstError?.code == .duplicate)
        #expect(second.firstError?.rule == "D1")
        #expect(second.duplicateOf.map { [$0.source, "\($0.line)"] } == ["a.jsonl", "3"])
        #expect(second.warnings.isEmpty, "the same content: no D2")
    }

    @Test("A forgery carrying a genuine postback's identifier cannot shadow it")
    func forgeryDoesNotShadow() throws {
        let deduplicator = TestDeduplicator()
        var forgery = verifier.verify(try forged())
        var real = verifier.verify(try genuine())
        deduplicator.apply(to: &forgery, source: "-", line: 1)
        deduplicator.apply(to: &real, source: "-", line: 2)
        #expect(forgery.firstError?.code == .badSignature)
        #expect(real.verdict == .valid)
        #expect(real.duplicateOf == nil)
        #expect(deduplicator.count == 1)
    }

    @Test("Strict mode: a postback made invalid by a warning is not counted as seen")
    func strictInvalidNotSeen() throws {
        var body = String(decoding: try genuine(), as: UTF8.self)
        // Dropping the unsigned ad-interaction-type gives a U4 warning and breaks U3 (re-engagement needs click).
        body = body.replacingOccurrences(of: "\"ad-interaction-type\": \"click\",", with: "")
        let strict = AttributionVerifier(keyRing: KeyRing(allowingDevelopmentKeys: true),
                                  policy: VerificationPolicy(isStrict: true))
        let deduplicator = TestDeduplicator()
        var first = strict.verify(Array(body.utf8))
        deduplicator.apply(to: &first, source: "-", line: 1)
        #expect(first.verdict == .invalid)
        #expect(deduplicator.count == 0)
    }
}

/// Keys compare by their UTF-8 bytes: canonically equivalent strings are different postbacks (spec section 2).
@Suite("Deduplication keys (D1): code points, not canonical equivalence")
struct DeduplicationKeyTests {
    /// Valid results carrying only a deduplication key, as a verified postback (or SKAdNetwork postback) has.
    static func valid(key: String) -> VerificationResult {
        var result = VerificationResult()
        result.kind = .postback
        result.deduplicationKey = ExactString(key)
        return result
    }

    @Test("Regression: postback-identifiers A+U+030A and U+00C5 are two postbacks, neither a duplicate",
          arguments: [
              ("A\u{030A}", "\u{00C5}"),
              ("K", "\u{212A}"),  // KELVIN SIGN, canonically equivalent to K
              // SKAdNetwork keys: transaction-id, U+001F, index (and more), canonically equivalent transaction-ids.
              ("A\u{030A}\u{1F}0", "\u{00C5}\u{1F}0"),
          ])
    func equivalentKeysAreDistinct(first: String, second: String) {
        #expect(first == second, "the pair must be canonically equivalent for this test to mean anything")
        let deduplicator = TestDeduplicator()
        var one = Self.valid(key: first)
        var two = Self.valid(key: second)
        deduplicator.apply(to: &one, source: "-", line: 1)
        deduplicator.apply(to: &two, source: "-", line: 2)
        #expect(one.verdict == .valid && two.verdict == .valid)
        #expect(one.duplicateOf == nil && two.duplicateOf == nil)
        #expect(deduplicator.count == 2)
        #expect(ExactString(first) != ExactString(second))
        var repeated = Self.valid(key: second)
        deduplicator.apply(to: &repeated, source: "-", line: 3)
        #expect(repeated.duplicateOf.map { [$0.source, "\($0.line)"] } == ["-", "2"])
    }

    @Test("A run's start is each first occurrence's time, and D1's message names it")
    func runStartIsReported() {
        let started = Date(timeIntervalSince1970: 1_795_305_600.123_9)
        let deduplicator = TestDeduplicator(runStarted: started)
        var first = Self.valid(key: "X")
        var second = Self.valid(key: "X")
        deduplicator.apply(to: &first, source: "a.jsonl", line: 3)
        deduplicator.apply(to: &second, source: "b.jsonl", line: 1)
        #expect(second.duplicateOf?.firstSeen == Date(timeIntervalSince1970: 1_795_305_600.123))
        #expect(second.firstError?.message.contains("a.jsonl:3") == true)
        #expect(second.firstError?.message.contains("2026-11-22T00:00:00.123Z") == true)
    }
}
