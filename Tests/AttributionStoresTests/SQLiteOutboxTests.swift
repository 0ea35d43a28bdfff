@_spi(CommandLine) @_spi(Servers) @_spi(Stores) @testable import Attribution
@_spi(CommandLine) @_spi(Servers) @testable import AttributionStores
import Foundation
import Synchronization
import Testing

/// The outbox of a SQLite archive: owed in the storing transaction, leased, handed back, given up at the horizon.
@Suite("SQLite outbox")
struct SQLiteOutboxTests {
    /// A clock the test moves.
    final class TestClock: Sendable {
        let now = Atomic<Int64>(1_000_000)
        func advance(_ milliseconds: Int64) { now.add(milliseconds, ordering: .relaxed) }
    }

    static func row(_ index: Int, verdict: String = "valid", code: String? = nil) -> ArchivedPostback {
        ArchivedPostback(received: 1_000_000, request: "request-\(index)", route: "appattribution", verdict: verdict,
                         code: code, key: Array("key-\(index)".utf8), body: Array("{\"n\":\(index)}".utf8),
                         record: Array("{\"source\":\"request-\(index)\"}".utf8))
    }

    static func open() throws -> (SQLiteReceivedArchive, SQLiteOutbox, TestClock, URL) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("outbox-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent("received.sqlite").path
        let archive = try SQLiteReceivedArchive(path: path)
        let clock = TestClock()
        let outbox = try SQLiteOutbox(path: path) { clock.now.load(ordering: .relaxed) }
        return (archive, outbox, clock, directory)
    }

    @Test("rows are owed by selection: valid ones to `valid`, every body but duplicates to `all`")
    func selection() throws {
        let (archive, outbox, _, directory) = try Self.open()
        defer { try? FileManager.default.removeItem(at: directory) }
        let valid = try OutboxDestination(name: "https://mmp.example/", selection: .valid)
        let all = try OutboxDestination(name: "https://partner.example/", selection: .all)
        try archive.append([Self.row(1), Self.row(2, verdict: "invalid", code: "bad-signature"),
                            Self.row(3, verdict: "invalid", code: "duplicate")], owing: [valid, all])
        let backlog = try outbox.backlog()
        #expect(backlog[valid.name]?.owed == 1)
        #expect(backlog[all.name]?.owed == 2)
    }

    @Test("a leased delivery is not taken again until its lease runs out, then it is marked reclaimed")
    func lease() throws {
        let (archive, outbox, clock, directory) = try Self.open()
        defer { try? FileManager.default.removeItem(at: directory) }
        let destination = try OutboxDestination(name: "https://mmp.example/", selection: .valid)
        try archive.append([Self.row(1), Self.row(2)], owing: [destination])
        let first = try outbox.claim(destination: destination.name, limit: 1, holder: 1, leaseMilliseconds: 5_000,
                                     horizonMilliseconds: 86_400_000)
        let second = try outbox.claim(destination: destination.name, limit: 10, holder: 2, leaseMilliseconds: 5_000,
                                      horizonMilliseconds: 86_400_000)
        #expect(first.count == 1 && second.count == 1)
        #expect(first.first?.id != second.first?.id)
        #expect(first.first?.body == Array("{\"n\":1}".utf8))
        #expect(try outbox.claim(destination: destination.name, limit: 10, holder: 3, leaseMilliseconds: 5_000,
                                 horizonMilliseconds: 86_400_000).isEmpty)
        clock.advance(5_001)
        let reclaimed = try outbox.claim(destination: destination.name, limit: 10, holder: 3,
                                         leaseMilliseconds: 5_000, horizonMilliseconds: 86_400_000)
        #expect(reclaimed.count == 2)
        #expect(reclaimed.allSatisfy { $0.wasReclaimed && $0.attempts == 2 })
        // The first holder's late outcome is a delivery all the same: the row goes.
        try outbox.record([DeliveryOutcome(id: first[0].id, fate: .delivered, answer: "200")], holder: 1,
                          horizonMilliseconds: 86_400_000)
        #expect(try outbox.backlog()[destination.name]?.owed == 1)
    }

    @Test("a retry waits its delay; a 4xx is dead at once; a retry past the horizon is dead with its answer")
    func fates() throws {
        let (archive, outbox, clock, directory) = try Self.open()
        defer { try? FileManager.default.removeItem(at: directory) }
        let destination = try OutboxDestination(name: "https://mmp.example/", selection: .valid)
        try archive.append([Self.row(1), Self.row(2)], owing: [destination])
        let horizon: Int64 = 60_000
        let taken = try outbox.claim(destination: destination.name, limit: 2, holder: 1, leaseMilliseconds: 5_000,
                                     horizonMilliseconds: horizon)
        try outbox.record([DeliveryOutcome(id: taken[0].id, fate: .retry(afterMilliseconds: 10_000), answer: "500"),
                           DeliveryOutcome(id: taken[1].id, fate: .dead, answer: "410 gone")],
                          holder: 1, horizonMilliseconds: horizon)
        #expect(try outbox.claim(destination: destination.name, limit: 2, holder: 1, leaseMilliseconds: 5_000,
                                 horizonMilliseconds: horizon).isEmpty)
        clock.advance(10_000)
        let again = try outbox.claim(destination: destination.name, limit: 2, holder: 1, leaseMilliseconds: 5_000,
                                     horizonMilliseconds: horizon)
        #expect(again.map(\.id) == [taken[0].id])
        try outbox.record([DeliveryOutcome(id: taken[0].id, fate: .retry(afterMilliseconds: 60_000), answer: "503")],
                          holder: 1, horizonMilliseconds: horizon)
        let dead = try outbox.entries(deadOnly: true)
        #expect(dead.count == 2)
        #expect(dead.contains { $0.answer == "410 gone" })
        #expect(dead.contains { $0.answer?.hasPrefix("503; gave up") == true })
        #expect(try outbox.backlog()[destination.name] == nil)
        #expect(try outbox.requeue(nil) == 2)
        #expect(try outbox.claim(destination: destination.name, limit: 5, holder: 1, leaseMilliseconds: 5_000,
                                 horizonMilliseconds: horizon).count == 2)
    }

    @Test("a delivery past the horizon is never handed out, though the scan that marks it dead waits a second")
    func horizonBetweenScans() throws {
        let (archive, outbox, clock, directory) = try Self.open()
        defer { try? FileManager.default.removeItem(at: directory) }
        let destination = try OutboxDestination(name: "https://mmp.example/", selection: .valid)
        try archive.append([Self.row(1)], owing: [destination])
        #expect(try outbox.claim(destination: destination.name, limit: 1, holder: 1, leaseMilliseconds: 60_000,
                                 horizonMilliseconds: 500).count == 1)
        try archive.append([Self.row(2)], owing: [destination])
        clock.advance(600)
        #expect(try outbox.claim(destination: destination.name, limit: 5, holder: 1, leaseMilliseconds: 60_000,
                                 horizonMilliseconds: 500).isEmpty)
        #expect(try outbox.entries(deadOnly: true).isEmpty, "marked dead before its second")
        clock.advance(500)
        #expect(try outbox.claim(destination: destination.name, limit: 5, holder: 1, leaseMilliseconds: 60_000,
                                 horizonMilliseconds: 500).isEmpty)
        #expect(try outbox.entries(deadOnly: true).map(\.request) == ["request-2"])
    }

    @Test("deliveries handed back are due at once for any holder, their attempt not counted, not reclaimed")
    func handBack() throws {
        let (archive, outbox, _, directory) = try Self.open()
        defer { try? FileManager.default.removeItem(at: directory) }
        let destination = try OutboxDestination(name: "https://mmp.example/", selection: .valid)
        try archive.append([Self.row(1), Self.row(2)], owing: [destination])
        let taken = try outbox.claim(destination: destination.name, limit: 5, holder: 1, leaseMilliseconds: 60_000,
                                     horizonMilliseconds: 86_400_000)
        #expect(taken.count == 2)
        // Another holder's rows are left alone.
        try outbox.release(taken.map(\.id), holder: 2)
        #expect(try outbox.claim(destination: destination.name, limit: 5, holder: 2, leaseMilliseconds: 60_000,
                                 horizonMilliseconds: 86_400_000).isEmpty)
        try outbox.release(taken.map(\.id), holder: 1)
        let again = try outbox.claim(destination: destination.name, limit: 5, holder: 2, leaseMilliseconds: 60_000,
                                     horizonMilliseconds: 86_400_000)
        #expect(Set(again.map(\.id)) == Set(taken.map(\.id)))
        #expect(again.allSatisfy { $0.attempts == 1 && !$0.wasReclaimed })
    }

    @Test("a delivery owed past the horizon is never handed out: it is dead when next looked at")
    func horizon() throws {
        let (archive, outbox, clock, directory) = try Self.open()
        defer { try? FileManager.default.removeItem(at: directory) }
        let destination = try OutboxDestination(name: "https://mmp.example/", selection: .valid)
        try archive.append([Self.row(1)], owing: [destination])
        clock.advance(60_001)
        #expect(try outbox.claim(destination: destination.name, limit: 5, holder: 1, leaseMilliseconds: 5_000,
                                 horizonMilliseconds: 60_000).isEmpty)
        #expect(try outbox.entries(deadOnly: true).first?.answer == "gave up: owed longer than the horizon")
    }

    @Test("Regression (one transaction): an append that fails leaves neither the rows nor their deliveries")
    func failedAppendOwesNothing() throws {
        let (archive, outbox, _, directory) = try Self.open()
        defer { try? FileManager.default.removeItem(at: directory) }
        let destination = try OutboxDestination(name: "https://mmp.example/", selection: .valid)
        // SQLite refuses the second row's delivery, after the first row and its delivery were inserted.
        let path = directory.appendingPathComponent("received.sqlite").path
        let connection = try SQLiteConnection(path: path, readOnly: false)
        connection.setBusyTimeout(milliseconds: 5000)
        try connection.execute("""
            CREATE TRIGGER refuse BEFORE INSERT ON relay_deliveries
            WHEN (SELECT count(*) FROM relay_deliveries) >= 1 BEGIN SELECT RAISE(ABORT, 'refused by the test'); END
            """)
        #expect(throws: AttributionError.self) {
            try archive.append([Self.row(1), Self.row(2)], owing: [destination])
        }
        let rows = try connection.prepare("SELECT count(*) FROM received_postbacks")
        #expect(try rows.step() && rows.int64(0) == 0)
        #expect(try outbox.entries(deadOnly: false).isEmpty)
        try connection.execute("DROP TRIGGER refuse")
        try archive.append([Self.row(3)], owing: [destination])
        #expect(try outbox.entries(deadOnly: false).map(\.request) == ["request-3"])
    }
}
