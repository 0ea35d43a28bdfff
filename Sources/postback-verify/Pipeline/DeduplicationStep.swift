#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Attribution
import Foundation

/// Rule D1 for one run, batch by batch, through the one ``DeduplicationStore`` protocol: a
/// ``MemoryDeduplicationStore`` for the run alone, or (`--state`) a ``SQLiteDeduplicationStore`` or
/// ``PostgreSQLDeduplicationStore`` other runs share.
///
/// ``claim(_:)`` claims a batch's valid postbacks in one short transaction before its records are written; once
/// they were written and flushed, ``confirm(_:)`` confirms the claims whose records the reader has taken: all
/// of them for a file, and for a pipe those no longer in the pipe's buffer (the rest at the next batch or at the
/// end, ``finish(_:)``). No database lock is held while records wait for a reader, and a run that dies leaves
/// claims that the next sighting takes over (contract 1.1, "Memory across runs"; `docs/state.md`). Used by the
/// writer (consume) step only, one batch at a time.
final class DeduplicationStep {
    private let store: (any DeduplicationStore)?
    /// True with `--state`: the store outlives the run, so a key is confirmed only once its record was read.
    let remembersAcrossRuns: Bool
    private let started: Date
    /// Claims not yet confirmed: each batch's keys with the output offset its records end at.
    private var pending: [(end: Int, keys: [DeduplicationKey])] = []
    /// Why the state could not be used, once it could not; the run then stops (exit status 2).
    private(set) var failure: String?

    init(_ options: CommandLineOptions) throws(StateError) {
        started = Date()
        if !options.deduplicates {
            store = nil
            remembersAcrossRuns = false
        } else if let state = options.statePath {
            // A postgresql:// URL or a libpq keyword string (host=..., dbname=...) names a server; anything else
            // is a SQLite file's path (docs/state.md).
            store = PostgreSQLDeduplicationStore.recognizes(state)
                ? try PostgreSQLDeduplicationStore(connectionString: state, retentionDays: options.retentionDays ?? 10)
                : try SQLiteDeduplicationStore(path: state, retentionDays: options.retentionDays ?? 10)
            remembersAcrossRuns = true
        } else {
            store = MemoryDeduplicationStore()
            remembersAcrossRuns = false
        }
    }

    /// For each item of `batch`, the first occurrence when it is a valid postback seen before (nil otherwise),
    /// with the sighting's content fingerprint; nil when the state failed (see ``failure``).
    func claim(_ batch: VerifiedBatch) -> [(first: DuplicateReference, content: ContentFingerprint?)?]? {
        var answers = [(first: DuplicateReference, content: ContentFingerprint?)?](repeating: nil,
                                                                                  count: batch.items.count)
        guard let store else { return answers }
        var sightings: [PostbackSighting] = []
        var positions: [Int] = []
        for (index, outcome) in batch.outcomes.enumerated() {
            let item = batch.items[index]
            let sighting: PostbackSighting?
            switch outcome {
            case .fast(let identifier, let content):
                sighting = PostbackSighting(key: DeduplicationKey(identifier), source: item.source, line: item.line,
                                            content: content)
            case .general(let result):
                sighting = PostbackSighting(result, source: item.source, line: item.line)
            }
            if let sighting {
                sightings.append(sighting)
                positions.append(index)
            }
        }
        guard !sightings.isEmpty else { return answers }
        do {
            let claimed = try store.claim(sightings, at: started)
            for (position, (sighting, answer)) in zip(positions, zip(sightings, claimed)) {
                if let first = answer.duplicateOf {
                    // Without a state a run's records depend on its input alone: no time stamped.
                    answers[position] = (remembersAcrossRuns ? first : first.withoutTime, sighting.content)
                }
            }
            let keys = type(of: store).claimedKeys(sightings, claimed)
            if remembersAcrossRuns {
                pending.append((.max, keys))
            } else {
                try store.confirm(keys)
            }
        } catch {
            failure = (error as? StateError)?.reason ?? "\(error)"
            return nil
        }
        return answers
    }

    /// Confirms the claims whose records `records` has written (after a flush) and the reader has taken; false
    /// when the state failed (see ``failure``).
    func confirm(_ records: StandardStream) -> Bool {
        guard let store, remembersAcrossRuns else { return true }
        if let last = pending.indices.last, pending[last].end == .max {
            pending[last].end = records.bytesWritten
        }
        guard let read = records.bytesRead() else { return true }  // the reader is gone: nothing more is read
        let taken = pending.prefix { $0.end <= read }
        guard !taken.isEmpty else { return true }
        do {
            try store.confirm(taken.flatMap(\.keys))
            pending.removeFirst(taken.count)
            return true
        } catch {
            failure = (error as? StateError)?.reason ?? "\(error)"
            return false
        }
    }

    /// At the end of a run whose records were all written and flushed: waits until the reader of a pipe has
    /// taken them (or closed its end), confirms them, and releases what was never read.
    func finish(_ records: StandardStream) {
        guard let store, remembersAcrossRuns else { return }
        var pause: useconds_t = 1000
        while !pending.isEmpty, records.failure == nil, failure == nil {
            _ = confirm(records)
            guard !pending.isEmpty, records.bytesRead() != nil else { break }
            usleep(pause)
            pause = min(pause * 2, 50_000)
        }
        if !pending.isEmpty {
            try? store.release(pending.flatMap(\.keys))
            pending.removeAll()
        }
    }
}
