import Foundation
import Testing
@_spi(CommandLine) @_spi(Servers) @_spi(Stores) @testable import Attribution

/// Apple's documentation examples and RFC 7515 A.3, with the results `Vectors/reference/README.md` gives.
@Suite("Apple's examples")
struct AppleVectorTests {
    static let clock: @Sendable () -> UInt64 = { 1_800_000_000_000 }

    func verify(_ path: String, allowingDevelopment: Bool) throws -> VerificationResult {
        let verifier = AttributionVerifier(
            keyRing: KeyRing(allowingDevelopmentKeys: allowingDevelopment),
            policy: VerificationPolicy(clock: Self.clock))
        return verifier.verify(try TestPaths.bytes(TestPaths.vector("reference/apple/\(path)")))
    }

    @Test("The current postback example verifies with development keys allowed")
    func developmentExampleVerifies() throws {
        let result = try verify("postback-development-valid.json", allowingDevelopment: true)
        #expect(result.verdict == .valid, "\(result.errors)")
        #expect(result.kind == .postback)
        #expect(result.signature == .verified)
        #expect(result.keyID == "apple-development-identifier/1")
        #expect(result.environment == .development)
        let postback = try #require(result.postback)
        #expect(postback.postbackIdentifier == "85546EB7-FD39-44BC-8990-C98A4AC36A49")
        #expect(postback.conversionType == .reEngagement)
        #expect(postback.sourceIdentifier == "1234")
        #expect(postback.advertisedItemIdentifier == 10_738_027_756)
        #expect(result.body?.conversionValue == 24)
        #expect(result.body?.countryCode == "US")
        #expect(result.unsigned?.contains("jws-string") == false)
        #expect(result.warnings.map(\.rule).contains("P5") == false)
    }

    @Test("The current postback example is untrusted-key without development keys")
    func developmentExampleIsUntrustedByDefault() throws {
        let result = try verify("postback-development-valid.json", allowingDevelopment: false)
        #expect(result.verdict == .invalid)
        #expect(result.firstError?.code == .untrustedKey)
        #expect(result.firstError?.rule == "J4")
        #expect(result.signature == .notChecked)
        #expect(result.fields == nil)
    }

    @Test("The earlier production example fails its signature", arguments: [false, true])
    func productionExampleFails(allowingDevelopment: Bool) throws {
        let result = try verify("postback-production-bad-signature.json", allowingDevelopment: allowingDevelopment)
        #expect(result.verdict == .invalid)
        #expect(result.firstError?.code == .badSignature)
        #expect(result.firstError?.rule == "J5")
        #expect(result.signature == .failed)
        #expect(result.environment == .production)
        #expect(result.fields == nil, "unauthenticated fields must not be reported as decoded")
    }

    @Test("The impression example is unknown-key yet decodes and passes the field rules")
    func impressionExample() throws {
        let line = try TestPaths.bytes(TestPaths.vector("reference/apple/impression-example.jws"))
            .prefix { $0 != UInt8(ascii: "\n") }
        let result = AttributionVerifier(keyRing: KeyRing(allowingDevelopmentKeys: true)).verify(line)
        #expect(result.verdict == .invalid)
        #expect(result.firstError?.code == .unknownKey)
        #expect(result.kind == .impression)
        #expect(result.keyID == "example.adattributionkit")

        let token = try TestPaths.bytes(TestPaths.vector("reference/apple/impression-example.jws"))
        let jws = try CompactJWS(ArraySlice(token.prefix { $0 != UInt8(ascii: "\n") }))
        let payload = try #require(try StrictJSONParser.parse(jws.payloadBytes).objectValue)
        var findings: [Finding] = []
        let impression = try #require(ImpressionPayload.decode(payload, findings: &findings))
        #expect(findings.isEmpty)
        #expect(impression.sourceIdentifier == 5239)
        #expect(impression.eligibleForReEngagement == true)
        #expect(ImpressionRules.check(payload, keyID: "example.adattributionkit",
                                      policy: VerificationPolicy(clock: Self.clock)).isEmpty)
    }

    @Test("RFC 7515 A.3 verifies at the JWS level and fails through the item verifier (no kid)")
    func rfc7515AppendixA3() throws {
        let pem = String(decoding: try TestPaths.bytes(TestPaths.vector("reference/rfc7515/a3-public-key.pem")),
                         as: UTF8.self)
        let key = TrustedKey(keyID: "rfc7515", key: try ECPublicKey(pemRepresentation: pem), environment: .custom)
        let text = try TestPaths.bytes(TestPaths.vector("reference/rfc7515/a3.jws"))
        let token = ArraySlice(text.prefix { $0 != UInt8(ascii: "\n") && $0 != UInt8(ascii: "\r") })
        // A.3's header has no kid, so resolve any header to the A.3 key by reading alg only.
        let outcome = JWSVerification.verify(token) { _ in .success(key) }
        #expect(outcome.failure?.rule == "J3", "A.3 names no kid, which this verifier requires")

        let jws = try CompactJWS(token)
        #expect(key.key.isValidES256Signature(jws.signatureBytes, for: jws.signingInput))
        var tampered = Array(jws.signingInput)
        tampered[tampered.count - 1] ^= 1
        #expect(!key.key.isValidES256Signature(jws.signatureBytes, for: tampered))

        let result = AttributionVerifier(keyRing: KeyRing()).verify(token)
        #expect(result.verdict == .invalid)
    }
}
