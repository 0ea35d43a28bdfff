// The check of README.md's Swift examples (`answerPostback`, `describe`, the production-only `verifier`), run by
// Examples/run.sh from a package that sees only the public API. Expected values come from the inputs themselves
// (Apple's documented example, the fixture files read with Foundation), never from this library's output.
import Attribution
import Foundation

func check_README_md(root: String) throws {
    func bytes(_ path: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: URL(fileURLWithPath: "\(root)/\(path)")))
    }
    let apple = try bytes("Fixtures/valid/apple/postback-development-valid.json")
    let forged = try bytes("Fixtures/invalid/apple/postback-production-bad-signature.json")
    let development = AttributionVerifier(keyRing: KeyRing(allowingDevelopmentKeys: true))

    // answerPostback: 200 once stored, whatever the verdict; 500 only when storing failed.
    struct Unavailable: Error {}
    var stored: [Verdict] = []
    try expect(answerPostback(apple, verifier: development) { stored.append($1.verdict) } == 200, "valid: 200")
    try expect(answerPostback(forged, verifier: development) { stored.append($1.verdict) } == 200, "forged: 200")
    try expect(stored == [.valid, .invalid], "both stored with their verdicts: \(stored)")
    try expect(answerPostback(apple, verifier: development) { _, _ in throw Unavailable() } == 500, "not stored: 500")

    // `verifier` (Apple's production key only) refuses Apple's development example.
    try expect(verifier.verify(apple).firstError?.code == .untrustedKey, "production only: untrusted-key")

    // describe, for each kind. Apple's example's facts are those of Apple's page ("Identifying the parameters").
    try expect(describe(development.verify(apple))
        == "postback 85546EB7-FD39-44BC-8990-C98A4AC36A49 re-engagement source 1234 conversion-value 24 (unsigned)",
        "describe(Apple's postback): \(describe(development.verify(apple)))")
    try expect(describe(development.verify(forged)) == "invalid: bad-signature", "describe(forged)")

    // Apple's SKAdNetwork 2.1 example: the expected text from the body's own members.
    let skAdNetworkPath = "Fixtures/valid/skadnetwork-apple/2.1-valid.json"
    let skAdNetwork = try JSONSerialization.jsonObject(with: Data(bytes(skAdNetworkPath))) as! [String: Any]
    let expectedSKAdNetwork = "skadnetwork \(skAdNetwork["transaction-id"]!) version \(skAdNetwork["version"]!) "
        + "app \(skAdNetwork["app-id"]!) conversion-value \(skAdNetwork["conversion-value"]!) (unsigned)"
    let skAdNetworkText = describe(development.verify(try bytes(skAdNetworkPath)))
    try expect(skAdNetworkText == expectedSKAdNetwork, "describe(SKAdNetwork 2.1): \(skAdNetworkText)")

    // An impression signed with the fixture ad network key: the expected text from its payload, decoded here.
    var ring = KeyRing()
    try ring.add(ECPublicKey(keyFile: "\(root)/Fixtures/keys/fixture.adattributionkit.pem"),
                 keyID: "fixture.adattributionkit")
    let impressionPath = "Fixtures/valid/impression/publisher-item-max.jws"
    let token = String(decoding: try bytes(impressionPath), as: UTF8.self)
        .trimmingCharacters(in: .whitespacesAndNewlines)
    var payloadText = String(token.split(separator: ".")[1])
        .replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
    payloadText += String(repeating: "=", count: (4 - payloadText.count % 4) % 4)
    let payload = try JSONSerialization.jsonObject(with: Data(base64Encoded: payloadText)!) as! [String: Any]
    let expectedImpression = "impression \(payload["impression-identifier"]!) network "
        + "\(payload["ad-network-identifier"]!) source \(payload["source-identifier"]!)"
    let impressionText = describe(AttributionVerifier(keyRing: ring).verify(Array(token.utf8)))
    try expect(impressionText == expectedImpression, "describe(impression): \(impressionText)")

    // answerGroup: Apple's example twice in one group, and once more later: stored first valid, then duplicates
    // naming the first request; a store that fails answers 500 and counts nothing (the next group's is valid).
    let pipeline = PostbackPipeline(keyRing: KeyRing(allowingDevelopmentKeys: true))
    let counter = ClaimLedger(store: MemoryDeduplicationStore())
    var records: [[String: Any]] = []
    func save(_ postbacks: [VerifiedPostback]) throws {
        for postback in postbacks {
            records.append(try JSONSerialization.jsonObject(with: Data(postback.record)) as! [String: Any])
        }
    }
    try expect(answerGroup([(apple, "request-1"), (apple, "request-2"), (forged, "request-3")], pipeline: pipeline,
                           counter: counter, store: save) == [200, 200, 200], "a stored group: 200 each")
    try expect(records.map { $0["verdict"] as? String } == ["valid", "invalid", "invalid"], "verdicts: \(records)")
    try expect(records[1]["duplicate-of-source"] as? String == "request-1", "the repeat names the first request")
    try expect(records.map { $0["source"] as? String } == ["request-1", "request-2", "request-3"], "sources")
    let unavailable = ClaimLedger(store: MemoryDeduplicationStore())
    try expect(answerGroup([(apple, "request-4")], pipeline: pipeline, counter: unavailable,
                           store: { _ in throw Unavailable() }) == [500], "not stored: 500")
    records = []
    try expect(answerGroup([(apple, "request-5")], pipeline: pipeline, counter: unavailable, store: save) == [200]
               && records.first?["verdict"] as? String == "valid", "released: the retry is first seen")

    // The storing fails and so does the release: every group is answered 500 (nothing stored, the ledger is
    // blocked) until a release succeeds; then the retry is stored valid, never a duplicate of the lost record.
    let stuck = ReleaseFailing()
    let blocked = ClaimLedger(store: stuck)
    stuck.failing = true
    try expect(answerGroup([(apple, "request-6")], pipeline: pipeline, counter: blocked,
                           store: { _ in throw Unavailable() }) == [500], "not stored, not released: 500")
    records = []
    try expect(answerGroup([(apple, "request-7")], pipeline: pipeline, counter: blocked, store: save) == [500]
               && records.isEmpty && blocked.isBlocked, "blocked while the release fails: 500, nothing stored")
    stuck.failing = false
    try expect(answerGroup([(apple, "request-8")], pipeline: pipeline, counter: blocked, store: save) == [200]
               && records.first?["verdict"] as? String == "valid" && !blocked.isBlocked,
               "released at last: the retry is first seen, valid")
}

/// A memory store whose release fails while `failing` is set (a full disk, a lost connection).
final class ReleaseFailing: DeduplicationStore, @unchecked Sendable {
    let memory = MemoryDeduplicationStore()
    var failing = false
    struct Down: Error {}
    func claim(_ sightings: [PostbackSighting], at time: Date) throws -> [DeduplicationAnswer] {
        memory.claim(sightings, at: time)
    }
    func confirm(_ keys: [ExactString]) throws { memory.confirm(keys) }
    func release(_ keys: [ExactString]) throws {
        if failing { throw Down() }
        memory.release(keys)
    }
}
