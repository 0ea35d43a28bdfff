import Testing
@_spi(CommandLine) @_spi(Servers) @_spi(Stores) @testable import Attribution

/// D2's fingerprint: what two sightings of one postback held, and which members differ.
@Suite("Content fingerprints (D2)")
struct ContentFingerprintTests {
    static func fingerprint(signed: String = "payload", _ members: [(String, String)]) -> ContentFingerprint {
        var builder = ContentFingerprint.Builder(signedDigest: SHA256Digest(of: Array(signed.utf8)))
        for (name, value) in members { builder.add(name: Array(name.utf8), value: Array(value.utf8)) }
        return builder.finish()
    }

    static let apple = [("ad-interaction-type", #""click""#), ("conversion-value", "21"), ("country-code", #""US""#)]
    static let long = String(repeating: "9", count: 40)

    struct Case: Sendable, CustomTestStringConvertible {
        let testDescription: String
        let later: ContentFingerprint
        let signed: Bool
        let unsigned: [String]
    }

    static let cases: [Case] = [
        Case(testDescription: "the same content", later: fingerprint(apple), signed: false, unsigned: []),
        Case(testDescription: "the same members in another order", later: fingerprint(apple.reversed()),
             signed: false, unsigned: []),
        Case(testDescription: "a changed value", later: fingerprint([apple[0], ("conversion-value", "63"), apple[2]]),
             signed: false, unsigned: ["conversion-value"]),
        Case(testDescription: "a member added and one removed",
             later: fingerprint([apple[0], apple[1], ("coarse-conversion-value", #""low""#)]),
             signed: false, unsigned: ["coarse-conversion-value", "country-code"]),
        Case(testDescription: "another signed payload", later: fingerprint(signed: "other", apple),
             signed: true, unsigned: []),
        Case(testDescription: "a bare JWS (no unsigned member)", later: fingerprint([]), signed: false,
             unsigned: ["ad-interaction-type", "conversion-value", "country-code"]),
        Case(testDescription: "a long value, hashed, changed in its last byte",
             later: fingerprint([apple[0], ("conversion-value", long.dropLast() + "8"), apple[2]]),
             signed: false, unsigned: ["conversion-value"]),
    ]

    @Test("Differences from Apple-shaped first content", arguments: cases)
    func differences(_ testCase: Case) throws {
        let differences = testCase.later.differences(from: Self.fingerprint(Self.apple))
        #expect(differences.signedPayload == testCase.signed)
        #expect(differences.unsignedMembers == testCase.unsigned)
        #expect(differences.isEmpty == (!testCase.signed && testCase.unsigned.isEmpty))
        // What a store keeps reads back as the same fingerprint.
        #expect(ContentFingerprint(bytes: testCase.later.bytes) == testCase.later)
    }

    @Test("A long value is hashed: same bytes, no difference; the fingerprint stays small")
    func longValue() {
        let first = Self.fingerprint([("conversion-value", Self.long)])
        #expect(first.differences(from: Self.fingerprint([("conversion-value", Self.long)])).isEmpty)
        #expect(first.bytes.count < 1 + 32 + 1 + 1 + 16 + 1 + 16 + 1)
    }

    @Test("Regression: a body of thousands of members gives a bounded fingerprint, and still names a changed one")
    func manyMembers() {
        let members = (0..<5000).map { ("member-\($0)", "\($0)") }
        var changed = members
        changed[4999].1 = "changed"
        let first = Self.fingerprint(members + [(String(repeating: "n", count: 100), "1")])
        let later = Self.fingerprint(changed + [(String(repeating: "n", count: 100), "1")])
        #expect(first.bytes.count < 3 * 1024)
        #expect(later.differences(from: first).unsignedMembers == ["(other unsigned members)"])
        var earlyChange = members
        earlyChange[3].1 = "changed"
        #expect(Self.fingerprint(earlyChange).differences(from: Self.fingerprint(members)).unsignedMembers
                == ["member-3"])
    }

    @Test("Bytes that are not a fingerprint are refused", arguments: [
        [], [1], [2] + [UInt8](repeating: 0, count: 33), [1] + [UInt8](repeating: 0, count: 32) + [1],
        [1] + [UInt8](repeating: 0, count: 32) + [1, 1, 65, 17] + [UInt8](repeating: 0, count: 17),
        [1] + [UInt8](repeating: 0, count: 32) + [0, 9],
    ] as [[UInt8]])
    func malformed(_ bytes: [UInt8]) {
        #expect(ContentFingerprint(bytes: bytes) == nil)
    }
}
