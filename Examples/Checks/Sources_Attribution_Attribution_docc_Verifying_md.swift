// The check of the Attribution catalog's Verifying article (`verifyWithAppleKeys`, `keyRingWithImpressionKey`), run
// by Examples/run.sh from a package that sees only the public API.
import Attribution
import Foundation

func check_Sources_Attribution_Attribution_docc_Verifying_md(root: String) throws {
    func bytes(_ path: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: URL(fileURLWithPath: "\(root)/\(path)")))
    }
    // Apple's production key only: Apple's development example names an untrusted kid, and its earlier production
    // example's signature does not verify.
    let development = try bytes("Fixtures/valid/apple/postback-development-valid.json")
    let production = try bytes("Fixtures/invalid/apple/postback-production-bad-signature.json")
    try expect(verifyWithAppleKeys(development).firstError?.code == .untrustedKey, "development kid: untrusted-key")
    let forged = verifyWithAppleKeys(production)
    try expect(forged.verdict == .invalid && forged.firstError?.code == .badSignature, "production: bad-signature")

    // An impression key file is trusted for its kid; a file that is not a key is refused with invalid-key.
    let ring = try keyRingWithImpressionKey(atPath: "\(root)/Fixtures/keys/fixture.adattributionkit.pem")
    _ = AttributionVerifier(keyRing: ring)
    do {
        _ = try keyRingWithImpressionKey(atPath: "\(root)/Fixtures/valid/apple/postback-development-valid.json")
        throw CheckFailed(description: "a postback is not a key file")
    } catch let error as AttributionError {
        try expect(error.code == .invalidKey, "not a key: invalid-key, got \(error)")
    }
}
