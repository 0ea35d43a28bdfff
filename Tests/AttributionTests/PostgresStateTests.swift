import Foundation
import Testing
@testable import Attribution

/// The PostgreSQL state against a real server (``TestPostgres``): its schema, its refusals, keys compared by bytes,
/// claims and their owners, retention and pruning, and what its messages may say of the connection string.
@Suite("PostgreSQL state", .serialized, .enabled(if: TestPostgres.enabled))
struct PostgresStateTests {
    static let lease: Int64 = 600_000
    static let monday = Date(timeIntervalSince1970: 1_795_305_600.25)

    static func open(_ connectionString: String, retentionDays: Int = 10, lease: Int64 = lease) throws
        -> PostgresStateDatabase {
        try PostgresStateDatabase(connectionString: connectionString, retentionDays: retentionDays,
                                  leaseMilliseconds: lease)
    }

    static func claim(_ key: String, _ source: String = "s", _ line: Int = 1, digest: [UInt8] = [1])
        -> PostgresStateDatabase.Claim {
        PostgresStateDatabase.Claim(key: Array(key.utf8), source: source, line: line, digest: digest)
    }

    /// Everything in the schema and the rows of its tables, to show a refused database was left as it was.
    static func snapshot(_ connectionString: String) throws -> [String] {
        let described = try TestPostgres.execute(PostgresSchema.describe, on: connectionString)
        var lines = (0..<described.rowCount).map { described.text($0, 0) }
        let tables = try TestPostgres.execute(
            "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            + "WHERE n.nspname = 'postback_verify' AND c.relkind = 'r' ORDER BY 1", on: connectionString)
        for row in 0..<tables.rowCount {
            let table = tables.text(row, 0)
            let rows = try TestPostgres.execute(
                "SELECT coalesce(string_agg(t::text, '|' ORDER BY t::text), '') FROM postback_verify.\(table) t",
                on: connectionString)
            lines.append("\(table): \(rows.text(0, 0))")
        }
        return lines
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
        #expect(described.contains("schema_version: (1)"))
        _ = try Self.open(database)
    }

    /// A database whose `postback_verify` schema is not ours, made the way it would be met.
    struct Foreign: Sendable, CustomTestStringConvertible {
        let testDescription: String
        let code: StateError.Code
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
            "UPDATE postback_verify.schema_version SET version = 2",
        ]),
        Foreign(testDescription: "two schema versions", code: .damaged, sql: PostgresSchema.create + [
            "INSERT INTO postback_verify.schema_version VALUES (1)",
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
        #expect(throws: StateError(foreign.code, "")) { try Self.open(database) }
        do {
            _ = try Self.open(database)
        } catch let error as StateError {
            #expect(error.reason.contains("PostgreSQL state ("), "\(error.reason)")
            #expect(error.reason.contains("dbname="), "names the database: \(error.reason)")
        }
        #expect(try Self.snapshot(database) == before)
    }

    // MARK: Keys, claims, owners

    @Test("Regression: keys compare by their bytes: A+U+030A, U+00C5, and keys with U+0000 and U+001F are distinct")
    func keysByBytes() throws {
        let state = try Self.open(try TestPostgres.database())
        let keys = ["A\u{030A}", "\u{00C5}", "A\u{0}B", "A\u{1F}0", "A"]
        let first = try state.claim(keys.enumerated().map { Self.claim($1, "f", $0 + 1) }, at: Self.monday)
        #expect(first.rows.map(\.ours) == [true, true, true, true, true])
        try state.confirm(keys.map { Array($0.utf8) }, token: first.token)
        let second = try state.claim(keys.reversed().map { Self.claim($0, "g") }, at: Self.monday)
        #expect(second.rows.map(\.ours) == [false, false, false, false, false])
        #expect(second.rows.map(\.line) == [5, 4, 3, 2, 1])
        #expect(second.rows.allSatisfy { $0.source == "f" && $0.confirmed && $0.firstSeen == 1_795_305_600_250 })
    }

    @Test("A live owner's unconfirmed claim makes another sighting its duplicate; once its connection is gone, the next sighting takes the claim over")
    func deadOwnerTakenOver() throws {
        let database = try TestPostgres.database()
        let other = try Self.open(database)
        var owner: PostgresStateDatabase? = try Self.open(database)
        let claimed = try owner!.claim([Self.claim("K", "first", 3, digest: [7])], at: Self.monday)
        #expect(claimed.rows.first?.ours == true)

        let whileAlive = try other.claim([Self.claim("K", "second", 9)], at: Self.monday)
        #expect(whileAlive.rows.first?.ours == false)
        #expect(whileAlive.rows.first?.confirmed == false)
        #expect(whileAlive.rows.first?.line == 3)
        #expect(whileAlive.rows.first?.digest == [7])

        owner = nil  // the connection closes: its session advisory lock goes with it
        var taken = false
        for _ in 0..<50 where !taken {  // the server ends the session a moment after the socket closes
            taken = try other.claim([Self.claim("K", "second", 9)], at: Self.monday).rows.first?.ours == true
            if !taken { Thread.sleep(forTimeInterval: 0.05) }
        }
        #expect(taken)
    }

    @Test("A claim past its lease is taken over even while its owner lives")
    func leaseExpires() throws {
        let database = try TestPostgres.database()
        let owner = try Self.open(database, lease: 100)
        let other = try Self.open(database, lease: 100)
        _ = try owner.claim([Self.claim("L")], at: Self.monday)
        #expect(try other.claim([Self.claim("L")], at: Self.monday).rows.first?.ours == false)
        Thread.sleep(forTimeInterval: 0.2)
        #expect(try other.claim([Self.claim("L")], at: Self.monday).rows.first?.ours == true)
    }

    @Test("A released claim is forgotten; a confirm after a takeover confirms only what is still ours")
    func releaseAndLateConfirm() throws {
        let database = try TestPostgres.database()
        let state = try Self.open(database, lease: 100)
        let other = try Self.open(database, lease: 100)
        let one = try state.claim([Self.claim("R1"), Self.claim("R2")], at: Self.monday)
        try state.release([Array("R1".utf8)], token: one.token)
        #expect(try other.claim([Self.claim("R1")], at: Self.monday).rows.first?.ours == true)
        Thread.sleep(forTimeInterval: 0.2)
        #expect(try other.claim([Self.claim("R2")], at: Self.monday).rows.first?.ours == true)
        #expect(try state.confirm([Array("R1".utf8), Array("R2".utf8)], token: one.token) == 0)
    }

    // MARK: Retention

    @Test("Past the retention a key counts as absent; pruning deletes at most 512 rows per batch, oldest first")
    func retentionAndPruning() throws {
        let database = try TestPostgres.database()
        let state = try Self.open(database, retentionDays: 10)
        let old = Self.monday.addingTimeInterval(-30 * 86_400)
        let claims = (0..<1300).map { Self.claim("old-\($0)") }
        let made = try state.claim(claims, at: old)
        try state.confirm(claims.map(\.key), token: made.token)
        let expired = try state.claim([Self.claim("E", "e", 1)], at: old.addingTimeInterval(86_400))
        try state.confirm([Array("E".utf8)], token: expired.token)
        #expect(try state.count() == 1301)

        // A later run: its first batch prunes the 512 oldest; E, expired but not among them, is first seen again.
        let later = try Self.open(database, retentionDays: 10)
        let again = try later.claim([Self.claim("E", "again", 2)], at: Self.monday)
        #expect(again.rows.first?.ours == true)
        #expect(again.rows.first?.firstSeen == Self.monday.millisecondsSince1970)
        #expect(try later.count() == 1301 - 512)
        _ = try later.claim([Self.claim("new-1")], at: Self.monday)
        #expect(try later.count() == 1301 - 1024 + 1)
        _ = try later.claim([Self.claim("new-2")], at: Self.monday)
        #expect(try later.count() == 3, "the last 276 old rows pruned: E, new-1, new-2 remain")
        _ = try later.claim([Self.claim("new-3")], at: Self.monday)
        #expect(try later.count() == 4)
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
            } catch let error as StateError {
                #expect(!error.reason.contains(secret), "\(error.reason)")
                #expect(!error.reason.contains("Sw0rdf1sh"), "\(error.reason)")
                #expect(error.code == .cannotOpen, "\(error)")
            }
        }
    }
}

extension Thread {
    /// Runs `body` on a new thread; the result is waited for by `get()`.
    static func detachNewThreadWithResult<Value: Sendable>(_ body: @escaping @Sendable () throws -> Value)
        -> ThreadResult<Value> {
        let result = ThreadResult<Value>()
        Thread.detachNewThread { result.set(Result { try body() }) }
        return result
    }
}

final class ThreadResult<Value: Sendable>: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)
    private var result: Result<Value, any Error>?

    func set(_ result: Result<Value, any Error>) {
        self.result = result
        done.signal()
    }

    func get() throws -> Value {
        done.wait()
        done.signal()
        return try result!.get()
    }
}
