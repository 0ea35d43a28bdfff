#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
@_spi(CommandLine) @_spi(Servers) @_spi(Stores) @testable import Attribution
@_spi(CommandLine) @_spi(Servers) @testable import AttributionStores

/// The owners of one file or database: each store instance is one, and its claims are pending for every other
/// until it confirms them, releases them, closes, or dies. The memory store is a single owner, so these tests run
/// over SQLite and PostgreSQL.
extension DeduplicationStoreTests {
    /// Another owner holding a claim, and the way it goes: each store's ways for an owner to die.
    struct OtherOwner: Sendable, CustomTestStringConvertible {
        enum Ending: Sendable {
            /// Its process on this machine exits (the process id is checked), its lease still running.
            case processExits
            /// It stops renewing its lease, and the lease runs out (another machine, or a hung process).
            case leaseRunsOut
        }

        let kind: Kind
        let ending: Ending
        let testDescription: String
    }

    static let otherOwners = [
        OtherOwner(kind: .sqlite, ending: .processExits, testDescription: "SQLite: its process on this machine exits"),
        OtherOwner(kind: .sqlite, ending: .leaseRunsOut,
                   testDescription: "SQLite: on another machine, its lease runs out"),
        OtherOwner(kind: .postgres, ending: .processExits,
                   testDescription: "PostgreSQL: its process on this machine exits, its lease still running"),
        OtherOwner(kind: .postgres, ending: .leaseRunsOut,
                   testDescription: "PostgreSQL: it hangs past its lease, its connection open"),
    ].filter { kinds.contains($0.kind) }

    /// How long the owners whose lease runs out hold it: long enough for three calls first.
    static let otherLease = 1.5

    /// Another owner's claim, what keeps that owner alive meanwhile, and what ends it.
    struct HeldClaim {
        let keptAlive: [AnyObject]
        let end: () throws -> Void
    }

    /// A SQLite state where another owner (id 77) holds a claim on `key`, first seen on Monday at other-run:5.
    static func claimedByAnother(_ path: String, key: String, host: String, pid: Int64, leaseUntil: Int64) throws {
        let connection = try SQLiteConnection(path: path, readOnly: false)
        connection.setBusyTimeout(milliseconds: 5000)
        try connection.execute("""
            INSERT INTO owners (id, host, pid, lease_until) VALUES (77, '\(host)', \(pid), \(leaseUntil));
            INSERT INTO postbacks (key, first_seen, source, line)
                VALUES ('\(key)', \(Self.monday.millisecondsSince1970), 'other-run', 5);
            INSERT INTO claims (lo, hi, owner) SELECT id, id, 77 FROM postbacks WHERE key = '\(key)';
            """)
    }

    /// A claim on `key` (first seen on Monday at other-run:5) held at `location` by a live owner of `other`'s kind,
    /// which `end()` makes go the way `other` says. The state's schema must be there (a store opened on it).
    static func claimByAnother(_ other: OtherOwner, key: String, at location: String) throws -> HeldClaim {
        let leaseEnds = Date().addingTimeInterval(otherLease)
        let waitForLease = { Thread.sleep(until: leaseEnds.addingTimeInterval(0.3)) }
        switch (other.kind, other.ending) {
        case (.sqlite, .processExits):
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/sleep")
            process.arguments = ["60"]
            try process.run()
            try claimedByAnother(location, key: key, host: DeduplicationOwner.thisHost,
                                 pid: Int64(process.processIdentifier),
                                 leaseUntil: Date().millisecondsSince1970 + 3_600_000)
            // Killed as with kill -9 (a signal it cannot block), and reaped, so that no zombie answers for it.
            return HeldClaim(keptAlive: [process]) {
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
            }
        case (.sqlite, .leaseRunsOut):
            try claimedByAnother(location, key: key, host: "elsewhere", pid: 1,
                                 leaseUntil: leaseEnds.millisecondsSince1970)
            return HeldClaim(keptAlive: [], end: waitForLease)
        case (.postgres, .processExits):
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/sleep")
            process.arguments = ["60"]
            try process.run()
            let live = try PostgresConnection(try PostgresConnectionString(location)) { _ in }
            let now = "(extract(epoch FROM now()) * 1000)::bigint"
            try live.execute("INSERT INTO postback_verify.owners VALUES (77, $1, $2, \(now) + 3600000)",
                             [.text(DeduplicationOwner.thisHost), .int64(Int64(process.processIdentifier))])
            try live.execute("INSERT INTO postback_verify.claims VALUES (1, 77, \(now))")
            try live.execute("INSERT INTO postback_verify.postbacks (key, first_seen, source, line, claim) "
                             + "VALUES ('\(key)'::bytea, \(monday.millisecondsSince1970), 'other-run', 5, 1)")
            // Killed as with kill -9, and reaped: its connection may stay, its lease runs, but it is gone.
            return HeldClaim(keptAlive: [process, live]) {
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
            }
        case (.postgres, .leaseRunsOut):
            // A hung owner: its connection is open, but its lease is not renewed.
            let hung = try PostgresConnection(try PostgresConnectionString(location)) { _ in }
            try hung.execute("INSERT INTO postback_verify.owners VALUES (77, 'elsewhere', 1, "
                             + "(extract(epoch FROM now()) * 1000)::bigint + \(Int(otherLease * 1000)))")
            try hung.execute("INSERT INTO postback_verify.claims VALUES (1, 77, "
                             + "(extract(epoch FROM now()) * 1000)::bigint)")
            try hung.execute("INSERT INTO postback_verify.postbacks (key, first_seen, source, line, claim) "
                             + "VALUES ('\(key)'::bytea, \(monday.millisecondsSince1970), 'other-run', 5, 1)")
            return HeldClaim(keptAlive: [hung], end: waitForLease)
        default:
            throw UnknownStore()
        }
    }

    @Test("""
        Regression: another owner's live claim makes a sighting its pending duplicate (confirming it there changes \
        nothing); once that owner is gone, the next sighting takes the claim over and is first seen
        """, arguments: otherOwners)
    func otherOwnersClaim(_ other: OtherOwner) throws {
        let location = try #require(try Self.location(other.kind))
        let store = try Self.store(other.kind, at: location)
        let held = try Self.claimByAnother(other, key: "D", at: location)
        let pending = DeduplicationAnswer.duplicate(of: DuplicateReference(
            source: "other-run", line: 5, firstSeen: Self.monday, isPending: true))
        #expect(try store.claim([Self.sighting("D", "mine", 9)], at: Self.monday) == [pending])
        try store.confirm([ExactString("D")])  // not its claim: left alone
        #expect(try store.claim([Self.sighting("D", "mine", 9)], at: Self.monday) == [pending])

        try held.end()
        #expect(try store.claim([Self.sighting("D", "mine", 9)], at: Self.monday) == [.firstSeen])
        try store.confirm([ExactString("D")])
        #expect(try store.claimAndConfirm(Self.sighting("D", "later", 1), at: Self.monday).duplicateOf?.source
                == "mine")
        withExtendedLifetime(held.keptAlive) {}
    }

    @Test("Regression: taking over one claim of a dead owner's batch leaves the others to be taken over too")
    func deadOwnersBatch() throws {
        let path = try Self.temporaryPath()
        let store = try SQLiteDeduplicationStore(path: path)
        let connection = try SQLiteConnection(path: path, readOnly: false)
        connection.setBusyTimeout(milliseconds: 5000)
        let seen = Self.monday.millisecondsSince1970
        try connection.execute("""
            INSERT INTO owners (id, host, pid, lease_until) VALUES (5, 'elsewhere', 1, 1), (6, 'elsewhere', 1, \(
                Date().millisecondsSince1970 + 3_600_000));
            INSERT INTO postbacks (id, key, first_seen, source, line) VALUES (10, 'D1', \(seen), 'dead', 1),
                (11, 'D2', \(seen), 'dead', 2), (12, 'D3', \(seen), 'dead', 3), (13, 'L1', \(seen), 'live', 1),
                (14, 'L2', \(seen), 'live', 2);
            INSERT INTO claims (lo, hi, owner) VALUES (10, 12, 5), (13, 14, 6);
            """)
        #expect(try store.claim([Self.sighting("D2", "mine", 1)], at: Self.monday) == [.firstSeen])
        let rest = try store.claim(["D1", "D3", "L1", "L2", "D2"].map { Self.sighting($0, "mine", 2) },
                                   at: Self.monday)
        #expect(rest.map { $0.duplicateOf?.source } == [nil, nil, "live", "live", "mine"])
        #expect(rest.map { $0.duplicateOf?.isPending } == [nil, nil, true, true, true])
    }

    @Test("Regression: an owner stalled longer than its lease keeps its claims (the store's heartbeat renews them)",
          arguments: sharedKinds)
    func heartbeatKeepsClaims(_ kind: Kind) throws {
        let location = try Self.location(kind)
        let stalled = try Self.store(kind, at: location, leaseSeconds: 0.3)
        let other = try Self.store(kind, at: location, leaseSeconds: 0.3)
        #expect(try stalled.claim([Self.sighting("H", "stalled", 1)], at: Self.monday) == [.firstSeen])
        Thread.sleep(forTimeInterval: 1.2)  // four leases without a call from its caller
        #expect(try other.claim([Self.sighting("H", "other", 1)], at: Self.monday).first?.duplicateOf?.isPending
                == true)
    }

    /// How many owners the file or database at `location` lists.
    static func ownerCount(_ kind: Kind, at location: String) throws -> Int64 {
        switch kind {
        case .memory:
            throw UnknownStore()
        case .sqlite:
            let owners = try SQLiteConnection(path: location, readOnly: true).prepare("SELECT count(*) FROM owners")
            try #require(try owners.step())
            return owners.int64(0)
        case .postgres:
            return try TestPostgres.execute("SELECT count(*) FROM postback_verify.owners", on: location).int64(0, 0)
        }
    }

    @Test("Closing a store releases the claims it still holds, and forgets its owner", arguments: sharedKinds)
    func closingReleases(_ kind: Kind) throws {
        let location = try #require(try Self.location(kind))
        do {
            let store = try Self.store(kind, at: location)
            #expect(try store.claim([Self.sighting("Q", "closed", 1)], at: Self.monday) == [.firstSeen])
        }
        let next = try Self.store(kind, at: location)
        #expect(try next.claim([Self.sighting("Q", "next", 1)], at: Self.monday) == [.firstSeen])
        #expect(try Self.count(next) == 1)
        #expect(try Self.ownerCount(kind, at: location) == 1, "only the open store's owner is left")
        #expect(try next.claimAndConfirm(Self.sighting("Q", "later", 2), at: Self.monday).duplicateOf?.source
                == "next")
    }
}
