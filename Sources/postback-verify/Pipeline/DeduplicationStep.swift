#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Attribution
import AttributionStores
import Foundation

/// Rule D1 for one run, batch by batch, through the one ``DeduplicationStore`` protocol: a
/// ``MemoryDeduplicationStore`` for the run alone, or (`--state`) a ``SQLiteDeduplicationStore`` or
/// ``PostgreSQLDeduplicationStore`` other runs share.
///
/// ``claim(_:)`` claims a batch's valid postbacks in one short transaction before its records are written; once
/// they were written and flushed, ``confirmRead(_:now:)`` confirms the claims whose records the reader has taken
/// (all of them for a file; for a pipe, those no longer in its buffer), with the next claim or at once. No database
/// lock is held while records wait for a reader, and a run that dies leaves claims that the next sighting takes
/// over (contract 1.1, "Memory across runs"; `docs/state.md`). Used by the writer (consume) step only, one batch
/// at a time, and by a flush that waits for a slow reader.
final class DeduplicationStep {
    /// The claims this run holds in its store, from the claim to their confirmation (the library's
    /// ``ClaimLedger``); with `--state`, made by ``open()``.
    private var ledger: ClaimLedger?
    /// With `--state`: the file or database, opened by ``open()``.
    private let state: StateLocation?
    private let retentionDays: Int
    /// True with `--state`: the store outlives the run, so a key is confirmed only once its record was read.
    let remembersAcrossRuns: Bool
    private let started: Date
    /// With `--state` and `--label`: the name standard input's first sightings are remembered by, instead of `-`,
    /// so that a later run's duplicate names something a person can find.
    private let standardInputLabel: String?
    /// Read claims confirmed without waiting for the next claim once this many wait (a slow stream's batches):
    /// twice what one claim takes at most, so that a file's claims are confirmed whole, each with the next claim
    /// (one statement), never split in two (a claim confirmed in part costs a PostgreSQL store a row update per
    /// key, and a SQLite store a transaction of its own: measured in docs/state.md, "What it costs").
    static let confirmAtOnce = 2 * (claimAhead + 1) * Command.batchSize
    /// Why the state could not be used, once it could not; the run then stops (exit status 2).
    private(set) var failure: String?

    /// The step for `options`; with `--state`, ``open()`` opens the file.
    init(_ options: CommandLineOptions) {
        started = Date()
        retentionDays = options.retentionDays ?? StateLocation.defaultRetentionDays
        state = options.deduplicates ? options.state : nil
        remembersAcrossRuns = state != nil
        standardInputLabel = remembersAcrossRuns ? options.label : nil
        ledger = options.deduplicates && state == nil ? ClaimLedger(store: MemoryDeduplicationStore()) : nil
    }

    /// Opens the state (`--state`): checks a SQLite file, or creates it, and refuses it untouched when it is not a
    /// state file of ours (``AttributionError``); or connects to a PostgreSQL server. The command calls it on the
    /// writer's thread once the reader and the workers have started, so that its syncs and checks overlap the
    /// first batches' verification; no record is written before it returns.
    func open() throws(AttributionError) {
        guard let state, ledger == nil else { return }
        ledger = ClaimLedger(store: try state.open(retentionDays: retentionDays))
    }

    /// What D1 found for one item of a batch.
    enum Answer {
        /// Not a valid postback, or deduplication is off.
        case none
        /// The first sighting: its key is claimed; once its record is written, ``written(_:through:)``.
        case first(ExactString)
        /// A repeat of `first`; `content` is this sighting's fingerprint (for D2).
        case duplicate(DuplicateReference, content: ContentFingerprint?)
    }

    /// Batches claimed with the one before them (``claim(_:ahead:)``), their answers kept until they are written.
    private var claimedAhead: [(batch: VerifiedBatch, answers: [Answer])] = []
    /// How many finished batches behind the one being written a claim takes along at most: with a state, a
    /// transaction's cost is mostly the key-index pages it writes to the log, not many more for eight batches
    /// than for one.
    static let claimAhead = 7

    /// True when `batch` was claimed ahead, with a batch before it.
    func hasClaimed(_ batch: VerifiedBatch) -> Bool {
        claimedAhead.first?.batch === batch
    }

    /// Claims the valid postbacks of `batch` (and of the batches `ahead` of it, already verified and next in
    /// order) in one short transaction, which also confirms the claims whose records were read, and answers each
    /// item of `batch`; nil when the state failed (see ``failure``). A batch claimed ahead is answered from that
    /// claim when its turn comes.
    func claim(_ batch: VerifiedBatch, ahead: [VerifiedBatch] = []) -> [Answer]? {
        if let first = claimedAhead.first, first.batch === batch {
            claimedAhead.removeFirst()
            return first.answers
        }
        guard let ledger else { return [Answer](repeating: .none, count: batch.items.count) }
        let batches = [batch] + ahead
        var sightings: [PostbackSighting] = []
        var positions: [(batch: Int, item: Int)] = []
        var answers = batches.map { [Answer](repeating: .none, count: $0.items.count) }
        for (number, batch) in batches.enumerated() {
            for index in batch.items.indices {
                if var sighting = batch.sighting(at: index) {
                    if let standardInputLabel, sighting.source.utf8.elementsEqual("-".utf8) {
                        sighting = PostbackSighting(key: sighting.key, source: standardInputLabel,
                                                    line: sighting.line, content: sighting.content)
                    }
                    sightings.append(sighting)
                    positions.append((number, index))
                }
            }
        }
        do {
            let claimed = try ledger.claim(sightings, at: started)
            for (position, (sighting, answer)) in zip(positions, zip(sightings, claimed)) {
                switch answer {
                case .firstSeen:
                    answers[position.batch][position.item] = remembersAcrossRuns ? .first(sighting.key) : .none
                case .duplicate(let first):
                    // Without a state a run's records depend on its input alone: no time stamped.
                    answers[position.batch][position.item] = .duplicate(
                        remembersAcrossRuns ? first : first.withoutTime, content: sighting.content)
                }
            }
            // Without a state the store lives as long as the run: a claim of its own is a duplicate's first
            // occurrence as well as a confirmed one would be, so nothing is confirmed (or spent on it).
        } catch {
            failure = (error as? AttributionError)?.reason ?? "\(error)"
            return nil
        }
        claimedAhead = zip(ahead, answers.dropFirst()).map { ($0, $1) }
        return answers[0]
    }

    /// The record of the first sighting of `key` was written up to output offset `end` (buffered or not).
    func written(_ key: ExactString, through end: Int) {
        ledger?.written(key, through: end)
    }

    /// Notes which claims' records the reader has taken: all those written, for a file; for a pipe, those no
    /// longer in its buffer. The next claim confirms them in its own transaction (one transaction per batch); with
    /// `now` (a flush waits for a slow reader, or the run ends), or once ``confirmAtOnce`` are waiting, they are
    /// confirmed at once. Until then another run sees them claimed by a live owner: duplicates all the same. False
    /// when the state failed (see ``failure``).
    @discardableResult
    func confirmRead(_ records: StandardStream, now: Bool = false) -> Bool {
        guard let ledger, remembersAcrossRuns, failure == nil else { return failure == nil }
        ledger.stored(through: records.bytesRead().count)
        guard now || ledger.storedCount >= Self.confirmAtOnce else { return true }
        do {
            try ledger.confirmStored()
            return true
        } catch {
            failure = (error as? AttributionError)?.reason ?? "\(error)"
            return false
        }
    }

    /// At the end of a run whose records were all written and flushed (its input ended, its output failed or was
    /// closed, or a signal stopped it between two batches): waits until the reader of a pipe has taken them (or
    /// closed its end), confirms them, and releases what was never read, and the claims of batches claimed ahead
    /// but never written. A second signal while it waits for a stalled reader ends the process the default way.
    func finish(_ records: StandardStream) {
        // Nothing written or claimed: nothing to settle (and the store may still be opening on another thread).
        guard remembersAcrossRuns, let ledger, ledger.hasUnconfirmed || !claimedAhead.isEmpty else { return }
        var pause: useconds_t = 1000
        while confirmRead(records, now: true), ledger.hasUnconfirmed {
            if records.failure != nil || records.bytesRead().readerGone {
                confirmRead(records, now: true)  // what it read before it closed
                break
            }
            usleep(pause)
            pause = min(pause * 2, 50_000)
        }
        var unwritten: [ExactString] = []
        for (_, answers) in claimedAhead {
            for case .first(let key) in answers { unwritten.append(key) }
        }
        claimedAhead = []
        ledger.releaseUnconfirmed()
        if !unwritten.isEmpty { ledger.release(unwritten) }
    }
}
