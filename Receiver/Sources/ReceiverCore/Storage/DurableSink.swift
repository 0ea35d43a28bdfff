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
/// gets 500: Apple's retry is then a first sighting again, never a duplicate of a row nobody stored. A release that
/// fails too (the same full disk) is kept and settled before the next claim; until it succeeds every group that
/// claims answers 500, because a claim made then could answer a retry "duplicate" of a row that does not exist. A
/// confirmation that fails stays in the backlog and goes with the next claim. A crash between the rows and the
/// confirmation can at worst count a retry valid once more (the dead receiver's claims are taken over), never lose
/// a postback.
struct DurableSink: PostbackSink {
    let deduplication: any DeduplicationStore
    let archive: SQLiteReceivedArchive
    let quota: InvalidQuota
    let metrics: ReceiverMetrics?
    let backlog = ConfirmBacklog()

    /// Keys of stored groups not confirmed yet, and keys of unstored groups whose release failed. Touched only on
    /// the archive's thread.
    final class ConfirmBacklog: @unchecked Sendable {
        var keys: [ExactString] = []
        /// Claimed by a group whose rows were not stored, and not released yet: while they are held, a retry of
        /// one of them would be answered as a duplicate of a row nobody stored.
        var unreleased: [ExactString] = []
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

    /// Confirms what is left, before the receiver exits (the store releases unconfirmed claims when closed, and a
    /// dead owner's claims are taken over by the next sighting, so an unreleased key is no loss across a restart).
    func finish() async {
        _ = try? await archive.onArchiveThread {
            self.confirmBacklog()
            try? self.releaseUnreleased()
        }
    }

    /// Asks the deduplication state (the store every valid postback needs) to answer one cheap query.
    func probe() throws {
        try deduplication.probe()
    }

    /// Releases the claims of groups that were not stored; throws (and keeps them) when that fails again.
    private func releaseUnreleased() throws {
        guard !backlog.unreleased.isEmpty else { return }
        try deduplication.release(backlog.unreleased)
        backlog.unreleased = []
    }

    private func storeNow(_ group: [ReceivedPostback]) throws -> [SinkOutcome] {
        var postbacks = group
        var sightingIndices: [Int] = []
        var sightings: [PostbackSighting] = []
        var contents: [Int: ContentFingerprint] = [:]
        for (index, postback) in postbacks.enumerated() {
            if let sighting = PostbackSighting(postback.result, source: postback.requestID, line: 1) {
                sightings.append(sighting)
                sightingIndices.append(index)
                contents[index] = sighting.content
            }
        }
        // The claim's time is the request's arrival (what `duplicate-of-run` reports); one time for the group. The
        // same transaction confirms what earlier groups claimed (if it fails, neither happened).
        let answers: [DeduplicationAnswer]
        if sightings.isEmpty {
            answers = []
        } else {
            // Claims of an unstored group still held: settled first, or this group fails (500) rather than answer
            // a retry of one of them as a duplicate.
            try releaseUnreleased()
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
        for (index, postback) in postbacks.enumerated() {
            let result = postback.result
            var kept = SQLiteReceivedArchive.Kept.body
            if result.verdict == .invalid && !quota.take(at: postback.receivedMilliseconds) {
                switch OverQuotaTreatment(result) {
                case .discard:
                    outcomes.append(.overQuota(postback))
                    continue
                case .retryLater:
                    outcomes.append(.retryLater(postback))
                    continue
                case .keepDifferences:
                    // Another signed payload under the same identifier needs a trusted key's signature, which an
                    // attacker cannot make: kept whole. Changed unsigned members (anyone on the path can make
                    // them): their values and the fingerprint only.
                    if result.duplicateDifferences?.signedPayload != true { kept = .differences }
                }
            }
            outcomes.append(.stored(postback))
            rows.append(SQLiteReceivedArchive.Row(
                received: postback.receivedMilliseconds, request: postback.requestID, route: postback.route.rawValue,
                verdict: result.verdict.rawValue, code: result.firstError?.code?.rawValue,
                key: result.deduplicationKey?.utf8,
                body: kept == .body ? postback.body : Self.differences(of: result, content: contents[index]),
                record: postback.record, kept: kept))
        }
        do {
            if !rows.isEmpty {
                try archive.appendNow(rows)
            }
        } catch {
            // Not stored: forget the claims, so that Apple's retry is a first sighting, not a duplicate of a row
            // nobody stored. If even that fails (the same full disk), they are kept and released before the next
            // claim: held by this live owner, they would answer the retry "duplicate".
            backlog.unreleased += claimed
            try? releaseUnreleased()
            throw error
        }
        backlog.keys += claimed
        for outcome in outcomes {
            switch outcome {
            case .stored(let postback): metrics?.stored(postback.result.verdict)
            case .overQuota: metrics?.notStored(.quota)
            case .retryLater: metrics?.notStored(.retryLater)
            }
        }
        return outcomes
    }

    /// What a changed-content duplicate over the quota keeps instead of its body (the row's `kept` is
    /// `differences`): `{"content-fingerprint":"HEX","differing-members":{NAME:VALUE,...},"absent-members":[NAME]}`,
    /// the fingerprint of its whole content (what rule D2 compared) and the value of each unsigned member that
    /// differs from its first sighting's (every unsigned member when some were beyond the fingerprint's limits).
    static func differences(of result: VerificationResult, content: ContentFingerprint?) -> [UInt8] {
        let named = result.duplicateDifferences?.unsignedMembers ?? []
        let members = result.unsigned?.members ?? []
        // ContentFingerprint's name for the members beyond its limits (not a member's name: those are real).
        let beyondLimits = "(other unsigned members)"
        let everything = named.contains(beyondLimits) && !members.contains { $0.name == beyondLimits }
        var text = #"{"content-fingerprint":""#
        text += (content?.bytes ?? []).map { String($0 >> 4, radix: 16) + String($0 & 15, radix: 16) }.joined()
        text += #"","differing-members":{"#
        text += members.filter { everything || named.contains($0.name) }
            .map { JSONValue.string($0.name).jsonText + ":" + $0.value.jsonText }.joined(separator: ",")
        text += #"},"absent-members":["#
        text += named.filter { name in name != beyondLimits && !members.contains { $0.name == name } }
            .map { JSONValue.string($0).jsonText }.joined(separator: ",")
        text += "]}"
        return Array(text.utf8)
    }

    /// The deduplication state (a SQLite file shared with `postback-verify --state`, or a PostgreSQL database
    /// shared by every receiver and run) and the received-postback archive file.
    static func open(_ state: ReceiverConfiguration.State, archivePath: String,
                     synchronous: ReceiverConfiguration.Synchronous, retentionDays: Int,
                     quota: InvalidQuota, metrics: ReceiverMetrics?) throws -> DurableSink {
        let deduplication: any DeduplicationStore
        do {
            deduplication = try state.open(retentionDays: retentionDays)
        } catch {
            throw StorageFailure(error.code.rawValue, error.reason)
        }
        let archive = try SQLiteReceivedArchive(path: archivePath, synchronous: synchronous)
        return DurableSink(deduplication: deduplication, archive: archive, quota: quota, metrics: metrics)
    }
}
