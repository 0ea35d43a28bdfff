import Attribution
import AttributionStores
import Foundation

/// The receiver's durable storage: deduplication by the library's claim/confirm protocol, and a row per postback
/// (bytes, verdict, record) in the received-postback archive.
///
/// Per group, in this order: claim the valid postbacks' keys (a key already seen, or claimed by a live request,
/// answers duplicate: the postback is marked a duplicate of its first sighting); store every row in one
/// transaction (`fsync`); answer 200; confirm the claims, in the same transaction as the next group's claim
/// (``DeduplicationStore/claim(_:at:confirming:)``), or on their own a moment later when no group follows, and
/// before the receiver exits. A claim not yet confirmed is this live receiver's: a retry arriving meanwhile is a
/// duplicate of the stored row. If storing fails, the group's claims are released and every request of the group
/// gets 500: Apple's retry is then a first sighting again, never a duplicate of a row nobody stored. A crash
/// between the rows and the confirmation can at worst count a retry valid once more (the dead receiver's claims
/// are taken over), never lose a postback.
struct DurableSink: PostbackSink {
    let deduplication: any DeduplicationStore
    let archive: SQLiteReceivedArchive
    let quota: InvalidQuota
    let metrics: ReceiverMetrics?
    let backlog = ConfirmBacklog()

    /// Keys of stored groups not confirmed yet. Touched only on the archive's thread.
    final class ConfirmBacklog: @unchecked Sendable {
        var keys: [ExactString] = []
    }

    func store(_ group: [ReceivedPostback]) async throws -> [SinkOutcome] {
        // The steps run back to back on the archive's thread: one hand-off per group, not one per step (each
        // hand-off between threads costs a wake-up, which on a busy machine costs more than the steps).
        let outcomes = try await archive.onArchiveThread { try self.storeNow(group) }
        // If no group follows within 2 ms to carry the confirmation, it goes on its own.
        archive.onArchiveThread(after: .milliseconds(2)) { self.confirmBacklog() }
        return outcomes
    }

    /// Confirms what stored groups claimed; on failure they stay for the next claim (a live owner's claims).
    private func confirmBacklog() {
        guard !backlog.keys.isEmpty else { return }
        if (try? deduplication.confirm(backlog.keys)) != nil {
            backlog.keys = []
        }
    }

    /// Confirms what is left, before the receiver exits (the store releases unconfirmed claims when closed).
    func finish() async {
        _ = try? await archive.onArchiveThread { self.confirmBacklog() }
    }

    private func storeNow(_ group: [ReceivedPostback]) throws -> [SinkOutcome] {
        var postbacks = group
        var sightingIndices: [Int] = []
        var sightings: [PostbackSighting] = []
        for (index, postback) in postbacks.enumerated() {
            if let sighting = PostbackSighting(postback.result, source: postback.requestID, line: 1) {
                sightings.append(sighting)
                sightingIndices.append(index)
            }
        }
        // The claim's time is the request's arrival (what `duplicate-of-run` reports); one time for the group. The
        // same transaction confirms what earlier groups claimed (if it fails, neither happened).
        let answers: [DeduplicationAnswer]
        if sightings.isEmpty {
            answers = []
        } else {
            let arrival = Double(postbacks[sightingIndices[0]].receivedMilliseconds) / 1000
            answers = try deduplication.claim(
                sightings, at: Date(timeIntervalSince1970: arrival), confirming: backlog.keys)
            backlog.keys = []
        }
        for (answer, index) in zip(answers, sightingIndices) {
            if let first = answer.duplicateOf {
                postbacks[index].result.markDuplicate(of: first)
            }
        }
        let claimed = type(of: deduplication).claimedKeys(sightings, answers)
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
                key: result.deduplicationKey?.utf8, body: postback.body, record: postback.record))
        }
        do {
            if !rows.isEmpty {
                try archive.appendNow(rows)
            }
        } catch {
            // Not stored: forget the claims, so that Apple's retry is a first sighting, not a duplicate of a row
            // nobody stored. (If even that fails, the claims expire with their lease or with this process.)
            if !claimed.isEmpty { try? deduplication.release(claimed) }
            throw error
        }
        backlog.keys += claimed
        for outcome in outcomes {
            switch outcome {
            case .stored(let postback): metrics?.stored(postback.result.verdict)
            case .overQuota: metrics?.notStored(.quota)
            }
        }
        return outcomes
    }

    /// The deduplication state (a SQLite file shared with `postback-verify --state`, or a PostgreSQL database
    /// shared by every receiver and run) and the received-postback archive file.
    static func open(_ state: ReceiverConfiguration.State, archivePath: String,
                     synchronous: ReceiverConfiguration.Synchronous, retentionDays: Int,
                     quota: InvalidQuota, metrics: ReceiverMetrics?) throws -> DurableSink {
        let deduplication: any DeduplicationStore
        do {
            switch state {
            case .sqlite(let path):
                deduplication = try SQLiteDeduplicationStore(path: path, retentionDays: retentionDays)
            case .postgreSQL(let connection):
                deduplication = try PostgreSQLDeduplicationStore(connectionString: connection,
                                                                 retentionDays: retentionDays)
            }
        } catch {
            throw StorageFailure(error.code.rawValue, error.reason)
        }
        let archive = try SQLiteReceivedArchive(path: archivePath, synchronous: synchronous)
        return DurableSink(deduplication: deduplication, archive: archive, quota: quota, metrics: metrics)
    }
}
