// The check of docs/state.md's examples (`receive`, the async `handlePostback`, `openState`), run by Examples/run.sh
// from a package that sees only the public API, against both stores: a failed store is answered 500 and not
// remembered, a retry after it is valid, the next one a duplicate of it (naming what differs, D2), and a forgery is
// stored with its verdict but never remembered.
import Attribution
import AttributionStores
import Foundation

func check_docs_state_md(root: String) async throws {
    var ring = KeyRing()
    try ring.add(ECPublicKey(keyFile: "\(root)/Fixtures/keys/fixture-apple-identifier-0.pem"),
                 keyID: "fixture-apple-identifier/0")
    let verifier = AttributionVerifier(keyRing: ring)
    let body = [UInt8](try Data(contentsOf: URL(fileURLWithPath:
        "\(root)/Fixtures/valid/postback/compact-one-line-body.json")))
    try expect(verifier.verify(body).verdict == .valid, "the fixture body is genuine")

    let directory = FileManager.default.temporaryDirectory
        .appendingPathComponent("postback-verify-examples-\(ProcessInfo.processInfo.processIdentifier)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    func stores(_ name: String) throws -> [(String, any DeduplicationStore)] {
        [("memory", MemoryDeduplicationStore()),
         ("sqlite", try SQLiteDeduplicationStore(path: directory.appendingPathComponent("\(name).sqlite").path,
                                                  retentionDays: 10))]
    }
    struct StorageDown: Error {}
    for (name, seen) in try stores("sync") {
        var saved: [VerificationResult] = []
        try expect(receive(body, requestID: "r1", verifier: verifier, seen: seen) { _ in throw StorageDown() } == 500,
                   "\(name): a failed store answers 500")
        try expect(receive(body, requestID: "r2", verifier: verifier, seen: seen) { saved.append($0) } == 200,
                   "\(name): stored, 200")
        try expect(receive(body, requestID: "r3", verifier: verifier, seen: seen) { saved.append($0) } == 200,
                   "\(name): a retry is stored too, 200")
        try expect(saved.count == 2 && saved[0].verdict == .valid, "\(name): the retry after a failed store is valid")
        try expect(saved[1].firstError?.code == .duplicate && saved[1].duplicateOf?.source == "r2",
                   "\(name): the next retry is a duplicate of r2")
        var forged = body
        // The body starts {"jws-string":"HEADER.PAYLOAD.SIGNATURE","...: the first "," ends the token.
        let signatureEnd = forged.indices.first { forged[$0...].starts(with: Array("\",\"".utf8)) } ?? 0
        let index = signatureEnd - 10  // inside the signature segment of jws-string
        forged[index] = forged[index] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        try expect(receive(forged, requestID: "r4", verifier: verifier, seen: seen) { saved.append($0) } == 200,
                   "\(name): a forgery is stored, 200")
        try expect(saved.last?.verdict == .invalid && saved.last?.duplicateOf == nil,
                   "\(name): a forgery is invalid and never a duplicate")
    }

    // openState: a file that is not a state is refused with code not-ours and left as it is; a new path opens.
    let notState = directory.appendingPathComponent("notes.txt")
    try Data("not a state file\n".utf8).write(to: notState)
    guard case .failure(let refusal) = openState(at: notState.path) else {
        throw CheckFailed(description: "openState: a text file is refused")
    }
    try expect(refusal.code == .notOurs && refusal.rule == nil, "openState: refused with not-ours: \(refusal)")
    try expect(try Data(contentsOf: notState) == Data("not a state file\n".utf8), "openState: the file is untouched")
    guard case .success = openState(at: directory.appendingPathComponent("fresh.sqlite").path) else {
        throw CheckFailed(description: "openState: a new path opens")
    }

    // handlePostback (async): the stored record is the command's JSON Lines record under the request id; a retry
    // whose unsigned member changed is a duplicate that says which member differs.
    let text = String(decoding: body, as: UTF8.self)
    let changed = Array(text.replacingOccurrences(of: #""ad-interaction-type":"view""#,
                                                  with: #""ad-interaction-type":"click""#).utf8)
    try expect(changed != body, "the fixture has ad-interaction-type view")
    for (name, seen) in try stores("async") {
        final class Saved: @unchecked Sendable { var records: [[String: Any]] = [] }
        let saved = Saved()
        let save: ([UInt8]) async throws -> Void = { bytes in
            saved.records.append(try JSONSerialization.jsonObject(with: Data(bytes)) as! [String: Any])
        }
        try expect(await handlePostback(body, requestID: "q1", verifier: verifier, seen: seen) { _ in
            throw StorageDown()
        } == 500, "\(name): a failed store answers 500")
        try expect(await handlePostback(body, requestID: "q2", verifier: verifier, seen: seen, save: save) == 200,
                   "\(name): stored, 200")
        try expect(await handlePostback(changed, requestID: "q3", verifier: verifier, seen: seen, save: save) == 200,
                   "\(name): a changed retry is stored, 200")
        try expect(saved.records.count == 2, "\(name): two records stored")
        try expect(saved.records[0]["verdict"] as? String == "valid" && saved.records[0]["source"] as? String == "q2"
                   && saved.records[0]["line"] as? Int == 1, "\(name): the first stored record is valid, from q2")
        let differs = saved.records[1]["duplicate-differs"] as? [String: Any]
        try expect(saved.records[1]["duplicate-of-source"] as? String == "q2"
                   && differs?["unsigned"] as? [String] == ["ad-interaction-type"],
                   "\(name): the changed retry is a duplicate of q2 naming ad-interaction-type: \(saved.records[1])")
    }
}
