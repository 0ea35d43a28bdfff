import Foundation
import Testing
@testable import Attribution

// The server example of docs/state.md, verbatim (the test below checks the document still shows this code).

/// Receives one postback: verifies it, stores it with its verdict, answers the HTTP status.
func receive(_ body: [UInt8], requestID: String, verifier: ItemVerifier, seen: some DeduplicationStore,
             save: (VerificationResult) throws -> Void) -> Int {
    var result = verifier.verify(body)
    let sightings = PostbackSighting(result, source: requestID, line: 1).map { [$0] } ?? []
    do {
        try seen.deduplicate(sightings, at: Date()) { answers in
            if let first = answers.first?.duplicateOf {
                result.markDuplicate(of: first)  // a retry or a replay: invalid, code "duplicate"
            }
            try save(result)  // store body and verdict; the key is remembered only once this returns
        }
        return 200  // stored, whatever the verdict: Apple must not send it again
    } catch {
        return 500  // not stored: Apple retries, and the retry is not a duplicate
    }
}

/// Receives one postback in an async handler: stores its JSON Lines record, then answers the HTTP status.
func handlePostback(_ body: [UInt8], requestID: String, verifier: ItemVerifier, seen: some DeduplicationStore,
                    save: ([UInt8]) async throws -> Void) async -> Int {
    var result = verifier.verify(body)
    let sightings = PostbackSighting(result, source: requestID, line: 1).map { [$0] } ?? []
    do {
        try await seen.deduplicate(sightings, at: Date()) { answers in
            if let first = answers.first?.duplicateOf {
                result.markDuplicate(of: first)  // D1; and D2 when its content differs from the first sighting's
            }
            try await save(JSONLinesRecord.render(result, sourceLabel: requestID))  // durably, before the 200
        }
        return 200
    } catch {
        return 500
    }
}

/// `docs/state.md`'s server example compiles, is the code the document shows, and does what it says.
@Suite("Documentation example: deduplication in a server")
struct DocumentationExampleTests {
    struct StorageDown: Error {}

    @Test("docs/state.md shows exactly the receive(_:) and handlePostback(_:) functions compiled here",
          arguments: ["/// Receives one postback: verifies it", "/// Receives one postback in an async handler"])
    func documentShowsThisCode(_ opening: String) throws {
        let document = String(decoding: try TestPaths.bytes(
            TestPaths.packageRoot.appendingPathComponent("docs/state.md")), as: UTF8.self)
        let source = String(decoding: try TestPaths.bytes(URL(fileURLWithPath: #filePath)), as: UTF8.self)
        let start = try #require(source.range(of: opening))
        let end = try #require(source.range(of: "\n}\n", range: start.upperBound..<source.endIndex))
        let function = String(source[start.lowerBound..<end.upperBound])
        #expect(document.contains("import Attribution\nimport Foundation\n\n" + function))
    }

    @Test("The async handler: stored once, then a duplicate naming what differs; a failed store is 500 and forgotten",
          arguments: DeduplicationStoreTests.Kind.allCases)
    func asyncServerFlow(_ kind: DeduplicationStoreTests.Kind) async throws {
        struct Saved { var records: [[String: Any]] = [] }
        var ring = KeyRing()
        let pem = String(decoding: try TestPaths.bytes(
            TestPaths.fixtures.appendingPathComponent("keys/fixture-apple-identifier-0.pem")), as: UTF8.self)
        try ring.add(try ECPublicKey(pemRepresentation: pem), keyID: TestPostbackSigner.keyID)
        let verifier = ItemVerifier(keyRing: ring)
        let seen = try DeduplicationStoreTests.store(kind)
        let body = try TestPostbackSigner().body(postbackIdentifier: "7D1E2F3A-4B5C-4D6E-8F7A-9B0C1D2E3F4A")
        let changed = Array(body.replacingOccurrences(of: #""conversion-value":21"#, with: #""conversion-value":7"#)
            .utf8)
        #expect(changed != Array(body.utf8))
        var saved = Saved()
        func record(_ bytes: [UInt8]) throws {
            saved.records.append(try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any]))
        }
        #expect(await handlePostback(Array(body.utf8), requestID: "q1", verifier: verifier, seen: seen) { _ in
            throw StorageDown()
        } == 500)
        #expect(await handlePostback(Array(body.utf8), requestID: "q2", verifier: verifier, seen: seen) {
            try record($0)
        } == 200)
        #expect(await handlePostback(changed, requestID: "q3", verifier: verifier, seen: seen) {
            try record($0)
        } == 200)
        try #require(saved.records.count == 2)
        #expect(saved.records[0]["verdict"] as? String == "valid", "the retry after a failed store is not a duplicate")
        #expect(saved.records[0]["source"] as? String == "q2" && saved.records[0]["line"] as? Int == 1)
        #expect(saved.records[1]["duplicate-of-source"] as? String == "q2")
        let differs = saved.records[1]["duplicate-differs"] as? [String: Any]
        #expect(differs?["unsigned"] as? [String] == ["conversion-value"])
    }

    @Test("Stored once, then a duplicate; a failed store is answered 500 and not remembered",
          arguments: DeduplicationStoreTests.Kind.allCases)
    func serverFlow(_ kind: DeduplicationStoreTests.Kind) throws {
        var ring = KeyRing()
        let pem = String(decoding: try TestPaths.bytes(
            TestPaths.fixtures.appendingPathComponent("keys/fixture-apple-identifier-0.pem")), as: UTF8.self)
        try ring.add(try ECPublicKey(pemRepresentation: pem), keyID: TestPostbackSigner.keyID)
        let verifier = ItemVerifier(keyRing: ring)
        let seen = try DeduplicationStoreTests.store(kind)
        let identifier = "3C0E6B52-1F0A-4A55-8E43-0D3A7C2B9E10"
        let body = Array(try TestPostbackSigner().body(postbackIdentifier: identifier).utf8)
        var saved: [VerificationResult] = []

        #expect(receive(body, requestID: "r1", verifier: verifier, seen: seen) { _ in throw StorageDown() } == 500)
        #expect(receive(body, requestID: "r2", verifier: verifier, seen: seen) { saved.append($0) } == 200)
        #expect(receive(body, requestID: "r3", verifier: verifier, seen: seen) { saved.append($0) } == 200)
        try #require(saved.count == 2)
        #expect(saved[0].verdict == .valid, "the retry after a failed store is not a duplicate")
        #expect(saved[1].firstError?.code == .duplicate)
        #expect(saved[1].duplicateOf?.source == "r2")
        // A forgery is stored with its verdict but never remembered.
        var forged = body
        let tokenEnd = try #require(body.firstRange(of: Array(#"","ad-interaction-type""#.utf8))?.lowerBound)
        let signatureByte = tokenEnd - 10  // inside the signature segment
        forged[signatureByte] = forged[signatureByte] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        #expect(receive(forged, requestID: "r4", verifier: verifier, seen: seen) { saved.append($0) } == 200)
        #expect(saved.last?.verdict == .invalid && saved.last?.duplicateOf == nil)
    }
}
