import Foundation
import Synchronization
import Testing

@_spi(CommandLine) @_spi(Servers) @_spi(Stores) @testable import Attribution

/// The library's claim bookkeeping (``ClaimLedger``), which the command line's writer and the receiver's group
/// committer share: a first sighting's claim is confirmed only once its record is stored, with the next claim or on
/// its own; a claim whose record was not stored is released, and one whose release fails holds the next claim
/// back until it is released.
@Suite("Claim ledger: claim, store, confirm")
struct ClaimLedgerTests {
    /// A memory store whose `release` fails while `failing` is set (a full disk, a lost connection).
    final class FlakyStore: DeduplicationStore {
        let store = MemoryDeduplicationStore()
        let failing = Mutex(false)
        let confirmed = Mutex<[[ExactString]]>([])
        struct Failed: Error {}

        func claim(_ sightings: [PostbackSighting], at time: Date) throws -> [DeduplicationAnswer] {
            store.claim(sightings, at: time)
        }

        func confirm(_ keys: [ExactString]) throws {
            confirmed.withLock { $0.append(keys) }
            store.confirm(keys)
        }

        func release(_ keys: [ExactString]) throws {
            if failing.withLock({ $0 }) { throw Failed() }
            store.release(keys)
        }
    }

    static func sighting(_ key: String) -> PostbackSighting {
        PostbackSighting(key: ExactString(key), source: "s", line: 1)
    }

    /// How `store` now answers another sighting of `key`: first seen, pending (a claim held), or confirmed.
    static func state(of key: String, in store: MemoryDeduplicationStore) throws -> String {
        switch store.claim([sighting(key)], at: Date())[0] {
        case .firstSeen:
            store.release([ExactString(key)])
            return "absent"
        case .duplicate(let first):
            return first.isPending ? "pending" : "confirmed"
        }
    }

    @Test("A claim is confirmed only once its record is stored, with the next claim, in the same call")
    func confirmedWhenStored() throws {
        let flaky = FlakyStore()
        let ledger = ClaimLedger(store: flaky)
        #expect(try ledger.claim([Self.sighting("A"), Self.sighting("B")], at: Date()) == [.firstSeen, .firstSeen])
        ledger.written(ExactString("A"), through: 100)
        ledger.written(ExactString("B"), through: 200)
        ledger.stored(through: 150)
        #expect(ledger.storedCount == 1 && ledger.hasUnconfirmed)
        #expect(try Self.state(of: "A", in: flaky.store) == "pending", "stored, not yet confirmed")
        _ = try ledger.claim([Self.sighting("C")], at: Date())
        #expect(flaky.confirmed.withLock { $0 } == [[ExactString("A")]], "A confirmed with C's claim")
        #expect(try Self.state(of: "A", in: flaky.store) == "confirmed")
        #expect(try Self.state(of: "B", in: flaky.store) == "pending", "B's record is not stored yet")
        ledger.stored(through: 200)
        try ledger.confirmStored()
        #expect(try Self.state(of: "B", in: flaky.store) == "confirmed")
        #expect(ledger.storedCount == 0)
        // Nothing stored and nothing to claim: no call at all.
        let calls = flaky.confirmed.withLock { $0.count }
        #expect(try ledger.claim([], at: Date()).isEmpty)
        #expect(flaky.confirmed.withLock { $0.count } == calls)
    }

    @Test("A group stored at once is ready to confirm; the end releases what was never stored")
    func storedGroupsAndEnd() throws {
        let flaky = FlakyStore()
        let ledger = ClaimLedger(store: flaky)
        _ = try ledger.claim([Self.sighting("G1"), Self.sighting("G2")], at: Date())
        ledger.stored([ExactString("G1"), ExactString("G2")])
        #expect(ledger.storedCount == 2)
        try ledger.confirmStored()
        _ = try ledger.claim([Self.sighting("U")], at: Date())
        ledger.written(ExactString("U"), through: 10_000)
        ledger.releaseUnconfirmed()
        #expect(try Self.state(of: "G2", in: flaky.store) == "confirmed")
        #expect(try Self.state(of: "U", in: flaky.store) == "absent", "never stored: released, the retry is first seen")
        #expect(!ledger.hasUnconfirmed)
    }

    @Test("A release that fails is kept: the next claim throws until it succeeds, then claims")
    func failedReleaseHoldsClaims() throws {
        let flaky = FlakyStore()
        let ledger = ClaimLedger(store: flaky)
        _ = try ledger.claim([Self.sighting("R")], at: Date())
        flaky.failing.withLock { $0 = true }
        ledger.release([ExactString("R")])
        #expect(try Self.state(of: "R", in: flaky.store) == "pending", "still held")
        #expect(ledger.isBlocked)
        #expect(throws: AttributionError(.unavailable, "")) { try ledger.claim([Self.sighting("S")], at: Date()) }
        #expect(try Self.state(of: "S", in: flaky.store) == "absent", "a claim that throws claims nothing")
        flaky.failing.withLock { $0 = false }
        #expect(try ledger.claim([Self.sighting("S")], at: Date()) == [.firstSeen])
        #expect(!ledger.isBlocked)
        #expect(try Self.state(of: "R", in: flaky.store) == "absent", "released before the claim")
    }
}
