#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Foundation
import Testing
@_spi(CommandLine) @_spi(Servers) @_spi(Stores) @testable import Attribution
@_spi(CommandLine) @_spi(Servers) @testable import AttributionStores

/// The lease an owner holds its claims by (issue 31, item 2): renewed on a connection of its own that no claim
/// holds up, never lost to a dropped connection within the lease, and never trusted past the lease minus its
/// margin: an owner that cannot renew confirms nothing, and one whose lease lapsed finds the claims taken over
/// meanwhile and answers them as the other owner's duplicates. Real stores, real locks, short leases.
extension DeduplicationStoreTests {
    /// Holds `store`'s lock for `seconds` on another thread, as a slow claim would; returns what to wait on.
    static func holdLock(of store: any DeduplicationStore, for seconds: Double) -> DispatchSemaphore {
        let done = DispatchSemaphore(value: 0)
        let hold: @Sendable () -> Void = {
            switch store {
            case let file as SQLiteDeduplicationStore: file.holdingLock(for: seconds)
            case let database as PostgreSQLDeduplicationStore: database.holdingLock(for: seconds)
            default: break
            }
            done.signal()
        }
        Thread.detachNewThread(hold)
        return done
    }

    /// How many renewals of `store`'s lease failed.
    static func renewalFailures(_ store: any DeduplicationStore) -> Int? {
        switch store {
        case let file as SQLiteDeduplicationStore: file.renewalFailures
        case let database as PostgreSQLDeduplicationStore: database.renewalFailures
        default: nil
        }
    }

    /// The owners the state at `location` lists: each one's id and how many milliseconds its lease has left (by
    /// this machine's clock, which a test server shares).
    static func leasesLeft(_ kind: Kind, at location: String) throws -> [Int64: Int64] {
        let now = Date().millisecondsSince1970
        var left: [Int64: Int64] = [:]
        if kind == .sqlite {
            let owners = try SQLiteConnection(path: location, readOnly: true)
                .prepare("SELECT id, lease_until FROM owners")
            while try owners.step() { left[owners.int64(0)] = owners.int64(1) - now }
        } else {
            let owners = try TestPostgres.execute("SELECT id, lease_until FROM postback_verify.owners", on: location)
            for row in 0..<owners.rowCount { left[owners.int64(row, 0)] = owners.int64(row, 1) - now }
        }
        return left
    }

    @Test("""
        Regression: a claim held up longer than three leases holds up no renewal: the heartbeat, on its own \
        connection, keeps the claims the owner's (another owner cannot take them), and the owner confirms after
        """, arguments: sharedKinds)
    func slowClaimHoldsUpNoRenewal(_ kind: Kind) throws {
        let location = try #require(try Self.location(kind))
        let lease = 1.0
        let slow = try Self.store(kind, at: location, leaseSeconds: lease)
        let other = try Self.store(kind, at: location, leaseSeconds: lease)
        #expect(try slow.claim([Self.sighting("S", "slow", 1)], at: Self.monday) == [.firstSeen])
        let owner = try #require(try Self.leasesLeft(kind, at: location).keys.first)
        let held = Self.holdLock(of: slow, for: 3 * lease)
        // Renewals at most a third of the lease apart: the lease never has less than two thirds left (less some
        // slack for a busy machine), sampled every 20 ms for two leases while the store's lock is held.
        var least = Int64.max
        let sampling = Date().addingTimeInterval(2 * lease)
        while Date() < sampling {
            least = min(least, try #require(try Self.leasesLeft(kind, at: location)[owner]))
            Thread.sleep(forTimeInterval: 0.02)
        }
        #expect(least > Int64(lease * 1000) / 2, "least lease left: \(least) ms of \(Int(lease * 1000))")
        print("\(kind): least lease left while the lock was held: \(least) ms of \(Int(lease * 1000)) ms")
        let meanwhile = try other.claim([Self.sighting("S", "other", 1)], at: Self.monday)
        #expect(meanwhile.first?.duplicateOf?.source == "slow", "still the slow owner's claim")
        #expect(meanwhile.first?.duplicateOf?.isPending == true)
        held.wait()
        try slow.confirm([ExactString("S")])
        try slow.probe()  // PostgreSQL's confirm, sent without waiting, is done
        let after = try other.claim([Self.sighting("S", "other", 2)], at: Self.monday)
        #expect(after.first?.duplicateOf?.source == "slow")
        #expect(after.first?.duplicateOf?.isPending == false, "confirmed by its owner")
        #expect(Self.renewalFailures(slow) == 0)
    }

    /// Another connection to the state at `location` that holds what `kind`'s lease renewal needs (SQLite: the
    /// write lock; PostgreSQL: the owner's row), and can take a claim over before letting go.
    final class RenewalBlocker {
        /// The store's kind.
        let kind: Kind
        /// SQLite: the connection holding the write lock.
        let sqlite: SQLiteConnection?
        /// PostgreSQL: the connection holding the owner's row.
        let postgres: PostgresConnection?
        /// The blocked owner's id (the only owner the state lists).
        let owner: Int64

        /// Takes what the renewal needs, in a transaction left open.
        init(_ kind: Kind, at location: String) throws {
            self.kind = kind
            if kind == .sqlite {
                let connection = try SQLiteConnection(path: location, readOnly: false)
                connection.setBusyTimeout(milliseconds: 5000)
                try connection.execute("BEGIN IMMEDIATE")
                let owners = try connection.prepare("SELECT id FROM owners")
                try #require(try owners.step())
                owner = owners.int64(0)
                sqlite = connection
                postgres = nil
            } else {
                let connection = try PostgresConnection(try PostgresConnectionString(location)) { _ in }
                try connection.execute("BEGIN")
                owner = try connection.execute("SELECT id FROM postback_verify.owners FOR UPDATE").int64(0, 0)
                postgres = connection
                sqlite = nil
            }
        }

        /// Gives `key`'s claim to another, live owner (id 77, on another machine, at other-run:5), then lets go.
        func takeOverAndCommit(_ key: String) throws {
            if let sqlite {
                try sqlite.execute("""
                    DELETE FROM claims WHERE owner = \(owner);
                    INSERT INTO claims SELECT id, id, \(owner) FROM postbacks WHERE key <> '\(key)';
                    INSERT INTO claims SELECT id, id, 77 FROM postbacks WHERE key = '\(key)';
                    INSERT INTO owners VALUES (77, 'elsewhere', 1, \(Date().millisecondsSince1970 + 3_600_000));
                    UPDATE postbacks SET source = 'other-run', line = 5 WHERE key = '\(key)';
                    COMMIT
                    """)
            } else if let postgres {
                let now = "(extract(epoch FROM now()) * 1000)::bigint"
                try postgres.execute(
                    "INSERT INTO postback_verify.owners VALUES (77, 'elsewhere', 1, \(now) + 3600000)")
                try postgres.execute("INSERT INTO postback_verify.claims VALUES (9, 77, \(now))")
                try postgres.execute("UPDATE postback_verify.postbacks SET claim = 9, source = 'other-run', line = 5 "
                                     + "WHERE key = '\(key)'::bytea")
                try postgres.execute("COMMIT")
            }
        }
    }

    @Test("""
        Regression: an owner that cannot renew its lease (another connection holds what the renewal needs) \
        confirms nothing past the lease minus its margin, and counts the failures; once it renews, a claim taken \
        over meanwhile is the other owner's duplicate, and the rest are confirmed
        """, arguments: sharedKinds)
    func staleOwnerRefusesToConfirm(_ kind: Kind) throws {
        let location = try #require(try Self.location(kind))
        let lease = 1.0
        let owner = try Self.store(kind, at: location, leaseSeconds: lease)
        #expect(try owner.claim([Self.sighting("T", "mine", 1), Self.sighting("U", "mine", 2)], at: Self.monday)
                == [.firstSeen, .firstSeen])
        let blocker = try RenewalBlocker(kind, at: location)
        Thread.sleep(forTimeInterval: 1.3 * lease)
        let started = ContinuousClock.now
        let refused = #expect(throws: AttributionError.self) {
            try owner.confirm([ExactString("T"), ExactString("U")])
        }
        #expect(refused?.code == .unavailable)
        #expect(refused?.reason.contains("cannot renew the lease") == true)
        #expect(ContinuousClock.now - started < .seconds(5), "refused at once, not after a 60 s wait")
        #expect((Self.renewalFailures(owner) ?? 0) >= 2, "the heartbeat's failures, and the confirm's own")

        try blocker.takeOverAndCommit("T")
        let lost = try owner.reaffirm([ExactString("T"), ExactString("U")])
        #expect(lost.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) } == [ExactString("T")])
        #expect(lost[ExactString("T")]?.source == "other-run")
        #expect(lost[ExactString("T")]?.isPending == true)
        try owner.confirm([ExactString("T"), ExactString("U")])
        try owner.probe()  // PostgreSQL's confirm, sent without waiting, is done

        let later = try Self.store(kind, at: location, leaseSeconds: lease)
        let answers = try later.claim([Self.sighting("T", "later", 1), Self.sighting("U", "later", 2)],
                                      at: Self.monday)
        #expect(answers.map { $0.duplicateOf?.source } == ["other-run", "mine"])
        #expect(answers.map { $0.duplicateOf?.isPending } == [true, false], "T still the other's; U confirmed")
        withExtendedLifetime(blocker) {}
    }

    /// The statement of the owner's that waits on a row another connection holds.
    enum WaitingStatement: String, CaseIterable, Sendable {
        /// A claim of a key another connection holds.
        case claim
        /// A confirm of part of a call (sent without waiting), one of whose rows another connection holds.
        case confirm
    }

    @Test("""
        Regression: a PostgreSQL claim or confirm statement waiting three leases on a row another connection holds \
        holds up no renewal (neither locks nor renews the owner's row): the owner's other claims stay its own
        """, .enabled(if: TestPostgres.enabled), arguments: WaitingStatement.allCases)
    func slowStatementHoldsUpNoRenewal(_ waiting: WaitingStatement) throws {
        let location = try TestPostgres.database()
        let lease = 1.0
        let owner = try PostgreSQLDeduplicationStore(connectionString: location, leaseSeconds: lease)
        let other = try PostgreSQLDeduplicationStore(connectionString: location, leaseSeconds: lease)
        #expect(try owner.claim([Self.sighting("S", "owner", 1), Self.sighting("P", "owner", 2)], at: Self.monday)
                == [.firstSeen, .firstSeen])
        #expect(try other.claim([Self.sighting("X", "other", 1)], at: Self.monday) == [.firstSeen])
        let held = waiting == .claim ? "X" : "P"
        let holder = try PostgresConnection(try PostgresConnectionString(location)) { _ in }
        try holder.execute("BEGIN")
        try holder.execute("SELECT 1 FROM postback_verify.postbacks WHERE key = '\(held)'::bytea FOR UPDATE")
        let done = DispatchSemaphore(value: 0)
        let answer = Locked<[DeduplicationAnswer]?>(nil)
        if waiting == .claim {
            Thread.detachNewThread {
                let answers = try? owner.claim([Self.sighting("X", "owner", 3)], at: Self.monday)
                answer.withLock { $0 = answers }
                done.signal()
            }
        } else {
            try owner.confirm([ExactString("P")])  // sent; the server waits on P's row
        }
        Thread.sleep(forTimeInterval: 3 * lease)
        let meanwhile = try other.claim([Self.sighting("S", "other", 2)], at: Self.monday)
        #expect(meanwhile.first?.duplicateOf?.source == "owner", "the waiting owner's claim on S is still its own")
        #expect(meanwhile.first?.duplicateOf?.isPending == true)
        try holder.execute("ROLLBACK")
        if waiting == .claim {
            done.wait()
            #expect(answer.withLock { $0 }?.first?.duplicateOf?.source == "other", "X: the other's pending claim")
        } else {
            try owner.probe()  // the confirm is done
            let confirmed = try other.claim([Self.sighting("P", "other", 3)], at: Self.monday)
            #expect(confirmed.first?.duplicateOf?.source == "owner")
            #expect(confirmed.first?.duplicateOf?.isPending == false)
        }
        #expect(owner.renewalFailures == 0)
    }

    @Test("""
        Regression: a run whose PostgreSQL connections are cut (pg_terminate_backend) keeps its claims within \
        its lease: another owner cannot take them, the run reconnects and confirms, each key is counted once
        """, .enabled(if: TestPostgres.enabled))
    func cutConnectionKeepsClaims() throws {
        let location = try TestPostgres.database()
        let keys = (0..<256).map { "cut-\($0)" }
        let first = try PostgreSQLDeduplicationStore(connectionString: location, leaseSeconds: 20)
        let claimed = try first.claim(keys.map { Self.sighting($0, "first", 1) }, at: Self.monday)
        #expect(claimed.allSatisfy { $0 == .firstSeen })
        Thread.sleep(forTimeInterval: 20.0 / 6 + 0.5)  // the heartbeat's connection opened too
        let others = "FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
        let cut = try TestPostgres.execute("SELECT pg_terminate_backend(pid) \(others)", on: location)
        #expect(cut.rowCount == 2, "the store's connection and its heartbeat's")
        for _ in 0..<100 where try TestPostgres.execute("SELECT count(*) \(others)", on: location).int64(0, 0) > 0 {
            Thread.sleep(forTimeInterval: 0.05)
        }

        let second = try PostgreSQLDeduplicationStore(connectionString: location, leaseSeconds: 20)
        let meanwhile = try second.claim(keys.map { Self.sighting($0, "second", 2) }, at: Self.monday)
        #expect(meanwhile.allSatisfy { $0.duplicateOf?.source == "first" && $0.duplicateOf?.isPending == true },
                "a lost connection is not death: the claims stay the first run's")
        try first.confirm(keys.map { ExactString($0) })
        try first.probe()  // the confirm, sent without waiting, is done
        let after = try second.claim(keys.map { Self.sighting($0, "second", 3) }, at: Self.monday)
        #expect(after.allSatisfy { $0.duplicateOf?.source == "first" && $0.duplicateOf?.isPending == false })
        #expect(try Self.count(second) == keys.count)
        #expect(first.renewalFailures == 0, "a dropped connection made again at once is no failed renewal")
    }
}

/// The library's pipeline (``PostbackPipeline``) counting through a SQLite or PostgreSQL store whose lease lapses.
@Suite("Postback pipeline: counting through a store")
struct PostbackPipelineStoreTests {
    @Test("""
        Regression: a batch claimed before its run's lease lapsed is written with the claims it still holds: \
        nothing while the lease cannot be renewed, then the item another owner took over meanwhile as that owner's \
        duplicate, the others as first seen
        """, arguments: DeduplicationStoreTests.sharedKinds)
    func takenOverClaimIsWrittenAsDuplicate(_ kind: DeduplicationStoreTests.Kind) throws {
        let verifier = try FixtureManifest.trusting()
        let pipeline = PostbackPipeline(keyRing: verifier.keyRing, policy: verifier.policy,
                                        records: .jsonLines(explain: false, fastPath: true))
        let batch = VerifiedBatch(items: try FixtureManifest.requests().map {
            InputItem(source: $0.source, line: 1, content: .bytes(ArraySlice($0.body)))
        })
        pipeline.steps.finish(batch)
        let location = try #require(try DeduplicationStoreTests.location(kind))
        let store = try DeduplicationStoreTests.store(kind, at: location, leaseSeconds: 1)
        let ledger = ClaimLedger(store: store)
        let answers = try pipeline.claim([batch], through: ledger, at: DeduplicationStoreTests.monday)[0]
        var firsts: [(index: Int, key: ExactString)] = []
        for (index, answer) in answers.enumerated() {
            if case .first(let key) = answer { firsts.append((index, key)) }
        }
        try #require(firsts.count >= 2)
        let taken = firsts[0]

        let blocker = try DeduplicationStoreTests.RenewalBlocker(kind, at: location)
        Thread.sleep(forTimeInterval: 1.3)
        #expect(throws: AttributionError.self, "stale, and cannot renew: nothing is written") {
            try pipeline.reaffirm(batch, answers, through: ledger)
        }
        try blocker.takeOverAndCommit(taken.key.description)
        let written = try pipeline.reaffirm(batch, answers, through: ledger)
        guard case .duplicate(let reference, _) = written[taken.index] else {
            Issue.record("the item taken over is not a duplicate: \(written[taken.index])")
            return
        }
        #expect(reference.source == "other-run" && reference.line == 5 && reference.isPending)
        for other in firsts.dropFirst() {
            guard case .first(let key) = written[other.index] else {
                Issue.record("item \(other.index), still this run's claim, is not first seen")
                continue
            }
            #expect(key == other.key)
        }
        pipeline.mark(batch, written, keepingTime: true)
        let record = String(decoding: batch.records[taken.index], as: UTF8.self)
        #expect(record.contains("\"duplicate-of-source\":\"other-run\""), "\(record)")
    }
}
