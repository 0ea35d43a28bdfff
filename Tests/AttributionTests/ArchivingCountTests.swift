@_spi(CommandLine) @_spi(Servers) @_spi(Stores) @testable import Attribution
import Foundation
import Synchronization
import Testing

/// `ClaimLedger.claim(_:at:archiving:appending:)`, the one counting path of a store that archives its callers' rows
/// in its claims' transaction (``ArchivingDeduplicationStore``, PostgreSQL's) and of one whose caller appends them
/// to an archive of its own (SQLite's archive file), when the rows' append or the transaction's commit fails.
/// Public API only. Apple retries until it is answered: each acknowledged postback must be archived first seen
/// exactly once, none lost, and no retry answered a duplicate of a row nobody stored.
@Suite("An archiving store's one transaction, or an archive of the caller's: each acknowledged postback counted once")
struct ArchivingCountTests {
    /// Where the rows' storing fails.
    enum Position: String, CaseIterable, Sendable {
        /// Writing the rows throws.
        case append
        /// The rows were written; the commit throws (nothing of the transaction stays).
        case commit
    }

    /// How the rows are stored.
    enum Path: String, CaseIterable, Sendable {
        /// In the store's own transaction, with the claims and their confirmation.
        case oneTransaction
        /// By the caller, in an archive of its own, after the claims.
        case separateArchive
    }

    struct Down: Error {}

    /// Failures on demand: each step throws the next `n` times it is reached.
    final class Failures: Sendable {
        let left = Mutex<[String: Int]>([:])

        func fail(_ step: String, times: Int) {
            left.withLock { $0[step] = times }
        }

        func check(_ step: String) throws {
            let fails = left.withLock { left -> Bool in
                guard let count = left[step], count > 0 else { return false }
                left[step] = count - 1
                return true
            }
            if fails { throw Down() }
        }
    }

    /// Rows as stored (an archive of the caller's, or the store's table): `key first` or `key duplicate`.
    final class Rows: Sendable {
        let rows = Mutex<[String]>([])
        var all: [String] { rows.withLock { $0 } }
    }

    /// A store in memory whose release fails on demand; the claims' and rows' storage of `Path.separateArchive`.
    final class PlainStore: DeduplicationStore {
        let inner = MemoryDeduplicationStore()
        let failures = Failures()

        func claim(_ sightings: [PostbackSighting], at time: Date) throws -> [DeduplicationAnswer] {
            inner.claim(sightings, at: time)
        }

        func confirm(_ keys: [ExactString]) throws {
            inner.confirm(keys)
        }

        func release(_ keys: [ExactString]) throws {
            try failures.check("release")
            inner.release(keys)
        }
    }

    /// A store in memory that keeps rows and stores them in its claims' transaction (emulated: a failure undoes
    /// the claims and drops the rows), failing on demand where the rows are appended, at the commit, or at a
    /// release.
    final class TransactionalStore: ArchivingDeduplicationStore {
        let plain = PlainStore()
        let table = Rows()

        func claim(_ sightings: [PostbackSighting], at time: Date) throws -> [DeduplicationAnswer] {
            try plain.claim(sightings, at: time)
        }

        func confirm(_ keys: [ExactString]) throws {
            try plain.confirm(keys)
        }

        func release(_ keys: [ExactString]) throws {
            try plain.release(keys)
        }

        func claim(_ sightings: [PostbackSighting], at time: Date, archiving rows: ([DeduplicationAnswer]) -> [String])
            throws -> [DeduplicationAnswer] {
            let answers = plain.inner.claim(sightings, at: time)
            let claimed = Self.claimedKeys(sightings, answers)
            let made = rows(answers)
            do {
                try plain.failures.check(Position.append.rawValue)
                try plain.failures.check(Position.commit.rawValue)
            } catch {
                plain.inner.release(claimed)  // the rollback
                throw error
            }
            plain.inner.confirm(claimed)
            table.rows.withLock { $0 += made }
            return answers
        }
    }

    /// A ledger over the path's store, where the rows end up, and the store's failures.
    struct Setup {
        let ledger: ClaimLedger
        let rows: Rows
        let failures: Failures
        let memory: MemoryDeduplicationStore
        /// The caller's archive (`Path.separateArchive`; it fails where the store would).
        let append: ([String]) throws -> Void

        init(_ path: Path) {
            switch path {
            case .oneTransaction:
                let store = TransactionalStore()
                ledger = ClaimLedger(store: store)
                rows = store.table
                failures = store.plain.failures
                memory = store.plain.inner
                append = { _ in Issue.record("the store archives: nothing is appended") }
            case .separateArchive:
                let store = PlainStore()
                let rows = Rows()
                let failures = store.failures
                ledger = ClaimLedger(store: store)
                self.rows = rows
                self.failures = failures
                memory = store.inner
                append = { made in
                    try failures.check(Position.append.rawValue)
                    try failures.check(Position.commit.rawValue)
                    rows.rows.withLock { $0 += made }
                }
            }
        }

        /// One delivery of a group: true when acknowledged (200). The receiver confirms what it stored a moment
        /// later when no group follows.
        func deliver(_ keys: [String]) -> Result<[DeduplicationAnswer], any Error> {
            let sightings = keys.map { PostbackSighting(key: ExactString($0), source: $0, line: 1) }
            let result = Result {
                try ledger.claim(sightings, at: Date(), archiving: { answers in
                    zip(keys, answers).map { "\($0) \($1 == .firstSeen ? "first" : "duplicate")" }
                }, appending: append)
            }
            try? ledger.confirmStored()
            return result
        }
    }

    @Test("""
        The rows' append or the commit fails: Apple's retries end in acknowledgements, and each postback is \
        stored first seen exactly once, none lost, every duplicate after its first row
        """, arguments: Path.allCases, Position.allCases)
    func eachAcknowledgedPostbackCountedOnce(_ path: Path, _ position: Position) throws {
        let setup = Setup(path)
        setup.failures.fail(position.rawValue, times: 2)
        var unacknowledged = ["p0", "p1", "p2", "p3"]
        var acknowledged: [String] = []
        var deliveries = 0
        while !unacknowledged.isEmpty && deliveries < 10 {
            deliveries += 1
            // The group: what is still owed, and a replay of something acknowledged.
            let group = unacknowledged + acknowledged.prefix(1)
            if case .success = setup.deliver(group) {
                acknowledged += unacknowledged
                unacknowledged = []
            }
        }
        #expect(unacknowledged.isEmpty)
        #expect(deliveries == 3, "two failed deliveries, then one acknowledged")
        let later = try setup.deliver(["p0", "p4"]).get()
        #expect(later.map { $0 == .firstSeen } == [false, true], "a replay is a duplicate, a new postback first seen")
        let rows = setup.rows.all
        for key in ["p0", "p1", "p2", "p3", "p4"] {
            let mine = rows.filter { $0.hasPrefix(key + " ") }
            #expect(mine.filter { $0.hasSuffix(" first") }.count == 1, "\(key) stored first seen once: \(rows)")
            #expect(mine.first == "\(key) first", "no duplicate before its first row: \(rows)")
        }
        #expect(rows.count == 6, "4 first, then p0's replay and p4: \(rows)")
        #expect(!setup.ledger.isBlocked && !setup.ledger.hasUnconfirmed, "every claim settled")
    }

    @Test("""
        A failed release blocks: while claims of rows not stored cannot be released, every count that claims \
        throws and claims and stores nothing; once released, the retry is first seen
        """, arguments: Path.allCases)
    func failedReleaseBlocks(_ path: Path) throws {
        let setup = Setup(path)
        setup.failures.fail("release", times: 2)
        switch path {
        case .separateArchive:
            // The rows cannot be stored: their claims are released, which fails (and again before the next claim).
            setup.failures.fail(Position.append.rawValue, times: 1)
            #expect(throws: Down.self) { try setup.deliver(["p0"]).get() }
        case .oneTransaction:
            // A claim the caller could not store through the store's transaction (its own writing failed): the
            // ledger's release fails.
            let sighting = PostbackSighting(key: ExactString("p0"), source: "p0", line: 1)
            #expect(try setup.ledger.claim([sighting], at: Date()) == [.firstSeen])
            setup.ledger.release([sighting.key])
        }
        #expect(setup.ledger.isBlocked)
        let claimed = setup.memory.count
        let blocked = setup.deliver(["p0", "p1"])
        #expect(throws: AttributionError.self) { try blocked.get() }
        #expect((blocked.failureError as? AttributionError)?.code == .unavailable)
        #expect(setup.memory.count == claimed, "nothing claimed while blocked")
        #expect(setup.rows.all.isEmpty, "nothing stored while blocked")
        #expect(setup.ledger.isBlocked)
        // The release succeeds now: the retry is first seen, never a duplicate of a row nobody stored.
        #expect(try setup.deliver(["p0", "p1"]).get() == [.firstSeen, .firstSeen])
        #expect(setup.rows.all == ["p0 first", "p1 first"])
        #expect(!setup.ledger.isBlocked && !setup.ledger.hasUnconfirmed)
    }
}

extension Result {
    /// The error of a failure; nil for a success.
    fileprivate var failureError: Failure? {
        if case .failure(let error) = self { error } else { nil }
    }
}
