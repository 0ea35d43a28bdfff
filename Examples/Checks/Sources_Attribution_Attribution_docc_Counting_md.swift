// The check of the Attribution catalog's Counting article (`answerGroupAsync`, `countOne`), run by Examples/run.sh
// from a package that sees only the public API: a retry is a duplicate of its first sighting, and a failed store
// answers 500 and counts nothing.
import Attribution
import Foundation

func check_Sources_Attribution_Attribution_docc_Counting_md(root: String) async throws {
    var ring = KeyRing()
    try ring.add(ECPublicKey(keyFile: "\(root)/Fixtures/keys/fixture-apple-identifier-0.pem"),
                 keyID: "fixture-apple-identifier/0")
    let body = [UInt8](try Data(contentsOf: URL(fileURLWithPath:
        "\(root)/Fixtures/valid/postback/compact-one-line-body.json")))

    // answerGroupAsync: a failed store answers 500 for the group and remembers nothing; then the body and its
    // retry in one group: the first valid, the second its duplicate.
    let pipeline = PostbackPipeline(keyRing: ring)
    let counter = MemoryDeduplicationStore()
    struct StorageDown: Error {}
    let failed = await answerGroupAsync([(body, "r1")], pipeline: pipeline, counter: counter) { _ in
        throw StorageDown()
    }
    try expect(failed == [500], "a failed store: 500, got \(failed)")
    var stored: [VerifiedPostback] = []
    let answers = await answerGroupAsync([(body, "r2"), (body, "r3")], pipeline: pipeline, counter: counter) {
        stored += $0
    }
    try expect(answers == [200, 200], "stored: 200 each, got \(answers)")
    try expect(stored.count == 2 && stored[0].verdict == .valid && stored[1].isDuplicate,
               "the first valid, its retry a duplicate")

    // countOne: the first sighting valid, the next a duplicate of it.
    let verifier = AttributionVerifier(keyRing: ring)
    let seen = MemoryDeduplicationStore()
    var saved: [VerificationResult] = []
    try countOne(body, requestID: "a", verifier: verifier, seen: seen) { saved.append($0) }
    try countOne(body, requestID: "b", verifier: verifier, seen: seen) { saved.append($0) }
    try expect(saved.count == 2 && saved[0].verdict == .valid, "countOne: first valid")
    try expect(saved[1].firstError?.code == .duplicate && saved[1].duplicateOf?.source == "a",
               "countOne: the retry is a duplicate of a")
}
