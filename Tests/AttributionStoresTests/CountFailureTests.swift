import Foundation
import Synchronization
import Testing

@_spi(CommandLine) @_spi(Servers) @_spi(Stores) @testable import Attribution
@_spi(CommandLine) @_spi(Servers) @testable import AttributionStores

/// `PostbackPipeline.count(_:through:at:store:)`, the README's server recipe, when a step fails: through a real
/// store (SQLite; PostgreSQL too where a server can be had) wrapped so that one of its calls fails on demand, and a
/// caller's storage that fails on demand. Apple retries until it is answered: each acknowledged postback must be
/// stored valid exactly once, and no retry may be answered a duplicate of a record nobody stored.
@Suite("count when a step fails: each acknowledged postback counted once")
struct CountFailureTests {
    /// Where a failure is injected.
    enum Failure: String, CaseIterable, Sendable {
        /// The store's claim throws.
        case claim
        /// The caller's storage throws (the release succeeds).
        case store
        /// The store's confirmation throws (the records are stored).
        case confirm
        /// The caller's storage throws and the release throws too, twice.
        case release
        /// The store cannot show that it still holds the claims (its lease could not be renewed).
        case reaffirm
    }

    /// A real store whose claim, confirm or release throws the next `n` times it is asked to (a full disk, a lost
    /// connection). Everything else is the wrapped store's.
    final class FailingStore: DeduplicationStore {
        struct Down: Error {}
        let inner: any DeduplicationStore
        /// How many more times each call fails.
        let failures = Mutex<[Failure: Int]>([:])

        init(_ inner: any DeduplicationStore) {
            self.inner = inner
        }

        func fail(_ step: Failure, times: Int) {
            failures.withLock { $0[step] = times }
        }

        /// Throws when `step` is set to fail, using up one failure.
        private func check(_ step: Failure) throws {
            let fails = failures.withLock { failures -> Bool in
                guard let left = failures[step], left > 0 else { return false }
                failures[step] = left - 1
                return true
            }
            if fails { throw Down() }
        }

        func claim(_ sightings: [PostbackSighting], at time: Date) throws -> [DeduplicationAnswer] {
            try check(.claim)
            return try inner.claim(sightings, at: time)
        }

        func claim(_ sightings: [PostbackSighting], at time: Date, confirming: [ExactString]) throws
            -> [DeduplicationAnswer] {
            try check(.claim)
            if !confirming.isEmpty { try check(.confirm) }
            return try inner.claim(sightings, at: time, confirming: confirming)
        }

        func confirm(_ keys: [ExactString]) throws {
            try check(.confirm)
            try inner.confirm(keys)
        }

        func release(_ keys: [ExactString]) throws {
            try check(.release)
            try inner.release(keys)
        }

        /// Claims another owner took over while this one's lease had lapsed, as `reaffirm` will answer them.
        let takenOver = Mutex<[ExactString: DuplicateReference]>([:])

        func reaffirm(_ keys: [ExactString]) throws -> [ExactString: DuplicateReference] {
            try check(.reaffirm)
            let lost = takenOver.withLock { taken in taken.filter { keys.contains($0.key) } }
            return try inner.reaffirm(keys).merging(lost) { mine, _ in mine }
        }
    }

    /// The caller's storage: records kept only when the step returns, and a switch that makes it throw.
    final class Storage: Sendable {
        struct Full: Error {}
        let records = Mutex<[[String: String]]>([])
        let failing = Mutex(0)

        /// Stores `postbacks`' records (their string members, and whether each is a duplicate), or throws while set
        /// to fail.
        func save(_ postbacks: [VerifiedPostback]) throws {
            let fails = failing.withLock { left -> Bool in
                guard left > 0 else { return false }
                left -= 1
                return true
            }
            if fails { throw Full() }
            let rows = try postbacks.map { postback in
                let object = try JSONSerialization.jsonObject(with: Data(postback.record)) as? [String: Any]
                var row = (object ?? [:]).compactMapValues { $0 as? String }
                row["duplicate"] = postback.isDuplicate ? "yes" : "no"
                return row
            }
            records.withLock { $0 += rows }
        }

        var stored: [[String: String]] { records.withLock { $0 } }
    }

    static func pipeline() throws -> PostbackPipeline {
        let verifier = try FixtureManifest.trusting()
        return PostbackPipeline(keyRing: verifier.keyRing, policy: verifier.policy)
    }

    /// Apple's valid postback, as the body of request `source`.
    static func postback(_ pipeline: PostbackPipeline, source: String) throws -> [VerifiedPostback] {
        let body = try #require(try FixtureManifest.requests().first).body
        let verified = pipeline.verify([(body, source: source)])
        try #require(verified.map(\.verdict) == [.valid])
        return verified
    }

    /// One delivery: `count` (sync or async) through `ledger` into `storage`; true when acknowledged (200).
    static func deliver(_ postbacks: [VerifiedPostback], _ pipeline: PostbackPipeline, _ ledger: ClaimLedger,
                        _ storage: Storage, async: Bool) async -> Result<Void, any Error> {
        do {
            if async {
                try await pipeline.count(postbacks, through: ledger, at: Date()) { postbacks async throws in
                    await Task.yield()
                    try storage.save(postbacks)
                }
            } else {
                try pipeline.count(postbacks, through: ledger, at: Date()) { try storage.save($0) }
            }
            return .success(())
        } catch {
            return .failure(error)
        }
    }

    @Test("""
        Regression: the storing fails and so does the release: count throws, every later count is refused with \
        unavailable while the claim cannot be released, and once it can, Apple's retry is stored valid, never a \
        duplicate of the record nobody stored
        """, arguments: DeduplicationStoreTests.sharedKinds, [false, true])
    func failedReleaseNeverAnswersDuplicateOfNothing(_ kind: DeduplicationStoreTests.Kind, async: Bool) async throws {
        let location = try DeduplicationStoreTests.location(kind)
        let store = FailingStore(try DeduplicationStoreTests.store(kind, at: location))
        let ledger = ClaimLedger(store: store)
        let pipeline = try Self.pipeline()
        let storage = Storage()
        storage.failing.withLock { $0 = 1 }
        store.fail(.release, times: 2)
        let first = await Self.deliver(try Self.postback(pipeline, source: "r1"), pipeline, ledger, storage,
                                       async: async)
        #expect(throws: Storage.Full.self) { try first.get() }
        #expect(ledger.isBlocked, "the claim could not be released: the ledger holds it")

        // Apple's retry while the release still fails: refused (500), not stored as a duplicate.
        let refused = await Self.deliver(try Self.postback(pipeline, source: "r2"), pipeline, ledger, storage,
                                         async: async)
        #expect(throws: AttributionError(.unavailable, "")) { try refused.get() }
        #expect(storage.stored.isEmpty, "nothing stored while the ledger is blocked")
        #expect(ledger.isBlocked)

        // The release succeeds now: the next retry is released first, then first seen, stored valid.
        let retried = await Self.deliver(try Self.postback(pipeline, source: "r3"), pipeline, ledger, storage,
                                         async: async)
        #expect(throws: Never.self) { try retried.get() }
        #expect(!ledger.isBlocked)
        #expect(storage.stored.map { $0["verdict"] } == ["valid"])
        #expect(storage.stored.first?["source"] == "r3")

        // Another owner of the same state (another process) sees it confirmed, a duplicate of r3.
        let other = try DeduplicationStoreTests.store(kind, at: location)
        let sighting = try #require(try Self.postback(pipeline, source: "elsewhere").first?.sighting)
        let answers: [DeduplicationAnswer] = try await other.claim([sighting], at: Date())
        let answer = try #require(answers.first)
        #expect(answer.duplicateOf?.source == "r3" && answer.duplicateOf?.isPending == false)
    }

    @Test("""
        Whichever step fails (the claim, the storing, the confirmation, the release, the reaffirmation), Apple's \
        retries end in one acknowledgement, the postback is stored valid exactly once, and every duplicate names a \
        stored record
        """, arguments: Failure.allCases, [false, true])
    func eachAcknowledgedPostbackCountedOnce(_ failure: Failure, async: Bool) async throws {
        let kind: DeduplicationStoreTests.Kind = DeduplicationStoreTests.sharedKinds.last ?? .sqlite
        let location = try DeduplicationStoreTests.location(kind)
        let store = FailingStore(try DeduplicationStoreTests.store(kind, at: location))
        let ledger = ClaimLedger(store: store)
        let pipeline = try Self.pipeline()
        let storage = Storage()
        switch failure {
        case .claim: store.fail(.claim, times: 1)
        case .store: storage.failing.withLock { $0 = 1 }
        case .confirm: store.fail(.confirm, times: 1)
        case .reaffirm: store.fail(.reaffirm, times: 1)
        case .release:
            storage.failing.withLock { $0 = 1 }
            store.fail(.release, times: 2)
        }
        // Apple retries until it gets a 200 (at most ten sendings), then a replay arrives later.
        var attempts = 0
        var acknowledged = false
        while !acknowledged && attempts < 10 {
            attempts += 1
            let sent = try Self.postback(pipeline, source: "attempt-\(attempts)")
            acknowledged = (try? await Self.deliver(sent, pipeline, ledger, storage, async: async).get()) != nil
        }
        #expect(acknowledged)
        #expect(attempts == (failure == .release ? 3 : 2), "one failed delivery (two while the release fails)")
        let replay = await Self.deliver(try Self.postback(pipeline, source: "replay"), pipeline, ledger, storage,
                                        async: async)
        #expect(throws: Never.self) { try replay.get() }

        let stored = storage.stored
        let valid = stored.filter { $0["verdict"] == "valid" }
        #expect(valid.count == 1, "stored valid exactly once: \(stored)")
        let validSources = Set(valid.compactMap { $0["source"] })
        for record in stored where record["verdict"] != "valid" {
            #expect(record["duplicate"] == "yes")
            #expect(validSources.contains(record["duplicate-of-source"] ?? "-"),
                    "a duplicate of a stored record, never of nothing: \(record)")
        }
        #expect(stored.last?["source"] == "replay" && stored.last?["duplicate-of-source"] != nil)
        #expect(!ledger.isBlocked && !ledger.hasUnconfirmed, "every claim settled")
    }

    @Test("""
        Concurrent counts through one shared ledger (a server's requests, sync and async, some failing to store): \
        each valid postback stored valid exactly once, and every duplicate names a stored record
        """, arguments: DeduplicationStoreTests.sharedKinds)
    func concurrentCountsThroughOneLedger(_ kind: DeduplicationStoreTests.Kind) async throws {
        let location = try DeduplicationStoreTests.location(kind)
        let ledger = ClaimLedger(store: try DeduplicationStoreTests.store(kind, at: location))
        let pipeline = try Self.pipeline()
        let requests = try FixtureManifest.requests()
        let storage = Storage()
        // Every fourth request's storing fails once, as a full disk would: Apple sends it again.
        storage.failing.withLock { $0 = 3 }
        let distinct = Set(pipeline.verify(requests).compactMap { $0.verdict == .valid ? $0.deduplicationKey : nil })
            .count
        try #require(distinct > 1)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for caller in 0..<12 {
                group.addTask {
                    for round in 0..<3 {
                        let request = requests[(caller + round) % requests.count]
                        let sent = pipeline.verify([(request.body, source: "c\(caller)-\(round)")])
                        // Apple retries until answered (a retry racing another request's storing of the same
                        // postback is refused too, and sent again a moment later).
                        for _ in 0..<200 {
                            let delivered = await Self.deliver(sent, pipeline, ledger, storage,
                                                               async: caller % 2 == 0)
                            if (try? delivered.get()) != nil { break }
                            try await Task.sleep(for: .milliseconds(1))
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        let stored = storage.stored
        #expect(stored.count == 36, "every request acknowledged once")
        let valid = stored.filter { $0["verdict"] == "valid" }
        #expect(valid.count == distinct, "each distinct postback stored valid exactly once")
        let validSources = Set(valid.compactMap { $0["source"] })
        let duplicates = stored.filter { $0["duplicate"] == "yes" }
        #expect(!duplicates.isEmpty)
        #expect(duplicates.allSatisfy { validSources.contains($0["duplicate-of-source"] ?? "-") })
        #expect(!ledger.isBlocked && !ledger.hasUnconfirmed)
    }

    @Test("""
        Regression (concurrent count): Apple's retry arriving while another request is storing the postback's first \
        sighting is refused (unavailable), never answered a duplicate of a record whose storing may fail; sent \
        again, it is the duplicate of the stored record, or stored valid when that storing failed
        """, arguments: DeduplicationStoreTests.sharedKinds, [false, true])
    func retryRacingItsFirstStoringIsRefused(_ kind: DeduplicationStoreTests.Kind, firstStores: Bool) async throws {
        let location = try DeduplicationStoreTests.location(kind)
        let ledger = ClaimLedger(store: try DeduplicationStoreTests.store(kind, at: location))
        let pipeline = try Self.pipeline()
        let storage = Storage()
        let first = try Self.postback(pipeline, source: "first")
        let retry = try Self.postback(pipeline, source: "retry")
        let storing = DispatchSemaphore(value: 0)
        let finish = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        let firstAcknowledged = Mutex(false)
        // The first delivery, held in its storing until the test lets it finish (or fail, as a full disk would).
        Thread.detachNewThread {
            do {
                try pipeline.count(first, through: ledger, at: Date()) { (postbacks: [VerifiedPostback]) throws in
                    storing.signal()
                    finish.wait()
                    if !firstStores { throw Storage.Full() }
                    try storage.save(postbacks)
                }
                firstAcknowledged.withLock { $0 = true }
            } catch {
                firstAcknowledged.withLock { $0 = false }
            }
            done.signal()
        }
        storing.wait()
        let racing = await Self.deliver(retry, pipeline, ledger, storage, async: false)
        #expect(throws: AttributionError(.unavailable, "")) { try racing.get() }
        let racingAsync = await Self.deliver(retry, pipeline, ledger, storage, async: true)
        #expect(throws: AttributionError(.unavailable, "")) { try racingAsync.get() }
        #expect(storage.stored.isEmpty, "nothing stored while the first sighting's storing is undecided")
        finish.signal()
        done.wait()
        #expect(firstAcknowledged.withLock { $0 } == firstStores)
        let again = await Self.deliver(retry, pipeline, ledger, storage, async: false)
        #expect(throws: Never.self) { try again.get() }
        if firstStores {
            #expect(storage.stored.map { $0["source"] } == ["first", "retry"])
            #expect(storage.stored.last?["duplicate-of-source"] == "first")
        } else {
            #expect(storage.stored.map { $0["source"] } == ["retry"])
            #expect(storage.stored.first?["verdict"] == "valid" && storage.stored.first?["duplicate"] != "yes")
        }
        #expect(!ledger.isBlocked && !ledger.hasUnconfirmed)
    }

    @Test("""
        A claim another owner took over while this owner's lease had lapsed (reaffirm says so) is stored as a \
        duplicate of that owner's record, never a second valid one, and is not confirmed as this owner's
        """, arguments: DeduplicationStoreTests.sharedKinds, [false, true])
    func takenOverClaimIsDuplicate(_ kind: DeduplicationStoreTests.Kind, async: Bool) async throws {
        let location = try DeduplicationStoreTests.location(kind)
        let store = FailingStore(try DeduplicationStoreTests.store(kind, at: location))
        let ledger = ClaimLedger(store: store)
        let pipeline = try Self.pipeline()
        let storage = Storage()
        let sent = try Self.postback(pipeline, source: "mine")
        let key = try #require(sent.first?.deduplicationKey)
        let theirs = DuplicateReference(source: "their-run", line: 3, firstSeen: Date(), isPending: true)
        store.takenOver.withLock { $0 = [key: theirs] }
        let delivered = await Self.deliver(sent, pipeline, ledger, storage, async: async)
        #expect(throws: Never.self) { try delivered.get() }
        #expect(storage.stored.map { $0["duplicate"] } == ["yes"])
        #expect(storage.stored.first?["duplicate-of-source"] == "their-run")
        #expect(!ledger.hasUnconfirmed)
    }
}
