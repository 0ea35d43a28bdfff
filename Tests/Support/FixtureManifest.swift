import Foundation
@_spi(CommandLine) @_spi(Servers) @_spi(Stores) @testable import Attribution
import Testing

/// `Fixtures/manifest.json`, the verifier its items verify under, and a day's traffic signed with the test-only
/// key: the library's, the stores' and the command line's tests all verify these.
enum FixtureManifest {
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

    /// The fixture key `fixture-apple-identifier/0`.
    static func fixtureKey() throws -> ECPublicKey {
        let pem = String(decoding: try TestPaths.bytes(
            TestPaths.fixtures.appendingPathComponent("keys/fixture-apple-identifier-0.pem")), as: UTF8.self)
        return try ECPublicKey(pemRepresentation: pem)
    }

    /// A day's traffic in one batch: a postback, its exact retry, the same token with another `conversion-value`
    /// (D2: the unsigned content differs), a second postback, a body the fast path leaves to the general path
    /// (an extra header member) and its retry, and a forgery of the first.
    static func items() throws -> [InputItem] {
        let signer = try TestPostbackSigner()
        let first = try signer.body(postbackIdentifier: "6D0E6B5C-8F0B-4C57-9E55-2F4E3A1B9C01")
        let second = try signer.body(postbackIdentifier: "6D0E6B5C-8F0B-4C57-9E55-2F4E3A1B9C02", conversionValue: 7)
        let changed = first.replacingOccurrences(of: #""conversion-value":21"#, with: #""conversion-value":22"#)
        let general = String(decoding: try TestPaths.bytes(TestPaths.fixtures.appendingPathComponent(
            "valid/postback/header-extra-members-ignored.json")), as: UTF8.self)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let lines = [first, first, changed, second, general, general, forged(first)]
        return lines.enumerated().map { index, line in
            InputItem(source: "day.jsonl", line: index + 1, content: .bytes(ArraySlice(line.utf8)))
        }
    }

    /// The verifier the test items verify under: the fixture keys, the development key allowed.
    static func trusting() throws -> AttributionVerifier {
        try verifier(allowingDevelopment: true)
    }

    /// A day's traffic (``items()``: a postback, its retry, a changed retry, another, a body
    /// the fast path leaves to the general path and its retry, a forgery), each as a request's body.
    static func requests() throws -> [(body: [UInt8], source: String)] {
        try items().map { item in
            guard case .bytes(let bytes) = item.content else { throw CancellationError() }
            return (Array(bytes), "request-\(item.line)")
        }
    }

    /// The body with one character of its signature changed: the usual shape, a bad signature.
    static func forged(_ body: String) -> String {
        var bytes = Array(body.utf8)
        // The signature segment ends the token: change a character well inside it (not its last, whose unused bits
        // would make it non-canonical base64url instead).
        let end = bytes.firstIndex(of: UInt8(ascii: "\""), after: 15)!
        bytes[end - 10] = bytes[end - 10] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        return String(decoding: bytes, as: UTF8.self)
    }
}

extension Array where Element == UInt8 {
    /// The index of the first `byte` after position `start`.
    func firstIndex(of byte: UInt8, after start: Int) -> Int? {
        self[(start + 1)...].firstIndex(of: byte)
    }
}
