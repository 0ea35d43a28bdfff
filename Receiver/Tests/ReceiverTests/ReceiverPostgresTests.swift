import Foundation
import Hummingbird
import HummingbirdTesting
@_spi(Servers) @testable import ReceiverCore
import Testing

/// The receiver with its state in a real PostgreSQL database (`POSTBACK_VERIFY_TEST_POSTGRES`, a libpq connection
/// string; `.ci/run` and `eval "$(.ci/postgres start)"` set it): a group's claims and rows are one transaction in
/// the database, and no archive file is made. Inspected and broken (a trigger that fails the rows' insert, as a
/// full disk would) with `psql`, apart from the code under test.
@Suite(.serialized, .enabled(if: TestPostgresServer.connection != nil || TestPostgresServer.required))
struct ReceiverPostgresTests {

    /// Runs `sql` with `psql` on `connection`; its output, unaligned, one row per line.
    @discardableResult
    static func psql(_ sql: String, on connection: String) throws -> String {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        let directories = path.split(separator: ":").map(String.init)
            + ((try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? [])
                .map { "/usr/lib/postgresql/\($0)/bin" }
        let directory = try #require(directories.first { FileManager.default.isExecutableFile(atPath: "\($0)/psql") },
                                     "psql is needed")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "\(directory)/psql")
        process.arguments = ["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", connection, "-c", sql]
        let output = Pipe(), error = Pipe()
        process.standardOutput = output
        process.standardError = error
        try process.run()
        let text = output.fileHandleForReading.readDataToEndOfFile()
        let message = error.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0, "psql: \(String(decoding: message, as: UTF8.self))")
        return String(decoding: text, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// A receiver on a new database of the server.
    static func receiver() throws -> (TestReceiver, database: String) {
        let server = try #require(TestPostgresServer.connection,
                                  "POSTBACK_VERIFY_TEST_POSTGRES is not set (.ci/postgres start)")
        let name = "receiver_test_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        try psql("CREATE DATABASE \(name)", on: server)
        var receiver = try TestReceiver()
        let database = server + " dbname=\(name)"
        receiver.configuration.storage = .durable(state: .postgreSQL(connection: database), archive: nil)
        return (receiver, database)
    }

    @Test("rows land in the database with their claims confirmed; a failed insert leaves no claim: the retry is valid")
    func claimsAndRowsInOneTransaction() async throws {
        let (receiver, database) = try Self.receiver()
        let body = try TestReceiver.body("valid/apple/postback-development-valid.json")
        let other = try TestReceiver.body("valid/postback/advertised-item-0.json")
        let app = try await receiver.application()
        try await app.test(.router) { client in
            let stored = try await client.execute(uri: TestReceiver.appAttributionPath, method: .post, body: other)
            #expect(stored.status == .ok)
            #expect(try Self.psql("SELECT count(*) FROM postback_verify.claims", on: database) == "0",
                    "confirmed in the transaction that stored the row")
            try Self.psql("""
                CREATE FUNCTION public.test_full() RETURNS trigger LANGUAGE plpgsql AS
                'BEGIN RAISE EXCEPTION ''could not extend file (test)''; END';
                CREATE TRIGGER test_full BEFORE INSERT ON postback_verify.received_postbacks
                FOR EACH ROW EXECUTE FUNCTION public.test_full();
                """, on: database)
            let failed = try await client.execute(uri: TestReceiver.appAttributionPath, method: .post, body: body)
            #expect(failed.status == .internalServerError)
            #expect(try Self.psql("SELECT count(*) FROM postback_verify.postbacks", on: database) == "1",
                    "the failed group's claim was rolled back with its row")
            try Self.psql("DROP TRIGGER test_full ON postback_verify.received_postbacks", on: database)
            let retry = try await client.execute(uri: TestReceiver.appAttributionPath, method: .post, body: body)
            #expect(retry.status == .ok)
            let again = try await client.execute(uri: TestReceiver.appAttributionPath, method: .post, body: body)
            #expect(again.status == .ok)
        }
        let rows = try Self.psql("""
            SELECT verdict || ' ' || coalesce(code, '-') FROM postback_verify.received_postbacks ORDER BY id
            """, on: database)
        #expect(rows.split(separator: "\n") == ["valid -", "valid -", "invalid duplicate"])
        #expect(!FileManager.default.fileExists(atPath: receiver.archivePath), "no local archive")
        #expect(try FileManager.default.contentsOfDirectory(atPath: receiver.directory.path)
            .filter { $0.hasSuffix(".sqlite") }.isEmpty)
    }
}

/// The PostgreSQL server the tests may use, and whether they must (CI): without one they are skipped.
enum TestPostgresServer {
    static let connection = ProcessInfo.processInfo.environment["POSTBACK_VERIFY_TEST_POSTGRES"]
    static let required = ProcessInfo.processInfo.environment["POSTBACK_VERIFY_REQUIRE_POSTGRES"] == "1"
}
