import Foundation
import Testing

@_spi(CommandLine) @_spi(Servers) @_spi(Stores) @testable import Attribution
@_spi(CommandLine) @_spi(Servers) @testable import AttributionStores

/// The lease renewal failing, through the public API only (issue 31 item 3, the renewal position): a real store
/// (SQLite; PostgreSQL where a server can be had) with a lease of 1 s, whose renewal another process blocks (a
/// `python3` holding SQLite's write lock; a `psql` holding the owner's row), so that every renewal fails for real
/// while the owner's last renewal grows older than the lease minus its margin. Such an owner must refuse to write
/// (reaffirm) or confirm (acknowledge) from its claims; once the renewal succeeds again, Apple's retries end with
/// the postback stored valid exactly once, none lost, and every duplicate naming the stored record.
@Suite("the lease renewal failing: an owner past its margin refuses, nothing counted twice or lost")
struct RenewalFailureTests {
    /// Where the renewal fails.
    enum Position: String, CaseIterable, Sendable {
        /// After the claim, before the records are written: the store's `reaffirm` must refuse.
        case beforeWriting
        /// While the caller stores the records, before their claims are confirmed: `count` must refuse to
        /// acknowledge (its confirmation renews first), and the stored record must stay the one counted.
        case beforeConfirming
    }

    static let lease = 1.0

    /// Another process holding what the store's renewal needs, until ``release()``.
    final class Blocker {
        let process = Process()
        let input = Pipe()
        let output = Pipe()

        /// Where the lock is: a SQLite file's path, a PostgreSQL connection string (nil for SQLite).
        let postgres: String?

        /// Takes the lock, held until ``release()``: SQLite's write lock on the file at `location` (`BEGIN
        /// IMMEDIATE`, until standard input closes), or every owner's row of the PostgreSQL state at `location`
        /// (`FOR UPDATE`, in a transaction that sleeps until its backend is ended). Returns once the lock is held.
        init(_ kind: DeduplicationStoreTests.Kind, at location: String) throws {
            postgres = kind == .sqlite ? nil : location
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            if kind == .sqlite {
                process.arguments = [
                    "python3", "-c",
                    """
                    import sqlite3, sys
                    c = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=10)
                    c.execute("BEGIN IMMEDIATE")
                    print("held", flush=True)
                    sys.stdin.read()
                    c.execute("ROLLBACK")
                    """, location,
                ]
            } else {
                process.arguments = [
                    "psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", location, "-c",
                    "BEGIN; SELECT id FROM postback_verify.owners FOR UPDATE; "
                        + "SELECT pg_sleep(600); COMMIT",
                ]
            }
            process.standardInput = input
            process.standardOutput = output
            // psql's "terminating connection due to administrator command" at the release is expected.
            process.standardError = FileHandle.nullDevice
            try process.run()
            if kind == .sqlite {
                let line = output.fileHandleForReading.availableData
                try #require(String(decoding: line, as: UTF8.self).hasPrefix("held"), "python3 took the lock")
            } else {
                // The statements run in order: once pg_sleep runs, the rows are locked.
                let deadline = Date().addingTimeInterval(60)
                var sleeping = false
                while !sleeping && Date() < deadline {
                    sleeping = try Self.onSleepingBackend("count(*)", at: location) == "1"
                    if !sleeping { Thread.sleep(forTimeInterval: 0.05) }
                }
                try #require(sleeping, "psql took the owners' rows")
            }
        }

        /// Runs `SELECT expression` over the blocker's sleeping backend in the database at `location` (psql's
        /// unaligned output, trimmed).
        static func onSleepingBackend(_ expression: String, at location: String) throws -> String {
            let probe = Process()
            let answer = Pipe()
            probe.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            probe.arguments = [
                "psql", "-X", "-q", "-A", "-t", location, "-c",
                "SELECT \(expression) FROM pg_stat_activity WHERE query LIKE '%pg_sleep(%' "
                    + "AND state = 'active' AND datname = current_database() AND pid <> pg_backend_pid()",
            ]
            probe.standardOutput = answer
            try probe.run()
            let text = String(decoding: answer.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            probe.waitUntilExit()
            return text.trimmingCharacters(in: .whitespacesAndNewlines)
        }

        /// Lets go of the lock at once (SQLite: standard input closed; PostgreSQL: its backend ended) and waits for
        /// the process.
        func release() throws {
            try? input.fileHandleForWriting.close()
            if let postgres {
                _ = try Self.onSleepingBackend("count(pg_terminate_backend(pid))", at: postgres)
            }
            process.waitUntilExit()
        }

        deinit {
            if process.isRunning { try? release() }
        }
    }

    static func store(_ kind: DeduplicationStoreTests.Kind, at location: String) throws -> any DeduplicationStore {
        kind == .sqlite
            ? try SQLiteDeduplicationStore(path: location, leaseSeconds: lease)
            : try PostgreSQLDeduplicationStore(connectionString: location, leaseSeconds: lease)
    }

    static func renewalFailures(_ store: any DeduplicationStore) -> Int {
        (store as? SQLiteDeduplicationStore)?.renewalFailures
            ?? (store as? PostgreSQLDeduplicationStore)?.renewalFailures ?? 0
    }

    @Test("""
        The lease renewal fails past the margin (another process holds what it needs): the owner refuses to write \
        or confirm from its claims; once renewed, the postback is stored valid exactly once, none lost
        """, arguments: DeduplicationStoreTests.sharedKinds, Position.allCases)
    func renewalFailingPastTheMargin(_ kind: DeduplicationStoreTests.Kind, _ position: Position) async throws {
        let location = try #require(try DeduplicationStoreTests.location(kind))
        let owner = try Self.store(kind, at: location)
        let ledger = ClaimLedger(store: owner)
        let pipeline = try CountFailureTests.pipeline()
        let storage = CountFailureTests.Storage()
        let sent = try CountFailureTests.postback(pipeline, source: "first")
        let key = try #require(sent.first?.deduplicationKey)

        switch position {
        case .beforeWriting:
            let answers: [DeduplicationAnswer] = try await owner.claim([try #require(sent.first?.sighting)], at: Date())
            #expect(answers == [.firstSeen])
            let blocker = try Blocker(kind, at: location)
            try await Task.sleep(for: .seconds(1.3 * Self.lease))
            let refused = #expect(throws: AttributionError.self, "stale, and the renewal fails: nothing written") {
                try owner.reaffirm([key])
            }
            #expect(refused?.code == .unavailable)
            #expect(refused?.reason.contains("cannot renew the lease") == true)
            #expect(Self.renewalFailures(owner) >= 1)
            try blocker.release()
            // Renewed: nobody took the claim over meanwhile, so it is still this owner's to write and confirm.
            #expect(try owner.reaffirm([key]).isEmpty)
            try storage.save(sent)
            try await owner.confirm([key])
        case .beforeConfirming:
            // The storing takes long enough for the lease to go stale, while another process holds what the
            // renewal needs: count's confirmation has to renew, and cannot.
            var held: Blocker?
            let first = Result<Void, any Error> {
                try pipeline.count(sent, through: ledger, at: Date()) { postbacks in
                    held = try Blocker(kind, at: location)
                    Thread.sleep(forTimeInterval: 1.3 * Self.lease)
                    try storage.save(postbacks)
                }
            }
            let blocker = try #require(held)
            let refused = #expect(throws: AttributionError.self, "the confirmation cannot renew: no 200") {
                try first.get()
            }
            #expect(refused?.code == .unavailable)
            #expect(storage.stored.count == 1, "the record was stored before the confirmation was refused")
            #expect(ledger.hasUnconfirmed, "its claim is kept, to confirm once renewed")
            // Apple's retry while the renewal still fails: refused too, nothing stored.
            let retry = await CountFailureTests.deliver(try CountFailureTests.postback(pipeline, source: "retry-1"),
                                                        pipeline, ledger, storage, async: true)
            #expect(throws: AttributionError.self) { try retry.get() }
            #expect(storage.stored.count == 1)
            try blocker.release()
        }

        // Apple's next retry, the renewal working again: acknowledged, a duplicate of the stored record.
        let later = await CountFailureTests.deliver(try CountFailureTests.postback(pipeline, source: "retry-2"),
                                                    pipeline, ledger, storage, async: false)
        #expect(throws: Never.self) { try later.get() }
        let stored = storage.stored
        #expect(stored.filter { $0["verdict"] == "valid" }.map { $0["source"] } == ["first"],
                "stored valid exactly once: \(stored)")
        #expect(stored.last?["source"] == "retry-2" && stored.last?["duplicate-of-source"] == "first")
        #expect(!ledger.hasUnconfirmed && !ledger.isBlocked, "every claim settled")

        // Another owner of the same state sees the postback confirmed: a duplicate of the first record.
        let other = try Self.store(kind, at: location)
        let answers: [DeduplicationAnswer] = try await other.claim([try #require(sent.first?.sighting)], at: Date())
        #expect(answers.first?.duplicateOf?.source == "first" && answers.first?.duplicateOf?.isPending == false)
    }
}
