@_spi(Servers) import Attribution
import Foundation
import Hummingbird
import HummingbirdTesting
@_spi(Servers) @testable import ReceiverCore
import Testing

/// Never a 200 for a postback that may be genuine unless it is stored: a group whose rows could not be stored and
/// whose claims could not be released either, and bodies over the invalid quota. The files are real SQLite files;
/// a full disk is made by triggers that raise on the very statements a full disk fails (the archive's insert, the
/// release's delete), added and dropped through a connection of the test's own.
@Suite struct ReceiverQuotaAndFailureTests {
    static let archiveFull = """
        CREATE TRIGGER test_archive_full BEFORE INSERT ON received_postbacks
        BEGIN SELECT RAISE(ABORT, 'database or disk is full (test)'); END
        """
    static let releaseFails = """
        CREATE TRIGGER test_release_fails BEFORE DELETE ON postbacks
        BEGIN SELECT RAISE(ABORT, 'database or disk is full (test)'); END
        """

    /// Regression test (issue 23): the archive commit failed, and so did the release of the group's claims; the
    /// claims stayed with the live receiver, and Apple's retry once space was back was answered 200 and stored
    /// as a duplicate of a row that does not exist.
    @Test("a failed release is settled before the next claim: the retry is 500 until it is, then stored valid")
    func releaseFailureIsSettledBeforeTheNextClaim() async throws {
        let receiver = try TestReceiver()
        let body = try TestReceiver.body("valid/apple/postback-development-valid.json")
        let app = try await receiver.application()
        try TestReceiver.execute(Self.archiveFull, in: receiver.archivePath)
        try TestReceiver.execute(Self.releaseFails, in: receiver.statePath)
        try await app.test(.router) { client in
            let failed = try await client.execute(uri: TestReceiver.appAttributionPath, method: .post, body: body)
            #expect(failed.status == .internalServerError)
            // The archive has room again; the state still cannot release: the retry must not be a duplicate.
            try TestReceiver.execute("DROP TRIGGER test_archive_full", in: receiver.archivePath)
            let stillHeld = try await client.execute(uri: TestReceiver.appAttributionPath, method: .post, body: body)
            #expect(stillHeld.status == .internalServerError)
            #expect(try receiver.rows().isEmpty)
            // Space everywhere: the release goes first, then the retry is a first sighting.
            try TestReceiver.execute("DROP TRIGGER test_release_fails", in: receiver.statePath)
            let stored = try await client.execute(uri: TestReceiver.appAttributionPath, method: .post, body: body)
            #expect(stored.status == .ok)
            let retry = try await client.execute(uri: TestReceiver.appAttributionPath, method: .post, body: body)
            #expect(retry.status == .ok)
        }
        #expect(try receiver.rows().map(\.verdict) == ["valid", "invalid"])
        #expect(try receiver.rows().map(\.code) == [nil, "duplicate"])
        #expect(receiver.metric("postback_receiver_not_stored_total", ["reason": "failure"]) == 2)
    }

    @Test("a failed confirmation is kept and goes with the next claim: no claim left behind, the retry a duplicate")
    func failedConfirmationIsKept() async throws {
        let receiver = try TestReceiver()
        let body = try TestReceiver.body("valid/apple/postback-development-valid.json")
        let app = try await receiver.application()
        // Confirming takes the claim's run out of `claims`; claiming a new key only adds one.
        try TestReceiver.execute("""
            CREATE TRIGGER test_confirm_fails BEFORE DELETE ON claims
            BEGIN SELECT RAISE(ABORT, 'database or disk is full (test)'); END
            """, in: receiver.statePath)
        try await app.test(.router) { client in
            let stored = try await client.execute(uri: TestReceiver.appAttributionPath, method: .post, body: body)
            #expect(stored.status == .ok)
            try await Task.sleep(for: .milliseconds(50))  // the confirmation on its own, 2 ms later, fails
            #expect(try Self.claims(receiver) == 1)
            try TestReceiver.execute("DROP TRIGGER test_confirm_fails", in: receiver.statePath)
            let retry = try await client.execute(uri: TestReceiver.appAttributionPath, method: .post, body: body)
            #expect(retry.status == .ok)
        }
        #expect(try receiver.rows().map(\.code) == [nil, "duplicate"])
        #expect(try Self.claims(receiver) == 0)
    }

    /// Rows of the state's `claims` (unconfirmed claims), read through a connection of the test's own.
    static func claims(_ receiver: TestReceiver) throws -> Int {
        try TestReceiver.count("SELECT count(*) FROM claims", in: receiver.statePath)
    }

    @Test("a group with no valid postback is stored even while a release is pending (it claims nothing)")
    func invalidBodiesStoredWhileReleasePending() async throws {
        let receiver = try TestReceiver()
        let app = try await receiver.application()
        try TestReceiver.execute(Self.archiveFull, in: receiver.archivePath)
        try TestReceiver.execute(Self.releaseFails, in: receiver.statePath)
        try await app.test(.router) { client in
            let valid = try TestReceiver.body("valid/apple/postback-development-valid.json")
            #expect(try await client.execute(uri: TestReceiver.appAttributionPath, method: .post, body: valid)
                .status == .internalServerError)
            try TestReceiver.execute("DROP TRIGGER test_archive_full", in: receiver.archivePath)
            let forged = try TestReceiver.body("invalid/apple/postback-production-bad-signature.json")
            #expect(try await client.execute(uri: TestReceiver.appAttributionPath, method: .post, body: forged)
                .status == .ok)
        }
        #expect(try receiver.rows().map(\.code) == ["bad-signature"])
    }

    /// Regression test (issue 35): the quota's unit was taken before storing and kept when storing failed, so
    /// storage failures spent the quota and possibly-genuine bodies were answered 503 once storage worked again.
    @Test("a body answered 500 spends none of the invalid quota: once storing works it is stored, the next 503")
    func failedStoreGivesTheQuotaBack() async throws {
        var receiver = try TestReceiver(invalidQuota: 1)
        receiver.configuration.verifier = AttributionVerifier(keyRing: try Self.productionKeys())
        var bytes = try TestReceiver.body("invalid/postback-jws/j3-unknown-kid.jws")
        if bytes.getInteger(at: bytes.writerIndex - 1, as: UInt8.self) == UInt8(ascii: "\n") {
            bytes.moveWriterIndex(to: bytes.writerIndex - 1)  // a bare JWS as Apple posts it: no line ending
        }
        let unknownKid = bytes
        #expect(receiver.configuration.verifier.verify(Array(buffer: unknownKid)).couldStillBeGenuine)
        let app = try await receiver.application()
        let archivePath = receiver.archivePath
        try TestReceiver.execute(Self.archiveFull, in: archivePath)
        try await app.test(.router) { client in
            for _ in 0..<3 {
                let failed = try await client.execute(uri: TestReceiver.appAttributionPath, method: .post,
                                                      body: unknownKid)
                #expect(failed.status == .internalServerError)
            }
            try TestReceiver.execute("DROP TRIGGER test_archive_full", in: archivePath)
            let stored = try await client.execute(uri: TestReceiver.appAttributionPath, method: .post,
                                                  body: unknownKid)
            #expect(stored.status == .ok)
            let overQuota = try await client.execute(uri: TestReceiver.appAttributionPath, method: .post,
                                                     body: unknownKid)
            #expect(overQuota.status == .serviceUnavailable)
        }
        #expect(try receiver.rows().map(\.code) == ["unknown-key"])
    }

    @Test("over the invalid quota a body that could still be genuine is answered 503, a proven forgery 200",
          arguments: [
              ("invalid/postback-jws/j3-unknown-kid.jws", true),
              ("invalid/postback-jws/j4-apple-development-identifier-0.jws", true),
              ("skadnetwork/invalid/s1-version-2.3.json", true),
              ("invalid/postback/u1-ad-interaction-type-tap.json", true),
              ("invalid/apple/postback-production-bad-signature.json", false),
              ("invalid/postback-jws/j2-alg-hs256.jws", false),
              ("invalid/postback-jws/j1-bom-in-payload.jws", false),
          ])
    func overQuota(fixture: String, couldBeGenuine: Bool) async throws {
        var receiver = try TestReceiver(invalidQuota: 0)
        receiver.configuration.verifier = AttributionVerifier(keyRing: try Self.productionKeys())
        var bytes = try TestReceiver.body(fixture)
        if fixture.hasSuffix(".jws"),
           bytes.getInteger(at: bytes.writerIndex - 1, as: UInt8.self) == UInt8(ascii: "\n") {
            bytes.moveWriterIndex(to: bytes.writerIndex - 1)  // a bare JWS as Apple posts it: no line ending
        }
        let body = bytes
        let verdict = receiver.configuration.verifier.verify(Array(buffer: body))
        #expect(verdict.verdict == .invalid)
        #expect(verdict.couldStillBeGenuine == couldBeGenuine)
        try await receiver.application().test(.router) { client in
            let path = fixture.hasPrefix("skadnetwork") ? TestReceiver.skAdNetworkPath
                : TestReceiver.appAttributionPath
            let response = try await client.execute(uri: path, method: .post, body: body)
            #expect(response.status == (couldBeGenuine ? .serviceUnavailable : .ok))
        }
        #expect(try receiver.rows().isEmpty)
        #expect(receiver.metric("postback_receiver_not_stored_total", ["reason": "retry-later"])
                == (couldBeGenuine ? 1 : 0))
        #expect(receiver.metric("postback_receiver_not_stored_total", ["reason": "quota"]) == (couldBeGenuine ? 0 : 1))
    }

    @Test("over the quota a changed duplicate keeps its fingerprint and differing members; an exact retry is counted")
    func changedDuplicateKeepsDifferences() async throws {
        var receiver = try TestReceiver(invalidQuota: 0)
        var ring = try Self.productionKeys()
        try ring.add(ECPublicKey(keyFile: TestReceiver.fixture("keys/fixture.adattributionkit.pem").path),
                     keyID: "fixture.adattributionkit")
        receiver.configuration.verifier = AttributionVerifier(keyRing: ring)
        let file = try Data(contentsOf: TestReceiver.fixture("dedupe/postback-identifier-replays.jsonl"))
        let lines = String(decoding: file, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        let genuine = ByteBuffer(string: String(lines[5]))  // line 6: postback Y
        let changed = ByteBuffer(string: String(lines[6]))  // line 7: Y with another coarse-conversion-value
        try await receiver.application().test(.router) { client in
            for body in [genuine, changed, genuine] {
                let response = try await client.execute(uri: TestReceiver.appAttributionPath, method: .post,
                                                        body: body)
                #expect(response.status == .ok)
            }
        }
        let rows = try receiver.rows()
        #expect(rows.map(\.verdict) == ["valid", "invalid"])
        #expect(rows.map(\.kept) == ["body", "differences"])
        #expect(rows.first?.body == Array(buffer: genuine))
        let kept = try #require(rows.last.map {
            try JSONSerialization.jsonObject(with: Data($0.body)) as? [String: Any]
        })
        let differing = try #require(kept?["differing-members"] as? [String: Any])
        let sent = try #require(try JSONSerialization.jsonObject(with: Data(buffer: changed)) as? [String: Any])
        #expect(Array(differing.keys) == ["coarse-conversion-value"])
        #expect(differing["coarse-conversion-value"] as? String == sent["coarse-conversion-value"] as? String)
        #expect((kept?["content-fingerprint"] as? String)?.isEmpty == false)
        #expect(receiver.metric("postback_receiver_not_stored_total", ["reason": "quota"]) == 1)
    }

    @Test("an archive of version 1 is migrated: its rows are kept, marked as holding their bodies")
    func archiveVersion1Migrated() async throws {
        let receiver = try TestReceiver()
        try TestReceiver.execute("""
            CREATE TABLE received_postbacks_schema (version INTEGER NOT NULL);
            INSERT INTO received_postbacks_schema VALUES (1);
            CREATE TABLE received_postbacks (id INTEGER PRIMARY KEY, received INTEGER NOT NULL, request TEXT NOT NULL,
                route TEXT NOT NULL, verdict TEXT NOT NULL, code TEXT, key BLOB, body BLOB NOT NULL,
                record TEXT NOT NULL);
            INSERT INTO received_postbacks (received, request, route, verdict, body, record)
                VALUES (1, 'old', 'appattribution', 'valid', x'7b7d', '{}');
            """, in: receiver.archivePath)
        _ = try await receiver.application()
        #expect(try receiver.rows().map(\.kept) == ["body"])
        #expect(try receiver.rows().map(\.body) == [Array("{}".utf8)])
    }

    /// Apple's production keys and the fixture key, without development keys (so J4 refuses Apple's development
    /// kids, a local policy).
    static func productionKeys() throws -> KeyRing {
        var ring = KeyRing(allowingDevelopmentKeys: false)
        try ring.add(ECPublicKey(keyFile: TestReceiver.fixture("keys/fixture-apple-identifier-0.pem").path),
                     keyID: "fixture-apple-identifier/0")
        return ring
    }
}
