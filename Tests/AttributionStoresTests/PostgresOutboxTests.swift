#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Foundation
import Synchronization
import Testing
@_spi(CommandLine) @_spi(Servers) @_spi(Stores) @testable import Attribution
@_spi(CommandLine) @_spi(Servers) @testable import AttributionStores

/// The outbox of a PostgreSQL state, against the real server: owed in the storing transaction (or not at all),
/// shared by receivers through `FOR UPDATE SKIP LOCKED`, a dead holder's deliveries handed back after the lease.
@Suite("PostgreSQL outbox", .serialized, .enabled(if: TestPostgres.enabled))
struct PostgresOutboxTests {
    static let day: Int64 = 86_400_000

    static func row(_ index: Int, verdict: String = "valid") -> ArchivedPostback {
        ArchivedPostback(received: Date().millisecondsSince1970, request: "request-\(index)",
                         route: "appattribution", verdict: verdict, code: verdict == "valid" ? nil : "bad-signature",
                         key: Array("key-\(index)".utf8), body: Array("{\"n\":\(index)}".utf8),
                         record: Array("{\"source\":\"request-\(index)\"}".utf8))
    }

    /// A new database with the state's schema and the outbox's, and a store that archives into it.
    static func open() throws -> (PostgreSQLDeduplicationStore, PostgresOutbox, String) {
        let database = try TestPostgres.database()
        let store = try PostgreSQLDeduplicationStore(connectionString: database)
        let outbox = try PostgresOutbox(connectionString: database)
        return (store, outbox, database)
    }

    static func store(_ rows: [ArchivedPostback], in store: PostgreSQLDeduplicationStore,
                      owing destinations: [OutboxDestination]) throws {
        _ = try store.claim([], at: Date(), owing: destinations, archiving: { _ in rows })
    }

    @Test("rows are owed by selection in the storing statement: valid ones to `valid`, every body to `all`")
    func selection() throws {
        let (store, outbox, _) = try Self.open()
        let valid = try OutboxDestination(name: "https://mmp.example/", selection: .valid)
        let all = try OutboxDestination(name: "https://partner.example/", selection: .all)
        try Self.store([Self.row(1), Self.row(2, verdict: "invalid"), Self.row(3)], in: store, owing: [valid, all])
        let backlog = try outbox.backlog()
        #expect(backlog[valid.name]?.owed == 2)
        #expect(backlog[all.name]?.owed == 3)
        let taken = try outbox.claim(destination: valid.name, limit: 10, holder: 1, leaseMilliseconds: 60_000,
                                     horizonMilliseconds: Self.day)
        #expect(Set(taken.map(\.request)) == ["request-1", "request-3"])
        #expect(taken.first { $0.request == "request-1" }?.body == Array("{\"n\":1}".utf8))
        #expect(taken.allSatisfy { $0.attempts == 1 && !$0.wasReclaimed })
    }

    @Test("Regression (one transaction): a storing transaction that fails leaves neither the row nor its delivery")
    func failedStoreOwesNothing() throws {
        let (store, outbox, database) = try Self.open()
        let destination = try OutboxDestination(name: "https://mmp.example/", selection: .valid)
        // The server refuses the delivery's insert, which the storing statement makes after the archive's.
        try TestPostgres.execute("""
            CREATE FUNCTION postback_relay.refuse() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN RAISE EXCEPTION 'refused by the test'; END $$
            """, on: database)
        try TestPostgres.execute("""
            CREATE TRIGGER refuse BEFORE INSERT ON postback_relay.deliveries
                FOR EACH ROW EXECUTE FUNCTION postback_relay.refuse()
            """, on: database)
        #expect(throws: AttributionError.self) {
            try Self.store([Self.row(1), Self.row(2)], in: store, owing: [destination])
        }
        let archived = try TestPostgres.execute("SELECT count(*) FROM postback_verify.received_postbacks",
                                                on: database)
        #expect(archived.int64(0, 0) == 0)
        #expect(try outbox.entries(deadOnly: false).isEmpty)
        // Once the server accepts again, the next group is stored with its deliveries.
        try TestPostgres.execute("DROP TRIGGER refuse ON postback_relay.deliveries", on: database)
        try Self.store([Self.row(3)], in: store, owing: [destination])
        #expect(try outbox.entries(deadOnly: false).map(\.request) == ["request-3"])
    }

    @Test("four receivers claiming at once (FOR UPDATE SKIP LOCKED) take every delivery exactly once")
    func concurrentClaims() throws {
        let (store, _, database) = try Self.open()
        let destination = try OutboxDestination(name: "https://mmp.example/", selection: .valid)
        let count = 800
        try Self.store((1...count).map { Self.row($0) }, in: store, owing: [destination])
        let outboxes = try (1...4).map { _ in try PostgresOutbox(connectionString: database) }
        // One thread per receiver (not tasks: the cooperative pool has a thread per core), started together.
        let ready = Atomic<Int>(0)
        let taken = Mutex<[Int: [Int64]]>([:])
        let failures = Mutex<[String]>([])
        let done = DispatchGroup()
        for (index, outbox) in outboxes.enumerated() {
            done.enter()
            Thread.detachNewThread {
                defer { done.leave() }
                ready.add(1, ordering: .relaxed)
                while ready.load(ordering: .relaxed) < outboxes.count { sched_yield() }
                var ids: [Int64] = []
                do {
                    while true {
                        let batch = try outbox.claim(destination: destination.name, limit: 5,
                                                     holder: Int64(index + 1), leaseMilliseconds: 600_000,
                                                     horizonMilliseconds: Self.day)
                        if batch.isEmpty { break }
                        ids += batch.map(\.id)
                    }
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
                taken.withLock { $0[index] = ids }
            }
        }
        done.wait()
        #expect(failures.withLock { $0 }.isEmpty)
        let byHolder = taken.withLock { $0 }
        let flat = byHolder.values.flatMap { $0 }
        #expect(flat.count == count, "taken \(flat.count) times for \(count) deliveries")
        #expect(Set(flat).count == count, "a delivery was taken twice")
        #expect(byHolder.values.filter { !$0.isEmpty }.count >= 2,
                "the claims did not interleave: \(byHolder.mapValues(\.count))")
    }

    @Test("a dead holder's deliveries are handed back after its lease, counted reclaimed; its late 2xx still counts")
    func leaseHandBack() throws {
        let (store, first, database) = try Self.open()
        let second = try PostgresOutbox(connectionString: database)
        let destination = try OutboxDestination(name: "https://mmp.example/", selection: .valid)
        try Self.store([Self.row(1), Self.row(2)], in: store, owing: [destination])
        let held = try first.claim(destination: destination.name, limit: 10, holder: 1, leaseMilliseconds: 400,
                                   horizonMilliseconds: Self.day)
        #expect(held.count == 2)
        #expect(try second.claim(destination: destination.name, limit: 10, holder: 2, leaseMilliseconds: 400,
                                 horizonMilliseconds: Self.day).isEmpty)
        Thread.sleep(forTimeInterval: 0.6)
        let handedBack = try second.claim(destination: destination.name, limit: 10, holder: 2,
                                          leaseMilliseconds: 60_000, horizonMilliseconds: Self.day)
        #expect(Set(handedBack.map(\.id)) == Set(held.map(\.id)))
        #expect(handedBack.allSatisfy { $0.wasReclaimed && $0.attempts == 2 })
        // The first holder's outcomes: its 2xx deletes the row; its retry no longer applies (not its lease).
        try first.record([DeliveryOutcome(id: held[0].id, fate: .delivered, answer: "200"),
                          DeliveryOutcome(id: held[1].id, fate: .retry(afterMilliseconds: 1_000), answer: "500")],
                         holder: 1, horizonMilliseconds: Self.day)
        let left = try second.entries(deadOnly: false)
        #expect(left.map(\.id) == [held[1].id])
        #expect(left.first?.answer == nil, "the old holder's retry was recorded over the new holder's lease")
    }

    @Test("deliveries handed back are due at once for another receiver, their attempt not counted, not reclaimed")
    func handBack() throws {
        let (store, first, database) = try Self.open()
        let second = try PostgresOutbox(connectionString: database)
        let destination = try OutboxDestination(name: "https://mmp.example/", selection: .valid)
        try Self.store([Self.row(1), Self.row(2)], in: store, owing: [destination])
        let taken = try first.claim(destination: destination.name, limit: 10, holder: 1, leaseMilliseconds: 60_000,
                                    horizonMilliseconds: Self.day)
        #expect(taken.count == 2)
        try second.release(taken.map(\.id), holder: 2)  // not its rows: left alone
        #expect(try second.claim(destination: destination.name, limit: 10, holder: 2, leaseMilliseconds: 60_000,
                                 horizonMilliseconds: Self.day).isEmpty)
        try first.release(taken.map(\.id), holder: 1)
        let again = try second.claim(destination: destination.name, limit: 10, holder: 2,
                                     leaseMilliseconds: 60_000, horizonMilliseconds: Self.day)
        #expect(Set(again.map(\.id)) == Set(taken.map(\.id)))
        #expect(again.allSatisfy { $0.attempts == 1 && !$0.wasReclaimed })
    }

    @Test("a 4xx is dead at once, a delivery past the horizon is dead with that answer, and both can be re-queued")
    func fatesAndRequeue() throws {
        let (store, outbox, _) = try Self.open()
        let destination = try OutboxDestination(name: "https://mmp.example/", selection: .valid)
        try Self.store([Self.row(1), Self.row(2)], in: store, owing: [destination])
        let taken = try outbox.claim(destination: destination.name, limit: 1, holder: 1, leaseMilliseconds: 60_000,
                                     horizonMilliseconds: Self.day)
        try outbox.record([DeliveryOutcome(id: taken[0].id, fate: .dead, answer: "410 gone")], holder: 1,
                          horizonMilliseconds: Self.day)
        Thread.sleep(forTimeInterval: 0.05)
        #expect(try outbox.claim(destination: destination.name, limit: 5, holder: 1, leaseMilliseconds: 60_000,
                                 horizonMilliseconds: 10).isEmpty)
        let dead = try outbox.entries(deadOnly: true)
        #expect(dead.count == 2)
        #expect(dead.contains { $0.answer == "410 gone" })
        #expect(dead.contains { $0.answer == OutboxAnswers.horizonPassed })
        #expect(try outbox.backlog()[destination.name] == nil)
        #expect(try outbox.requeue(dead[0].id) == 1)
        #expect(try outbox.requeue(nil) == 1)
        #expect(try outbox.requeue(nil) == 0)
        let again = try outbox.claim(destination: destination.name, limit: 5, holder: 2, leaseMilliseconds: 60_000,
                                     horizonMilliseconds: Self.day)
        #expect(again.count == 2 && again.allSatisfy { $0.attempts == 1 })
    }
}
