#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
@_spi(CommandLine) @_spi(Servers) @_spi(Stores) @testable import Attribution
@_spi(CommandLine) @_spi(Servers) @testable import AttributionStores

/// The PostgreSQL state against a real server (``TestPostgres``): what only it has (its schema, its refusals, a
/// server that restarts or halts under it, and what its messages may say of the connection string). The protocol
/// it shares with the other stores (claims, owners and their leases, retention and pruning) is
/// `DeduplicationStoreTests`'s conformance suite.
@Suite("PostgreSQL state", .serialized, .enabled(if: TestPostgres.enabled))
struct PostgresStateTests {
    static let monday = Date(timeIntervalSince1970: 1_795_305_600.25)

    static func open(_ connectionString: String) throws -> PostgreSQLDeduplicationStore {
        try PostgreSQLDeduplicationStore(connectionString: connectionString)
    }

    /// Everything in the schema and the rows of its tables (``TestPostgres/snapshot(_:)``).
    static func snapshot(_ connectionString: String) throws -> [String] {
        try TestPostgres.snapshot(connectionString)
    }

    // MARK: The schema

    @Test("A new database gets the schema on first use; the next connection accepts it; four at once agree")
    func createsSchema() throws {
        let database = try TestPostgres.database()
        let opened = try (0..<4).map { _ in
            Thread.detachNewThreadWithResult { try Self.open(database).count() }
        }.map { try $0.get() }
        #expect(opened == [0, 0, 0, 0])
        let described = try Self.snapshot(database)
        #expect(Array(described.prefix(PostgresSchema.expected.count)) == PostgresSchema.expected)
        #expect(described.contains("schema_version: (2)"))
        _ = try Self.open(database)
    }

    /// A database whose `postback_verify` schema is not ours, made the way it would be met.
    struct Foreign: Sendable, CustomTestStringConvertible {
        let testDescription: String
        let code: AttributionError.Code
        let sql: [String]
    }

    static let foreign: [Foreign] = [
        Foreign(testDescription: "another application's table in the schema", code: .notOurs, sql: [
            "CREATE SCHEMA postback_verify",
            "CREATE TABLE postback_verify.postbacks (key text PRIMARY KEY)",
            "INSERT INTO postback_verify.postbacks VALUES ('x')",
        ]),
        Foreign(testDescription: "our tables, key as text", code: .notOurs, sql: PostgresSchema.create.map {
            $0.replacingOccurrences(of: "key bytea NOT NULL", with: "key text NOT NULL")
        }),
        Foreign(testDescription: "our tables and an extra column", code: .notOurs, sql: PostgresSchema.create + [
            "ALTER TABLE postback_verify.postbacks ADD COLUMN note text",
        ]),
        Foreign(testDescription: "our tables without the pruning index", code: .notOurs, sql: PostgresSchema.create + [
            "DROP INDEX postback_verify.postbacks_first_seen",
        ]),
        Foreign(testDescription: "our tables without the unique key", code: .notOurs, sql: PostgresSchema.create + [
            "ALTER TABLE postback_verify.postbacks DROP CONSTRAINT postbacks_pkey",
        ]),
        Foreign(testDescription: "our tables with a trigger", code: .notOurs, sql: PostgresSchema.create + [
            "CREATE FUNCTION public.pbv_noop() RETURNS trigger LANGUAGE plpgsql AS 'BEGIN RETURN NEW; END'",
            "CREATE TRIGGER noop BEFORE INSERT ON postback_verify.postbacks FOR EACH ROW EXECUTE FUNCTION public.pbv_noop()",
        ]),
        Foreign(testDescription: "our tables without schema_version", code: .notOurs, sql: PostgresSchema.create + [
            "DROP TABLE postback_verify.schema_version",
        ]),
        Foreign(testDescription: "our schema at a newer version", code: .newerSchema, sql: PostgresSchema.create + [
            "UPDATE postback_verify.schema_version SET version = 3",
        ]),
        Foreign(testDescription: "two schema versions", code: .damaged, sql: PostgresSchema.create + [
            "INSERT INTO postback_verify.schema_version VALUES (2)",
        ]),
        Foreign(testDescription: "version 0", code: .damaged, sql: PostgresSchema.create + [
            "UPDATE postback_verify.schema_version SET version = 0",
        ]),
    ]

    @Test("A postback_verify schema that is not ours, or at another version: refused with its code, left as it was",
          arguments: foreign)
    func refusesForeignSchema(_ foreign: Foreign) throws {
        let database = try TestPostgres.database()
        for statement in foreign.sql { try TestPostgres.execute(statement, on: database) }
        let before = try Self.snapshot(database)
        #expect(throws: AttributionError(foreign.code, "")) { try Self.open(database) }
        do {
            _ = try Self.open(database)
        } catch let error as AttributionError {
            #expect(error.reason.contains("PostgreSQL state ("), "\(error.reason)")
            #expect(error.reason.contains("dbname="), "names the database: \(error.reason)")
        }
        #expect(try Self.snapshot(database) == before)
    }

    // MARK: The server

    @Test("""
        Regression: a server restarted under a live store: the call that meets it reconnects and goes on (a lost \
        connection is not death), and what was confirmed before is still there
        """)
    func reconnects() async throws {
        let server = try TestPostgres.start(watching: getpid())
        defer { try? TestPostgres.control("stop", server.directory) }
        let store = try Self.open(server.connectionString)
        _ = try store.claimAndConfirm(Shared.sighting("before", "a", 1), at: Self.monday)
        // The store's commits do not wait for the disk; the server's WAL writer flushes them within 0.6 s.
        try await Task.sleep(for: .seconds(1))
        try TestPostgres.control("halt", server.directory)
        try TestPostgres.control("resume", server.directory)
        let during: [DeduplicationAnswer] = try await store.claim([Shared.sighting("during", "b", 1)], at: Self.monday)
        #expect(during == [.firstSeen], "claimed over a new connection")
        let answers: [DeduplicationAnswer] = try await store.claim(
            [Shared.sighting("before", "c", 1), Shared.sighting("during", "c", 2)], at: Self.monday)
        #expect(answers.first?.duplicateOf?.source == "a")
        #expect(answers.last?.duplicateOf?.source == "b", "its own claim, pending")
        #expect(answers.last?.duplicateOf?.isPending == true)
        try await store.confirm([ExactString("during")])
        #expect(try store.count() == 2)
    }

    @Test("probe() answers while the server runs, throws `unavailable` while it is halted, and answers once it is back")
    func probeFollowsTheServer() throws {
        let server = try TestPostgres.start(watching: getpid())
        defer { try? TestPostgres.control("stop", server.directory) }
        let store = try Self.open(server.connectionString)
        try store.probe()
        try TestPostgres.control("halt", server.directory)
        #expect(throws: AttributionError.self) { try store.probe() }
        do {
            try store.probe()
            Issue.record("probe succeeded against a halted server")
        } catch {
            #expect(error.code == .unavailable, "\(error)")
        }
        try TestPostgres.control("resume", server.directory)
        try store.probe()
    }

    // MARK: The connection string

    @Test("--state values: URLs and keyword strings are PostgreSQL, anything else a SQLite path", arguments: [
        ("postgresql://u@db/postbacks", true), ("postgres://db", true), ("host=/tmp dbname=x", true),
        ("dbname=postbacks", true), ("  service = pbv", true), ("state.sqlite", false), ("./host=x", false),
        ("/var/lib/postbacks/state.sqlite", false), ("colour=blue", false), ("postgresql.sqlite", false),
    ])
    func recognizes(_ value: String, _ isPostgreSQL: Bool) {
        #expect(PostgresConnectionString.recognizes(value) == isPostgreSQL)
    }

    @Test("A password never reaches a message: in a URL, a keyword string, or a string libpq cannot parse")
    func passwordNeverPrinted() throws {
        let server = try TestPostgres.server.get()
        let secret = "Sw0rdf1sh-\(UUID().uuidString.prefix(8))"
        var strings = ["host=127.0.0.1 port=1 user=postgres password=\(secret) dbname=x connect_timeout=2",
                       "postgresql://postgres:\(secret)@127.0.0.1:1/x?connect_timeout=2",
                       "host=x password='\(secret)' dbname",
                       "host=x password=\(secret) 'unterminated"]
        if let url = URLComponents(string: server.tcpURL), let port = url.port {
            strings.append("postgresql://postgres:\(secret)@127.0.0.1:\(port)/postgres")
        }
        for string in strings {
            do {
                _ = try Self.open(string)
                Issue.record("connected with a wrong password: \(string)")
            } catch let error as AttributionError {
                #expect(!error.reason.contains(secret), "\(error.reason)")
                #expect(!error.reason.contains("Sw0rdf1sh"), "\(error.reason)")
                #expect(error.code == .cannotOpen, "\(error)")
            }
        }
    }
}

/// The store tests' sightings (one definition for every store).
private typealias Shared = DeduplicationStoreTests
