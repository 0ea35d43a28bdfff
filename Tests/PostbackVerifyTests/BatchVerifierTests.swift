import Foundation
import Testing

@_spi(CommandLine) @_spi(Servers) @_spi(Stores) @testable import Attribution
@testable import postback_verify

/// The command line's one entry point (`BatchVerifier`): a duplicate that the fast path decided is worded from
/// what its outcome carries, byte for byte as the general path words it, and is never verified again.
@Suite("Batch verifier: duplicates of fast-path items")
struct BatchVerifierTests {

    /// Runs `items` through `verifier` as the command line does: the three steps, then D1 through a store (each
    /// first sighting stamped `firstSeen`, or no time as without `--state`), then the duplicates marked.
    static func records(_ verifier: BatchVerifier, _ items: [InputItem], firstSeen: Date?) throws
        -> (batch: VerifiedBatch, records: [String]) {
        let batch = VerifiedBatch(items: items)
        verifier.finish(batch)
        let store = MemoryDeduplicationStore()
        let positions = items.indices.filter { batch.sighting(at: $0) != nil }
        let answers = store.claim(positions.map { batch.sighting(at: $0)! }, at: firstSeen ?? Date())
        for (index, answer) in zip(positions, answers) {
            if case .duplicate(let first) = answer {
                verifier.markDuplicate(&batch.records[index], &batch.outcomes[index], source: items[index].source,
                                       line: items[index].line, of: firstSeen == nil ? first.withoutTime : first,
                                       content: batch.sighting(at: index)?.content)
            }
        }
        return (batch, batch.records.map { String(decoding: $0, as: UTF8.self) })
    }

    @Test("A duplicate of a fast-path item gets the general path's record and counts, byte for byte",
          arguments: [nil, Date(timeIntervalSince1970: 1_764_072_000.123)])
    func sameRecords(firstSeen: Date?) throws {
        let items = try FixtureManifest.items()
        let keyRing = try FixtureManifest.trusting().keyRing
        let fast = try Self.records(
            BatchVerifier(keyRing: keyRing, policy: VerificationPolicy(), records: .jsonLines(explain: false,
                                                                                             fastPath: true)),
            items, firstSeen: firstSeen)
        let general = try Self.records(
            BatchVerifier(keyRing: keyRing, policy: VerificationPolicy(), records: .jsonLines(explain: false,
                                                                                             fastPath: false)),
            items, firstSeen: firstSeen)
        for (fastRecord, generalRecord) in zip(fast.records, general.records) {
            #expect(fastRecord == generalRecord)
        }
        #expect(fast.records.count == items.count && general.records.count == items.count)
        for index in items.indices {
            let (a, b) = (fast.batch.outcomes[index], general.batch.outcomes[index])
            #expect(a.verdict == b.verdict && a.isDuplicate == b.isDuplicate && a.warningCount == b.warningCount)
            #expect(a.firstError?.code == b.firstError?.code && a.firstError?.message == b.firstError?.message)
        }
        // Not vacuous: the fast path decided the four genuine postbacks, and two of them are its duplicates; the
        // general path the others.
        let decidedFast = fast.batch.outcomes.map { outcome -> String in
            switch outcome.decision {
            case .fast: "fast"
            case .fastDuplicate: "fast duplicate"
            case .general(let result): result.duplicateOf == nil ? "general" : "general duplicate"
            }
        }
        #expect(decidedFast == ["fast", "fast duplicate", "fast duplicate", "fast", "general", "general duplicate",
                                "general"])
        #expect(fast.records[1].contains(#""code":"duplicate","rule":"D1""#))
        #expect(fast.records[1].contains(#","duplicate-of":1,"duplicate-of-source":"day.jsonl""#))
        #expect(fast.records[1].contains(#""warnings":[]"#))
        #expect(fast.records[2].contains(#""rule":"D2""#))
        #expect(fast.records[2].contains(
            #""duplicate-differs":{"signed-payload":false,"unsigned":["conversion-value"]}"#))
        #expect(fast.records[2].contains("duplicate-of-run") == (firstSeen != nil))
        #expect(fast.records[6].contains(#""code":"bad-signature""#))
    }

    /// Renders are counted, and the general path cannot verify the items at all (it trusts none of their keys):
    /// a duplicate's record that still holds the verified fields, with no render, came from the fast outcome alone.
    @Test("Marking a fast-path duplicate verifies nothing again")
    func verifiedOnce() throws {
        let items = Array(try FixtureManifest.items().prefix(3))  // a postback, its retry, the retry with D2
        let trusting = try FixtureManifest.trusting()
        let renders = Counter()
        let untrusting = AttributionVerifier(keyRing: KeyRing())
        let verifier = BatchVerifier(
            verifier: untrusting, fastPath: FastPostbackPath(trusting)
        ) { result, source, line in
            renders.add()
            return JSONLinesRecord.render(result, source: source, line: line)
        }
        // What the general path would say of the item, to be sure that verifying it again could not go unseen.
        guard case .bytes(let bytes) = items[1].content else { Issue.record("no bytes"); return }
        #expect(untrusting.verify(bytes).firstError?.code?.rawValue == "unknown-key")

        let seen = Date(timeIntervalSince1970: 1_764_072_000)
        let marked = try Self.records(verifier, items, firstSeen: seen)
        #expect(renders.value == 0, "a fast-path item or its duplicate was rendered from a result")
        let expected = try items.indices.map { index -> String in
            guard case .bytes(let bytes) = items[index].content else { throw CancellationError() }
            var result = trusting.verify(bytes)
            if index > 0 {
                let first = try #require(PostbackSighting(trusting.verify(items[0].content.bytes), source: "day.jsonl",
                                                          line: 1))
                result.markDuplicate(of: DuplicateReference(source: first.source, line: first.line, firstSeen: seen,
                                                            firstContent: first.content))
            }
            return String(decoding: JSONLinesRecord.render(result, source: "day.jsonl", line: index + 1),
                          as: UTF8.self)
        }
        #expect(marked.records == expected)
        #expect(marked.batch.outcomes.map(\.isDuplicate) == [false, true, true])
        #expect(marked.batch.outcomes.map(\.warningCount) == [0, 0, 1])
    }

    final class Counter: @unchecked Sendable {
        private let lock = NSLock()
        private var count = 0
        var value: Int { lock.withLock { count } }
        func add() { lock.withLock { count += 1 } }
    }
}

private extension InputItem.Content {
    /// The bytes of a `.bytes` item (empty otherwise).
    var bytes: ArraySlice<UInt8> {
        if case .bytes(let bytes) = self { return bytes }
        return []
    }
}
