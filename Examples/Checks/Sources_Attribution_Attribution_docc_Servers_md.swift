// The check of the Attribution catalog's Servers article (`respond(to:requestID:verifier:store:)`), run by
// Examples/run.sh from a package that sees only the public API: 200 once the record is stored, whatever the verdict;
// 500 only when storing failed.
import Attribution
import Foundation

func check_Sources_Attribution_Attribution_docc_Servers_md(root: String) async throws {
    let verifier = AttributionVerifier(keyRing: KeyRing(allowingDevelopmentKeys: true))
    let valid = [UInt8](try Data(contentsOf: URL(fileURLWithPath:
        "\(root)/Fixtures/valid/apple/postback-development-valid.json")))
    let forged = [UInt8](try Data(contentsOf: URL(fileURLWithPath:
        "\(root)/Fixtures/invalid/apple/postback-production-bad-signature.json")))
    var records: [String] = []
    try expect(await respond(to: valid, requestID: "req-1", verifier: verifier) {
        records.append(String(decoding: $0, as: UTF8.self))
    } == 200, "valid: 200")
    try expect(await respond(to: forged, requestID: "req-2", verifier: verifier) {
        records.append(String(decoding: $0, as: UTF8.self))
    } == 200, "invalid: 200 too")
    try expect(records.count == 2 && records[0].contains(#""source":"req-1""#)
               && records[0].contains(#""verdict":"valid""#) && records[1].contains(#""verdict":"invalid""#),
               "both records stored under their request ids: \(records)")
    struct StorageDown: Error {}
    try expect(await respond(to: valid, requestID: "req-3", verifier: verifier) { _ in throw StorageDown() } == 500,
               "not stored: 500")
}
