import Foundation
import Testing

@_spi(CommandLine) @_spi(Servers) @_spi(Stores) @testable import Attribution

/// The library's one pipeline (``PostbackPipeline``), as the receiver and a user's server call it: each body's
/// record and facts are the general path's, whichever path decided it, and counting marks a repeat a duplicate
/// of the first request and releases what was not stored.
@Suite("Postback pipeline: verify and count")
struct PostbackPipelineTests {

    @Test("Each body's record, verdict, facts, key and unsigned members are the general path's, on either path",
          arguments: [true, false])
    func sameAsGeneralPath(fastPath: Bool) throws {
        let verifier = try FixtureManifest.trusting()
        let pipeline = PostbackPipeline(keyRing: verifier.keyRing, policy: verifier.policy, fastPath: fastPath)
        let requests = try FixtureManifest.requests()
        let verified = pipeline.verify(requests)
        try #require(verified.count == requests.count)
        for (postback, request) in zip(verified, requests) {
            let result = verifier.verify(request.body)
            #expect(postback.record == JSONLinesRecord.render(result, sourceLabel: request.source), "\(request.source)")
            #expect(postback.source == request.source && postback.line == 1)
            #expect(postback.verdict == result.verdict)
            #expect(postback.kind == result.kind)
            #expect(postback.environment == result.environment)
            #expect(postback.facts == ConversionFacts(result))
            #expect(postback.deduplicationKey == result.deduplicationKey)
            #expect(postback.unsignedMembers == result.unsigned)
            #expect(postback.sighting?.key == PostbackSighting(result, source: request.source, line: 1)?.key)
            #expect(postback.sighting?.content == PostbackSighting(result, source: request.source, line: 1)?.content)
        }
        // The fast path took the usual valid postbacks (no general result), and only when it is on.
        #expect(verified.contains { $0.isFastPathDecided } == fastPath)
        #expect(verified.filter { $0.verdict == .valid }.count == 6)
    }

    @Test("count: within a group and across groups, a repeat is a duplicate of the first request, as the general path words it")
    func duplicatesMarked() throws {
        let verifier = try FixtureManifest.trusting()
        let pipeline = PostbackPipeline(keyRing: verifier.keyRing, policy: verifier.policy)
        let store = MemoryDeduplicationStore()
        let requests = try FixtureManifest.requests()
        let time = Date(timeIntervalSince1970: 1_795_305_600)
        let ledger = ClaimLedger(store: store)
        let stored = try pipeline.count(pipeline.verify(requests), through: ledger, at: time) { $0 }
        // The general path's results marked by the same store's answers, in a store of their own.
        let reference = MemoryDeduplicationStore()
        var expected: [[UInt8]] = []
        for request in requests {
            var result = verifier.verify(request.body)
            if let sighting = PostbackSighting(result, source: request.source, line: 1),
               let first = reference.claim([sighting], at: time)[0].duplicateOf {
                result.markDuplicate(of: first, content: sighting.content)
            }
            expected.append(JSONLinesRecord.render(result, sourceLabel: request.source))
        }
        #expect(stored.map(\.record) == expected)
        #expect(stored.map(\.isDuplicate) == [false, true, true, false, false, true, false])
        #expect(stored.filter(\.isDuplicate).allSatisfy { $0.facts == nil && $0.sighting == nil })
        // The typed status says the same: valid with its facts, a duplicate naming the first request, a forgery's
        // error.
        for postback in stored {
            switch postback.status {
            case .valid(let facts):
                #expect(postback.verdict == .valid && facts != nil && facts == postback.facts)
            case .duplicate(let first):
                #expect(postback.isDuplicate && first.source.hasPrefix("request-"))
            case .invalid(let error):
                #expect(postback.verdict == .invalid && !postback.isDuplicate && error.code == .badSignature)
            }
        }
        // Changed content (D2) is named.
        #expect(stored[2].duplicateDifferences?.unsignedMembers == ["conversion-value"])
        // A later group: every valid one is now a duplicate of the first group's request.
        let later = try pipeline.count(pipeline.verify([requests[0]]), through: ledger, at: time) { $0 }
        let record = try #require(try JSONSerialization.jsonObject(with: Data(later[0].record)) as? [String: Any])
        #expect(record["duplicate-of-source"] as? String == "request-1")
    }

    @Test("count: when storing fails the claims are released, so the retry is first seen; nothing is confirmed")
    func failedStoreReleases() throws {
        struct Full: Error {}
        let verifier = try FixtureManifest.trusting()
        let pipeline = PostbackPipeline(keyRing: verifier.keyRing, policy: verifier.policy)
        let ledger = ClaimLedger(store: MemoryDeduplicationStore())
        let requests = Array(try FixtureManifest.requests().prefix(1))
        #expect(throws: Full.self) {
            try pipeline.count(pipeline.verify(requests), through: ledger, at: Date()) { _ in throw Full() }
        }
        let retry = try pipeline.count(pipeline.verify(requests), through: ledger, at: Date()) { $0 }
        #expect(retry.map(\.verdict) == [.valid])
    }
}

extension PostbackPipelineTests {
    @Test("count from async code answers as the synchronous count does, and releases when storing fails")
    func asyncCount() async throws {
        struct Full: Error {}
        let verifier = try FixtureManifest.trusting()
        let pipeline = PostbackPipeline(keyRing: verifier.keyRing, policy: verifier.policy)
        let requests = try FixtureManifest.requests()
        let time = Date(timeIntervalSince1970: 1_795_305_600)
        let fresh = ClaimLedger(store: MemoryDeduplicationStore())
        let synchronous = try pipeline.count(pipeline.verify(requests), through: fresh, at: time) { $0 }
        let ledger = ClaimLedger(store: MemoryDeduplicationStore())
        await #expect(throws: Full.self) {
            try await pipeline.count(pipeline.verify(requests), through: ledger, at: time) {
                (_: [VerifiedPostback]) async throws -> Int in
                throw Full()
            }
        }
        let asynchronous = try await pipeline.count(pipeline.verify(requests), through: ledger, at: time) {
            (postbacks: [VerifiedPostback]) async throws in postbacks
        }
        #expect(asynchronous.map(\.record) == synchronous.map(\.record))
    }
}

extension PostbackPipelineTests {
    @Test("The command line's steps (batches split across claims, claimed through a ledger, marked) give the records count gives, and claim each first sighting once",
          arguments: [1, 3])
    func batchStepsMatchCount(batchSize: Int) throws {
        let verifier = try FixtureManifest.trusting()
        let pipeline = PostbackPipeline(keyRing: verifier.keyRing, policy: verifier.policy,
                                        records: .jsonLines(explain: false, fastPath: true))
        let requests = try FixtureManifest.requests()
        let time = Date(timeIntervalSince1970: 1_795_305_600)
        let fresh = ClaimLedger(store: MemoryDeduplicationStore())
        let counted = try pipeline.count(pipeline.verify(requests), through: fresh, at: time) { $0 }
        let ledger = ClaimLedger(store: MemoryDeduplicationStore())
        var records: [[UInt8]] = []
        var firsts: [ExactString] = []
        let batches = stride(from: 0, to: requests.count, by: batchSize).map { start in
            VerifiedBatch(items: requests[start..<min(start + batchSize, requests.count)].map {
                InputItem(source: $0.source, line: 1, content: .bytes(ArraySlice($0.body)))
            })
        }
        batches.forEach(pipeline.steps.finish)
        // Every second claim takes the next batch along (claimed ahead), as the command line's writer does.
        var ahead: [PostbackPipeline.BatchAnswer]?
        for (number, batch) in batches.enumerated() {
            let answers: [PostbackPipeline.BatchAnswer]
            if let claimed = ahead {
                answers = claimed
                ahead = nil
            } else {
                let next = number.isMultiple(of: 2) && number + 1 < batches.count ? [batches[number + 1]] : []
                let claimed = try pipeline.claim([batch] + next, through: ledger, at: time)
                answers = claimed[0]
                ahead = claimed.count > 1 ? claimed[1] : nil
            }
            pipeline.mark(batch, answers, keepingTime: true)
            records += batch.records
            for case .first(let key) in answers { firsts.append(key) }
        }
        #expect(records == counted.map(\.record))
        #expect(firsts.count == counted.filter { $0.verdict == .valid }.count)
        #expect(Set(firsts).count == firsts.count)
    }
}

extension PostbackPipelineTests {
    /// A store that is down: every call throws.
    struct DownStore: DeduplicationStore {
        struct Down: Error {}
        func claim(_ sightings: [PostbackSighting], at time: Date) throws -> [DeduplicationAnswer] { throw Down() }
        func confirm(_ keys: [ExactString]) throws { throw Down() }
        func release(_ keys: [ExactString]) throws { throw Down() }
    }

    @Test("count with no valid postback (a group of forgeries) stores it without asking the store, so a store that is down does not fail it; a valid one still does")
    func countWithoutSightingsSkipsStore() async throws {
        let verifier = try FixtureManifest.trusting()
        let pipeline = PostbackPipeline(keyRing: verifier.keyRing, policy: verifier.policy)
        let requests = try FixtureManifest.requests()
        let forgeries = pipeline.verify(requests).filter { $0.verdict == .invalid }
        try #require(!forgeries.isEmpty)
        let down = ClaimLedger(store: DownStore())
        let stored = try pipeline.count(forgeries, through: down, at: Date()) { $0.map(\.record) }
        #expect(stored == forgeries.map(\.record))
        let storedAsync = try await pipeline.count(forgeries, through: down, at: Date()) { postbacks async in
            postbacks.map(\.record)
        }
        #expect(storedAsync == forgeries.map(\.record))
        #expect(throws: DownStore.Down.self) {
            try pipeline.count(pipeline.verify([requests[0]]), through: down, at: Date()) { $0 }
        }
    }
}
