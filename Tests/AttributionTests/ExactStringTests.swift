import Foundation
import Testing

@_spi(CommandLine) @_spi(Servers) @_spi(Stores) @testable import Attribution

/// Spec section 2: strings that decide a key, a duplicate or an enumeration value compare by code points. Swift's
/// `String ==` does not (it uses canonical equivalence), so each case here first shows that `==` would accept the
/// look-alike, then that the verifier does not.
@Suite("Exact string comparison")
struct ExactStringTests {
    /// Pairs that Swift's `==` calls equal and that differ in their scalars.
    static let lookAlikes: [(String, String)] = [
        ("K-kid", "\u{212A}-kid"),            // U+212A KELVIN SIGN
        ("\u{C5}-id", "A\u{30A}-id"),         // precomposed and decomposed A with ring above
        ("\u{212B}-id", "\u{C5}-id"),         // U+212B ANGSTROM SIGN
        ("semi;colon", "semi\u{37E}colon"),   // U+037E GREEK QUESTION MARK
    ]

    @Test("ExactString keys a dictionary by scalars where String keys merge canonically equal strings",
          arguments: lookAlikes)
    func exactStringKeys(_ pair: (String, String)) {
        #expect(pair.0 == pair.1, "the pair is canonically equivalent, or this test proves nothing")
        #expect(ExactString(pair.0) != ExactString(pair.1))
        var byString: [String: Int] = [:]
        var byScalars: [ExactString: Int] = [:]
        for (index, string) in [pair.0, pair.1].enumerated() {
            byString[string] = index
            byScalars[ExactString(string)] = index
        }
        #expect(byString.count == 1)
        #expect(byScalars.count == 2)
        #expect(ExactString(pair.0) == ExactString(String(decoding: Array(pair.0.utf8), as: UTF8.self)))
    }

    /// A compact JWS with this `kid` and an all-ones signature (r and s in range, so J5 is the signature's
    /// verdict once a key is found).
    static func token(kid: String) -> [UInt8] {
        func segment(_ bytes: [UInt8]) -> String {
            Data(bytes).base64EncodedString()
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
        }
        let header = segment(Array(#"{"kid":"\#(kid)","alg":"ES256"}"#.utf8))
        let payload = segment(Array(#"{"postback-identifier":"x"}"#.utf8))
        return Array("\(header).\(payload).\(segment([UInt8](repeating: 1, count: 64)))".utf8)
    }


    @Test("Regression: a kid with U+212A KELVIN SIGN does not find the key loaded for the kid written with K")
    func kelvinSignKid() throws {
        var ring = KeyRing()
        try ring.add(FixtureManifest.fixtureKey(), keyID: "K-kid")
        let verifier = AttributionVerifier(keyRing: ring)

        let lookAlike = verifier.verify(Self.token(kid: "\u{212A}-kid"))
        #expect(lookAlike.firstError?.code == .unknownKey)
        #expect(lookAlike.signature == .notChecked)
        #expect(lookAlike.environment == nil)
        #expect(lookAlike.keyID.map { Array($0.utf8) } == Array("\u{212A}-kid".utf8))

        // The control: the kid as loaded reaches the signature check, so the lookup above is what refused.
        let exact = verifier.verify(Self.token(kid: "K-kid"))
        #expect(exact.firstError?.code == .badSignature)
        #expect(exact.signature == .failed)
    }

    @Test("Regression: kids equal only under canonical equivalence are two kids in one ring", arguments: lookAlikes)
    func lookAlikeKidsAreDistinct(_ pair: (String, String)) throws {
        var ring = KeyRing()
        try ring.add(FixtureManifest.fixtureKey(), keyID: pair.0)
        guard case .failure(let finding) = ring.trustedKey(for: pair.1) else {
            Issue.record("\(pair.1.unicodeScalars.map { String($0.value, radix: 16) }) found \(pair.0)'s key")
            return
        }
        #expect(finding.rule == "J3")
        #expect(throws: Never.self) { try ring.add(FixtureManifest.fixtureKey(), keyID: pair.1) }
        #expect(ring.trustedKeys.filter { $0.environment == .custom }.count == 2)
    }

    enum Probe: String, CaseIterable, ExactlySpelled {
        case kelvin = "K"
        case angstrom = "\u{C5}"
        static let spellings = makeSpellings()
    }

    @Test("Enumeration values are matched by scalars; init(rawValue:) would take the canonical equivalent")
    func enumerationValues() {
        #expect(Probe(rawValue: "\u{212A}") == .kelvin, "Swift's own init(rawValue:) uses canonical equivalence")
        #expect(Probe(exactly: "\u{212A}") == nil)
        #expect(Probe(exactly: "A\u{30A}") == nil)
        #expect(Probe(exactly: "K") == .kelvin)
        #expect(Probe(exactly: "\u{C5}") == .angstrom)
    }
}
