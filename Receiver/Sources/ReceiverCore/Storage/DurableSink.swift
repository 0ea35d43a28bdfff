import Attribution
import Foundation

/// The receiver's durable storage: deduplication by the library's claim/confirm protocol, and a row per postback
/// (bytes, verdict, record) in the received-postback archive.
///
/// Per group, in this order: claim the valid postbacks' keys (a key already seen, or claimed by a live request,
/// answers duplicate: the postback is marked a duplicate of its first sighting); store every row in one
/// transaction (`fsync`); confirm the claims. Only then are the requests answered 200. If storing fails, the claims
/// are released and every request of the group gets 500: Apple's retry is then a first sighting again, never a
/// duplicate of a row nobody stored. A crash between the rows and the confirmation can at worst count a retry
/// valid once more (its claim expires), never lose a postback.
struct DurableSink: PostbackSink {
    let deduplication: any ReceiverDeduplication
    let archive: SQLiteReceivedArchive
    let quota: InvalidQuota
    let metrics: ReceiverMetrics?

    func store(_ group: [ReceivedPostback]) async throws -> [SinkOutcome] {
        var postbacks = group
        var sightingIndices: [Int] = []
        var sightings: [PostbackSighting] = []
        for (index, postback) in postbacks.enumerated() {
            if let sighting = PostbackSighting(postback.result, source: postback.requestID, line: 1) {
                sightings.append(sighting)
                sightingIndices.append(index)
            }
        }
        let now = Date()
        let claim = try await deduplication.claim(sightings, at: now)
        for (answer, index) in zip(claim.answers, sightingIndices) {
            if let first = answer.duplicateOf {
                postbacks[index].result.markDuplicate(of: first)
            }
        }
        var outcomes: [SinkOutcome] = []
        outcomes.reserveCapacity(postbacks.count)
        var rows: [SQLiteReceivedArchive.Row] = []
        rows.reserveCapacity(postbacks.count)
        for postback in postbacks {
            let result = postback.result
            if result.verdict == .invalid && !quota.take(at: postback.receivedMilliseconds) {
                outcomes.append(.overQuota(postback))
                continue
            }
            outcomes.append(.stored(postback))
            rows.append(SQLiteReceivedArchive.Row(
                received: postback.receivedMilliseconds, request: postback.requestID, route: postback.route.rawValue,
                verdict: result.verdict.rawValue, code: result.firstError?.code?.rawValue,
                key: result.deduplicationKeyBytes, body: postback.body, record: postback.record))
        }
        do {
            if !rows.isEmpty {
                try await archive.append(rows)
            }
        } catch {
            await deduplication.release(claim)
            throw error
        }
        try await deduplication.confirm(claim)
        for outcome in outcomes {
            switch outcome {
            case .stored(let postback): metrics?.stored(postback.result.verdict)
            case .overQuota: metrics?.notStored(.quota)
            }
        }
        return outcomes
    }

    static func sqlite(path: String, retentionDays: Int, quota: InvalidQuota, metrics: ReceiverMetrics?) async throws
        -> DurableSink {
        // The deduplication store first: it refuses a file that is not a state file, and creates its tables in an
        // empty one; the archive's table goes in beside them.
        let deduplication = try await SQLiteReceiverDeduplication(path: path, retentionDays: retentionDays)
        let archive = try SQLiteReceivedArchive(path: path)
        return DurableSink(deduplication: deduplication, archive: archive, quota: quota, metrics: metrics)
    }
}

/// What the receiver needs of a deduplication store: claim a group's keys, then confirm or release them.
protocol ReceiverDeduplication: Sendable {
    func claim(_ sightings: [PostbackSighting], at time: Date) async throws -> DeduplicationClaim
    func confirm(_ claim: DeduplicationClaim) async throws
    func release(_ claim: DeduplicationClaim) async
}

/// One group's claim: the answers, in the order of the sightings, and what confirming it needs.
struct DeduplicationClaim: Sendable {
    let answers: [DeduplicationAnswer]
    let token: any Sendable
}
