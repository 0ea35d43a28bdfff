#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@_spi(CommandLine) import Attribution
@_spi(CommandLine) import AttributionStores
import Foundation

/// Where one run's claims (rule D1, through the library's ``PostbackPipeline`` and ``ClaimLedger``) meet its
/// output: a claim is confirmed once its record was *read*, all of it for a file, for a pipe what is no longer in
/// its buffer (``StandardStream/bytesRead()``), and a stop settles them (contract 1.1, "Memory across runs";
/// docs/state.md, "A stop confirms what was written").
///
/// The store is a ``MemoryDeduplicationStore`` for the run alone, or (`--state`) a SQLite file or PostgreSQL
/// database other runs share. Only the writer's thread calls it, a batch at a time, and a flush that waits for a
/// slow reader or a stop, under the run's lock.
final class RunClaims {
    /// The claims this run holds, from the claim to their confirmation; with `--state`, made by ``open()``.
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
    /// How many finished batches behind the one being written a claim takes along at most: with a state, a
    /// transaction's cost is mostly the key-index pages it writes to the log, not many more for eight batches
    /// than for one.
    static let claimAhead = 7
    /// Batches claimed with the one before them, their answers kept until they are written.
    private var claimedAhead: [(batch: VerifiedBatch, answers: [PostbackPipeline.BatchAnswer])] = []
    /// Why the state could not be used, once it could not; the run then stops (exit status 2).
    private(set) var failure: String?

    /// The claims of a run with `options`; with `--state`, ``open()`` opens the store.
    init(_ options: CommandLineOptions) {
        started = Date()
        retentionDays = options.retentionDays ?? StateLocation.defaultRetentionDays
        state = options.deduplicates ? options.state : nil
        remembersAcrossRuns = state != nil
        standardInputLabel = remembersAcrossRuns ? options.label : nil
        ledger = options.deduplicates && state == nil
            ? ClaimLedger(store: MemoryDeduplicationStore(expectedKeys: Self.expectedItems(options.paths))) : nil
    }

    /// About how many items the regular files among `paths` hold (a postback body is ~600 bytes or more; 512 is
    /// counted), at most ``maximumExpectedItems``: room the memory store reserves. Standard input, directories and
    /// anything that cannot be read count nothing; the guess only saves rehashing, it never limits anything.
    static func expectedItems(_ paths: [String]) -> Int {
        var bytes = 0
        for path in paths where path != "-" {
            var status = stat()
            guard stat(path, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { continue }
            bytes += Int(status.st_size)
        }
        return min(bytes / 512, maximumExpectedItems)
    }

    /// The most room reserved up front: 65,536 keys, a table of a few MiB. A larger one, mostly empty, is touched
    /// all over by the keys it does get (regression: a 650 MB file of 20,000 postbacks repeated 50 times reserved
    /// room for 2²⁰ and peaked at 111 MiB, against 47 MiB without); past it the table grows as it fills.
    static let maximumExpectedItems = 1 << 16

    /// Opens the state (`--state`): checks a SQLite file, or creates it, and refuses it untouched when it is not a
    /// state file of ours (``AttributionError``); or connects to a PostgreSQL server. Called on the writer's
    /// thread once the reader and the workers have started, so that its syncs and checks overlap the first
    /// batches' verification; no record is written before it returns.
    func open() throws(AttributionError) {
        guard let state, ledger == nil else { return }
        ledger = ClaimLedger(store: try state.open(retentionDays: retentionDays))
    }

    /// True when `batch` was claimed ahead, with a batch before it.
    func hasClaimed(_ batch: VerifiedBatch) -> Bool {
        claimedAhead.first?.batch === batch
    }

    /// D1's answers for `batch`, claimed through `pipeline` in one short transaction with the batches `ahead` of it
    /// (already verified and next in order), which also confirms the claims whose records were read; nil when the
    /// state failed (see ``failure``). A batch claimed ahead is answered from that claim when its turn comes.
    /// Without a state, a first sighting is `.none`: nothing is confirmed (its store lives as long as the run).
    func claim(_ batch: VerifiedBatch, ahead: [VerifiedBatch] = [], through pipeline: PostbackPipeline)
        -> [PostbackPipeline.BatchAnswer]?
    {
        if let first = claimedAhead.first, first.batch === batch {
            claimedAhead.removeFirst()
            return reaffirmed(batch, first.answers, through: pipeline)
        }
        guard let ledger else { return [PostbackPipeline.BatchAnswer](repeating: .none, count: batch.items.count) }
        do {
            var answers = try pipeline.claim([batch] + ahead, through: ledger, at: started) { source in
                source.utf8.elementsEqual("-".utf8) ? self.standardInputLabel : nil
            }
            if !remembersAcrossRuns {
                answers = answers.map { $0.map { if case .first = $0 { .none } else { $0 } } }
            }
            claimedAhead = zip(ahead, answers.dropFirst()).map { ($0, $1) }
            return reaffirmed(batch, answers[0], through: pipeline)
        } catch {
            failure = (error as? AttributionError)?.reason ?? "\(error)"
            return nil
        }
    }

    /// `answers` for `batch`, about to be written, once the state has shown it still holds their claims
    /// (``PostbackPipeline/reaffirm(_:_:through:)``: a clock read while its lease was renewed lately): a claim
    /// another run took over while this run's lease had lapsed makes its item a duplicate of that run's record. Nil
    /// when the lease could not be renewed (see ``failure``): nothing more is written from the claims.
    private func reaffirmed(_ batch: VerifiedBatch, _ answers: [PostbackPipeline.BatchAnswer],
                            through pipeline: PostbackPipeline) -> [PostbackPipeline.BatchAnswer]? {
        guard remembersAcrossRuns, let ledger else { return answers }
        do {
            return try pipeline.reaffirm(batch, answers, through: ledger)
        } catch {
            failure = (error as? AttributionError)?.reason ?? "\(error)"
            return nil
        }
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
    /// but never written. A second signal while it waits for a stalled reader ends the process the default way. A
    /// release that fails twice sets ``failure``: the run then exits 2 with the store's message.
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
        // A release that failed is tried once more; if it fails again the run ends with status 2 and says so (its
        // claims stay until its lease runs out, or at once for a run on this machine whose process is gone).
        if ledger.isBlocked {
            do {
                try ledger.releaseUnreleased()
            } catch {
                failure = failure ?? (error as? AttributionError)?.reason ?? "\(error)"
            }
        }
    }
}
