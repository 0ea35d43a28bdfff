// The check of the Attribution catalog's Schemas article (`decodeConversion`), run by Examples/run.sh from a package
// that sees only the public API. The expected campaign comes from the fixture schema itself (source identifier 12).
import Attribution
import Foundation

func check_Sources_Attribution_Attribution_docc_Schemas_md(root: String) throws {
    var ring = KeyRing()
    try ring.add(ECPublicKey(keyFile: "\(root)/Fixtures/keys/fixture-apple-identifier-0.pem"),
                 keyID: "fixture-apple-identifier/0")
    let verifier = AttributionVerifier(keyRing: ring)
    let body = [UInt8](try Data(contentsOf: URL(fileURLWithPath:
        "\(root)/Fixtures/valid/postback/compact-one-line-body.json")))
    let schema = "\(root)/Fixtures/schema/example-schema.json"
    let arrival = Date(timeIntervalSince1970: 1_750_000_000)  // June 2025, inside the app's validity period
    let decoded = try decodeConversion(verifier.verify(body), schemaPath: schema, arrival: arrival)
    try expect(decoded?.campaign == "Spring launch (2-digit)",
               "the campaign of source 12: \(String(describing: decoded))")
    try expect(decoded?.events == [], "no conversion value, no events")
    // Not a valid postback: nil. A file that is not a schema: invalid-option.
    try expect(try decodeConversion(AttributionVerifier(keyRing: KeyRing()).verify(body), schemaPath: schema,
                                    arrival: arrival) == nil, "an invalid item decodes to nil")
    do {
        _ = try decodeConversion(verifier.verify(body), schemaPath: "\(root)/README.md", arrival: arrival)
        throw CheckFailed(description: "README.md is not a schema")
    } catch let error as AttributionError {
        try expect(error.code == .invalidOption, "not a schema: invalid-option, got \(error)")
    }
}
