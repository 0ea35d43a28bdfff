// The check of docs/state.md's example (`openState`), and of what it says of the README's one counting recipe
// (`answerGroup`) on this file, run by Examples/run.sh from a package that sees only the public API: through a
// ClaimLedger over a SQLite state, a failed store is answered 500 and not remembered, a retry after it is valid, the
// next one a duplicate of it, also for another process's store on the same file; a forgery is stored with its
// verdict but never remembered.
import Attribution
import AttributionStores
import Foundation

func check_docs_state_md(root: String) async throws {
    var ring = KeyRing()
    try ring.add(ECPublicKey(keyFile: "\(root)/Fixtures/keys/fixture-apple-identifier-0.pem"),
                 keyID: "fixture-apple-identifier/0")
    let pipeline = PostbackPipeline(keyRing: ring)
    let body = [UInt8](try Data(contentsOf: URL(fileURLWithPath:
        "\(root)/Fixtures/valid/postback/compact-one-line-body.json")))
    try expect(pipeline.verify([(body, "probe")]).first?.verdict == .valid, "the fixture body is genuine")

    let directory = FileManager.default.temporaryDirectory
        .appendingPathComponent("postback-verify-examples-\(ProcessInfo.processInfo.processIdentifier)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let path = directory.appendingPathComponent("state.sqlite").path

    // openState: a new path opens; a file that is not a state is refused with code not-ours and left as it is.
    guard case .success(let state) = openState(at: path) else {
        throw CheckFailed(description: "openState: a new path opens")
    }
    let notState = directory.appendingPathComponent("notes.txt")
    try Data("not a state file\n".utf8).write(to: notState)
    guard case .failure(let refusal) = openState(at: notState.path) else {
        throw CheckFailed(description: "openState: a text file is refused")
    }
    try expect(refusal.code == .notOurs && refusal.rule == nil, "openState: refused with not-ours: \(refusal)")
    try expect(try Data(contentsOf: notState) == Data("not a state file\n".utf8), "openState: the file is untouched")

    // The README's answerGroup through a ledger over this file.
    struct StorageDown: Error {}
    let counter = ClaimLedger(store: state)
    var saved: [VerifiedPostback] = []
    try expect(answerGroup([(body, "r1")], pipeline: pipeline, counter: counter) { _ in throw StorageDown() }
               == [500], "a failed store answers 500")
    try expect(answerGroup([(body, "r2")], pipeline: pipeline, counter: counter) { saved += $0 } == [200],
               "stored, 200")
    try expect(answerGroup([(body, "r3")], pipeline: pipeline, counter: counter) { saved += $0 } == [200],
               "a retry is stored too, 200")
    try expect(saved.count == 2 && saved[0].verdict == .valid, "the retry after a failed store is valid")
    try expect(saved[1].isDuplicate && saved[1].firstError?.code == .duplicate, "the next retry is a duplicate")
    var forged = body
    // The body starts {"jws-string":"HEADER.PAYLOAD.SIGNATURE","...: the first "," ends the token.
    let signatureEnd = forged.indices.first { forged[$0...].starts(with: Array("\",\"".utf8)) } ?? 0
    let index = signatureEnd - 10  // inside the signature segment of jws-string
    forged[index] = forged[index] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
    try expect(answerGroup([(forged, "r4")], pipeline: pipeline, counter: counter) { saved += $0 } == [200],
               "a forgery is stored, 200")
    try expect(saved.last?.verdict == .invalid && saved.last?.isDuplicate == false,
               "a forgery is invalid and never a duplicate")

    // Another process's store on the same file: the postback is a duplicate of r2's record there too.
    let other = ClaimLedger(store: try SQLiteDeduplicationStore(path: path, retentionDays: 10))
    var elsewhere: [[String: Any]] = []
    try expect(answerGroup([(body, "q1")], pipeline: pipeline, counter: other) { postbacks in
        for postback in postbacks {
            elsewhere.append(try JSONSerialization.jsonObject(with: Data(postback.record)) as! [String: Any])
        }
    } == [200], "another process: 200")
    try expect(elsewhere.first?["duplicate-of-source"] as? String == "r2",
               "another process sees the duplicate of r2: \(elsewhere)")
}
