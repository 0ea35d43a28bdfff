@_spi(Servers) import Attribution
@_spi(Servers) import AttributionStores
import Foundation

/// The receiver's durable storage: deduplication by the library's claim/confirm protocol, and a row per postback
/// (bytes, verdict, record) in the received-postback archive: a SQLite file beside a SQLite state, or the
/// PostgreSQL state's own table.
///
/// **A SQLite state** (two files: no transaction spans both). Per group, in this order: claim the valid postbacks'
/// keys (a key already seen, or claimed by a live request, answers duplicate: the postback is marked a duplicate of
/// its first sighting); store every row in one transaction of the archive (`fsync`); answer 200; confirm the
/// claims, in the same transaction as the next group's claim (``DeduplicationStore/claim(_:at:confirming:)``), or
/// on their own a moment later when no group follows, and before the receiver exits. A claim not yet confirmed is
/// this live receiver's: a retry arriving meanwhile is a duplicate of the stored row. If storing fails, the
/// group's claims are released and every request of the group gets 500: Apple's retry is then a first sighting
/// again, never a duplicate of a row nobody stored. A release that fails too (the same full disk) is kept and
/// settled before the next claim; until it succeeds every group that claims answers 500, because a claim made then
/// could answer a retry "duplicate" of a row that does not exist. A confirmation that fails stays held and goes
/// with the next claim. The library's ``ClaimLedger`` keeps these claims, as it does the command line's. A crash between the rows and the confirmation can at worst count a retry valid
/// once more (the dead receiver's claims are taken over), never lose a postback.
///
/// **A PostgreSQL state.** The group's claims, its rows and the claims' confirmation are one transaction, the
/// store's archiving capability (``PostgreSQLArchivingStore``), committed before the answer: every receiver fills
/// one table, and a failure leaves neither claim nor row (500, and Apple's retry is first seen). A crash after the
/// commit and before the answer leaves a stored, confirmed row: the retry is its duplicate.
///
/// Both go through one path, the ledger's ``ClaimLedger/claim(_:at:archiving:appending:)``: the store archives
/// the rows in its claims' transaction when it can, and the archive file takes them otherwise.
struct DurableSink: PostbackSink {
    /// The claims of the deduplication state, held until confirmed.
    let ledger: ClaimLedger
    /// The archive file beside a SQLite state; nil for a state that keeps the rows in its claims' transaction.
    let archive: SQLiteReceivedArchive?
    let quota: InvalidQuota
    /// Marks the duplicates the store answers.
    let pipeline: PostbackPipeline
    let metrics: ReceiverMetrics?
    /// The relay's destinations: each stored row a destination is owed gets its outbox row in the row's own
    /// transaction, so a delivery is owed from the moment its postback is stored.
    let destinations: [OutboxDestination]
    /// The storage's own thread: every group's steps run there, one group at a time.
    private let queue = DispatchQueue(label: "postback-receiver.storage")

    init(ledger: ClaimLedger, archive: SQLiteReceivedArchive?, quota: InvalidQuota, pipeline: PostbackPipeline,
         metrics: ReceiverMetrics?, destinations: [OutboxDestination] = []) {
        self.destinations = destinations
        self.ledger = ledger
        self.archive = archive
        self.quota = quota
        self.pipeline = pipeline
        self.metrics = metrics
    }


    /// Runs `work` on the storage's thread, and returns what it returned.
    private func onStorageThread<Value: Sendable>(_ work: @escaping @Sendable () throws -> Value) async throws
        -> Value {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Value, any Error>) in
            queue.async {
                continuation.resume(with: Result { try work() })
            }
        }
    }

    func store(_ group: [ReceivedPostback]) async throws -> [SinkOutcome] {
        // The steps run back to back on the storage's thread: one hand-off per group, not one per step (each
        // hand-off between threads costs a wake-up, which on a busy machine costs more than the steps).
        let outcomes = try await onStorageThread { try self.storeNow(group) }
        // If no group follows within 2 ms to carry the confirmation of what this one stored, it goes on its own
        // (nothing to confirm when the store's transaction confirmed the claims).
        queue.asyncAfter(deadline: .now() + .milliseconds(2)) { self.confirmBacklog() }
        return outcomes
    }

    /// Confirms what stored groups claimed; on failure they stay for the next claim (a live owner's claims).
    private func confirmBacklog() {
        try? ledger.confirmStored()
    }

    /// Confirms what is left, before the receiver exits (the store releases unconfirmed claims when closed, and a
    /// dead owner's claims are taken over by the next sighting, so an unreleased key is no loss across a restart).
    func finish() async {
        _ = try? await onStorageThread {
            try? self.ledger.confirmStored()
            try? self.ledger.releaseUnreleased()
        }
    }

    var leaseRenewalFailures: Int { ledger.store.renewalFailures }

    /// Asks the deduplication state (the store every valid postback needs) to answer one cheap query.
    func probe() throws {
        try ledger.store.probe()
    }

    private func storeNow(_ group: [ReceivedPostback]) throws -> [SinkOutcome] {
        let sighted = PostbackPipeline.Sightings(group.map(\.verified))
        // The claim's time is the request's arrival (what `duplicate-of-run` reports); one time for the group.
        let arrival = Date(timeIntervalSince1970: Double(
            group[sighted.indices.first ?? 0].receivedMilliseconds) / 1000)
        var built: (outcomes: [SinkOutcome], rows: [ArchivedPostback], quotaTaken: [Int64]) = ([], [], [])
        do {
            // The same transaction confirms what earlier groups stored (if it fails, neither happened). Claims of
            // an unstored group still held are released first, or this group fails (500) rather than answer a
            // retry of one of them as a duplicate (the ledger's claim throws). Rows not stored have their claims
            // released, so that Apple's retry is a first sighting, not a duplicate of a row nobody stored.
            _ = try ledger.claim(sighted.sightings, at: arrival, archiving: { answers in
                giveBack(built.quotaTaken)  // a transaction tried again builds its rows again
                built = rows(group, sighted, answers)
                return built.rows
            }, appending: { rows in
                guard let archive else {
                    throw AttributionError(.unavailable, "no archive takes the received postbacks")
                }
                try archive.append(rows, owing: destinations)
            })
        } catch let error as AttributionError {
            giveBack(built.quotaTaken)
            throw StorageFailure(error.code.rawValue, error.reason)
        } catch {
            giveBack(built.quotaTaken)
            throw error
        }
        let outcomes = built.outcomes
        for outcome in outcomes {
            switch outcome {
            case .stored(let postback): metrics?.stored(postback.verified.verdict)
            case .overQuota: metrics?.notStored(.quota)
            case .retryLater: metrics?.notStored(.retryLater)
            }
        }
        return outcomes
    }

    /// Returns the invalid quota's units of rows that were not stored after all (their arrival times).
    private func giveBack(_ taken: [Int64]) {
        for milliseconds in taken { quota.giveBack(1, at: milliseconds) }
    }

    /// Each postback's fate once the store has answered its sighting (a duplicate marked so), the archive's rows
    /// of those stored (invalid bodies beyond the hourly quota are left out, or kept as their differences), and the
    /// arrival time of each invalid row that took a unit of the quota, to give back if the rows are not stored.
    private func rows(_ group: [ReceivedPostback], _ sighted: PostbackPipeline.Sightings,
                      _ answers: [DeduplicationAnswer])
        -> (outcomes: [SinkOutcome], rows: [ArchivedPostback], quotaTaken: [Int64]) {
        var verified = group.map(\.verified)
        pipeline.mark(&verified, sighted, answers: answers)
        var postbacks = group
        var contents: [Int: ContentFingerprint] = [:]
        for (sighting, index) in zip(sighted.sightings, sighted.indices) {
            postbacks[index].verified = verified[index]
            contents[index] = sighting.content
        }
        var outcomes: [SinkOutcome] = []
        outcomes.reserveCapacity(postbacks.count)
        var rows: [ArchivedPostback] = []
        rows.reserveCapacity(postbacks.count)
        var quotaTaken: [Int64] = []
        for (index, postback) in postbacks.enumerated() {
            let result = postback.verified
            var kept = ArchivedPostback.Kept.body
            if result.verdict == .invalid && quota.take(at: postback.receivedMilliseconds) {
                quotaTaken.append(postback.receivedMilliseconds)
            } else if result.verdict == .invalid {
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
            rows.append(ArchivedPostback(
                received: postback.receivedMilliseconds, request: postback.requestID, route: postback.route.rawValue,
                verdict: result.verdict.rawValue, code: result.firstError?.code?.rawValue,
                key: result.deduplicationKey?.utf8,
                body: kept == .body
                    ? postback.body : JSONLinesRecord.differences(of: result, content: contents[index]),
                record: postback.record, kept: kept))
        }
        return (outcomes, rows, quotaTaken)
    }

    /// The deduplication state and the received-postback archive: a SQLite state (shared with `postback-verify
    /// --state`) and the archive file at `archivePath` (by default beside it), or a PostgreSQL database shared
    /// by every receiver and run, which holds the archive too (then `archivePath` must be nil).
    /// With `destinations`, the relay's outbox is opened too (made when missing), and returned.
    static func open(_ state: ReceiverConfiguration.State, archivePath: String?,
                     synchronous: ReceiverConfiguration.Synchronous, retentionDays: Int,
                     quota: InvalidQuota, pipeline: PostbackPipeline, metrics: ReceiverMetrics?,
                     destinations: [OutboxDestination] = []) throws
        -> (sink: DurableSink, outbox: (any Outbox)?) {
        let ledger: ClaimLedger
        var archive: SQLiteReceivedArchive?
        var outbox: (any Outbox)?
        do {
            switch state {
            case .sqlite:
                let deduplication = try state.open(retentionDays: retentionDays)
                let path = archivePath ?? ReceiverConfiguration.defaultArchivePath(for: state) ?? ""
                ledger = ClaimLedger(store: deduplication)
                archive = try SQLiteReceivedArchive(path: path, syncsEveryCommit: synchronous == .full)
                if !destinations.isEmpty { outbox = try SQLiteOutbox(path: path) }
            case .postgreSQL(let connection):
                guard archivePath == nil else {
                    throw StorageFailure(AttributionError.Code.invalidOption.rawValue, "an archive file applies to "
                                         + "a SQLite state only: a PostgreSQL state keeps the received postbacks")
                }
                let store = try PostgreSQLDeduplicationStore(connectionString: connection,
                                                             retentionDays: retentionDays)
                ledger = ClaimLedger(store: PostgreSQLArchivingStore(store, synchronousCommit: synchronous == .full,
                                                                     owing: destinations))
                // Before the first group: its statement inserts into the outbox's table.
                if !destinations.isEmpty { outbox = try PostgresOutbox(connectionString: connection) }
            }
        } catch let error as AttributionError {
            throw StorageFailure(error.code.rawValue, error.reason)
        }
        return (DurableSink(ledger: ledger, archive: archive, quota: quota, pipeline: pipeline, metrics: metrics,
                            destinations: destinations), outbox)
    }
}
