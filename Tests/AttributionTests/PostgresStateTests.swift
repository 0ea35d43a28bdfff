#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
@testable import Attribution
@testable import AttributionStores

/// The PostgreSQL state against a real server (``TestPostgres``): what only it has (its schema, its refusals, owners
/// by advisory lock, leases, reconnection, retention and pruning, and what its messages may say of the connection
/// string). The protocol it shares with the other stores is `DeduplicationStoreTests`'s conformance suite.
@Suite("PostgreSQL state", .serialized, .enabled(if: TestPostgres.enabled))
struct PostgresStateTests {
    static let monday = Date(timeIntervalSince1970: 1_795_305_600.25)

    static func open(_ connectionString: String, retentionDays: Int = 10, leaseSeconds: Double = 30) throws
        -> PostgreSQLDeduplicationStore {
        try PostgreSQLDeduplicationStore(connectionString: connectionString, retentionDays: retentionDays,
                                         leaseSeconds: leaseSeconds)
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

    // MARK: Keys, claims, owners

    @Test("claim(_:at:confirming:) confirms one call whole in the claim's statement, and a call confirmed in part on its own")
    func claimConfirming() throws {
        let database = try TestPostgres.database()
        let store = try Self.open(database)
        let observer = try Self.open(database)
        #expect(try store.claim([Shared.sighting("W1"), Shared.sighting("W2")], at: Self.monday)
                == [.firstSeen, .firstSeen])
        #expect(try store.claim([Shared.sighting("P1"), Shared.sighting("P2")], at: Self.monday)
                == [.firstSeen, .firstSeen])
        // W1 and W2 are the whole first call; P1 is half of the second.
        let answers = try store.claim([Shared.sighting("N1")], at: Self.monday,
                                      confirming: [ExactString("W1"), ExactString("W2"), ExactString("P1")])
        #expect(answers == [.firstSeen])
        let seen = try observer.claim(["W1", "W2", "P1", "P2", "N1"].map { Shared.sighting($0, "observer") },
                                      at: Self.monday)
        #expect(seen.map { $0.duplicateOf?.isPending } == [false, false, false, true, true])
    }

    @Test("Another live store's claim makes a sighting its pending duplicate; once that store's connection is gone (its process died, on any machine), the next sighting takes the claim over")
    func deadOwnerTakenOver() throws {
        let database = try TestPostgres.database()
        let other = try Self.open(database)
        var owner: PostgreSQLDeduplicationStore? = try Self.open(database)
        #expect(try owner!.claim([Shared.sighting("K", "first", 3)], at: Self.monday) == [.firstSeen])
        let whileAlive = try other.claim([Shared.sighting("K", "second", 9)], at: Self.monday)
        #expect(whileAlive.first?.duplicateOf?.isPending == true)
        #expect(whileAlive.first?.duplicateOf?.line == 3)
        try other.confirm([ExactString("K")])  // not its claim: left alone

        // Its connection dies without a word (as with kill -9): the server ends its session, and its lock.
        let killed = try TestPostgres.execute("""
            SELECT pg_terminate_backend(l.pid) FROM postback_verify.postbacks p
                JOIN postback_verify.claims c ON c.token = p.claim
                JOIN pg_locks l ON l.locktype = 'advisory' AND l.objsubid = 1
                    AND ((l.classid::bigint << 32) | l.objid::bigint) = c.owner
            WHERE p.key = 'K'::bytea
            """, on: database)
        #expect(killed.rowCount == 1)
        var taken = false
        for _ in 0..<100 where !taken {
            let answer = try? other.claim([Shared.sighting("K", "second", 9)], at: Self.monday)
            taken = answer == [.firstSeen]
            if !taken { Thread.sleep(forTimeInterval: 0.05) }
        }
        #expect(taken)
        owner = nil
    }

    @Test("A claim whose owner hangs past its lease (no heartbeat) is taken over; a live store's heartbeat keeps its claims past several leases")
    func leases() throws {
        let database = try TestPostgres.database()
        // A hung owner: its connection is open and holds its lock, but its lease is not renewed.
        for statement in PostgresSchema.create { try TestPostgres.execute(statement, on: database) }
        let hung = try PostgresConnection(try PostgresConnectionString(database)) { _ in }
        try hung.execute("SELECT pg_advisory_lock(77)")
        try hung.execute("INSERT INTO postback_verify.owners VALUES (77, 'elsewhere', 1, "
                         + "(extract(epoch FROM now()) * 1000)::bigint + 300)")
        try hung.execute("INSERT INTO postback_verify.claims VALUES (1, 77, 0)")
        try hung.execute("INSERT INTO postback_verify.postbacks (key, first_seen, source, line, claim) "
                         + "VALUES ('\\x48'::bytea, \(Self.monday.millisecondsSince1970), 'hung', 5, 1)")
        let store = try Self.open(database, leaseSeconds: 0.3)
        #expect(try store.claim([Shared.sighting("H", "mine", 1)], at: Self.monday).first?.duplicateOf?.source
                == "hung")
        Thread.sleep(forTimeInterval: 0.4)
        #expect(try store.claim([Shared.sighting("H", "mine", 1)], at: Self.monday) == [.firstSeen])

        let stalled = try Self.open(database, leaseSeconds: 0.3)
        #expect(try stalled.claim([Shared.sighting("S", "stalled", 1)], at: Self.monday) == [.firstSeen])
        Thread.sleep(forTimeInterval: 1.2)  // four leases without a call from its caller
        #expect(try store.claim([Shared.sighting("S", "other", 1)], at: Self.monday).first?.duplicateOf?.isPending
                == true)
    }

    @Test("Closing a store forgets its owner (the claims it held: the conformance suite)")
    func closingForgetsOwner() throws {
        let database = try TestPostgres.database()
        do {
            let store = try Self.open(database)
            #expect(try store.claim([Shared.sighting("Q", "closed", 1)], at: Self.monday) == [.firstSeen])
        }
        let next = try Self.open(database)
        #expect(try next.claim([Shared.sighting("Q", "next", 1)], at: Self.monday) == [.firstSeen])
        #expect(try next.count() == 1)
        let owners = try TestPostgres.execute("SELECT count(*) FROM postback_verify.owners", on: database)
        #expect(owners.int64(0, 0) == 1, "only the open store's owner is left")
    }

    @Test("Concurrent callers on one store, and four stores on one database: each key first seen exactly once")
    func concurrentCallers() async throws {
        let database = try TestPostgres.database()
        let stores = try (0..<4).map { _ in try Self.open(database) }
        let shared = stores[0]
        let firsts = try await withThrowingTaskGroup(of: Int.self) { group in
            for caller in 0..<16 {
                let store = caller % 2 == 0 ? shared : stores[caller % 4]
                group.addTask {
                    var firsts = 0
                    for batch in 0..<10 {
                        // Overlapping batches in different orders.
                        let keys = (0..<50).map { "key-\((($0 * 7) + batch * 13 + caller) % 200)" }
                        let answers: [DeduplicationAnswer] = try await store.deduplicate(
                            keys.enumerated().map { Shared.sighting($1, "caller-\(caller)", $0) }, at: Self.monday
                        ) { answers in answers }
                        firsts += answers.filter { $0 == .firstSeen }.count
                    }
                    return firsts
                }
            }
            return try await group.reduce(0, +)
        }
        #expect(firsts == 200)
        #expect(try shared.count() == 200)
    }

    @Test("A server restarted under a live store: the call that meets it throws `unavailable`, the next reconnects, and what was confirmed before is still there")
    func reconnects() async throws {
        let server = try TestPostgres.start(watching: getpid())
        defer { try? TestPostgres.control("stop", server.directory) }
        let store = try Self.open(server.connectionString)
        _ = try store.deduplicate(Shared.sighting("before", "a", 1), at: Self.monday)
        // The store's commits do not wait for the disk; the server's WAL writer flushes them within 0.6 s.
        try await Task.sleep(for: .seconds(1))
        try TestPostgres.control("halt", server.directory)
        try TestPostgres.control("resume", server.directory)
        do {
            _ = try await store.claim([Shared.sighting("during", "b", 1)], at: Self.monday)
            Issue.record("a claim over a connection the server dropped succeeded")
        } catch let error as AttributionError {
            #expect(error.code == .unavailable, "\(error)")
            #expect(error.reason.contains("connection to the server was lost"), "\(error.reason)")
        }
        let answers: [DeduplicationAnswer] = try await store.claim(
            [Shared.sighting("before", "c", 1), Shared.sighting("during", "c", 2)], at: Self.monday)
        #expect(answers.first?.duplicateOf?.source == "a")
        #expect(answers.last == .firstSeen)
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
        } catch let error as AttributionError {
            #expect(error.code == .unavailable, "\(error)")
        }
        try TestPostgres.control("resume", server.directory)
        try store.probe()
    }

    // MARK: Retention

    @Test("Past the retention a key counts as absent; pruning deletes at most 512 rows per batch, oldest first")
    func retentionAndPruning() throws {
        let database = try TestPostgres.database()
        let store = try Self.open(database, retentionDays: 10)
        let old = Self.monday.addingTimeInterval(-30 * 86_400)
        _ = try store.deduplicate((0..<1300).map { Shared.sighting("old-\($0)") }, at: old) { $0 }
        _ = try store.deduplicate(Shared.sighting("E", "e", 1), at: old.addingTimeInterval(86_400))
        #expect(try store.count() == 1301)

        // A later run: its first batch prunes the 512 oldest; E, expired but not among them, is first seen again.
        let later = try Self.open(database, retentionDays: 10)
        #expect(try later.claim([Shared.sighting("E", "again", 2)], at: Self.monday) == [.firstSeen])
        #expect(try later.count() == 1301 - 512)
        try later.confirm([ExactString("E")])
        #expect(try later.deduplicate(Shared.sighting("E", "third", 3), at: Self.monday).duplicateOf?.source
                == "again")
        #expect(try later.count() == 1301 - 1024, "each call prunes at most 512")
        _ = try later.claim([Shared.sighting("new-1")], at: Self.monday)
        #expect(try later.count() == 2, "the last 276 old rows pruned: E and new-1 remain")
        _ = try later.claim([Shared.sighting("new-2")], at: Self.monday)
        #expect(try later.count() == 3)
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

/// The store tests' sightings (one definition for every store).
private typealias Shared = DeduplicationStoreTests
