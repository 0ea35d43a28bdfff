import Attribution
import Foundation

/// Rule D1 for one run, batch by batch: in memory, or (`--state`) in the SQLite state other runs share.
///
/// ``begin(_:)`` answers a batch's valid postbacks before its records are written; ``commit()`` comes after they
/// were written and flushed. With the state, a batch's new keys become visible to other runs only at that commit,
/// so a run that dies between the two leaves nothing behind (contract 1.1, "Memory across runs"). Used by the
/// writer (consume) step only, one batch at a time.
final class RunDeduplication {
    private enum Memory {
        case off
        case run(Deduplicator)
        case state(StateDatabase)
    }

    private var memory: Memory
    private let started: Date
    /// Why the state could not be used, once it could not; the run then stops (exit status 2).
    private(set) var failure: String?

    /// True when records must be flushed before ``commit()`` (the state remembers them beyond this run).
    var remembersAcrossRuns: Bool {
        if case .state = memory { return true }
        return false
    }

    init(_ options: CommandLineOptions) throws(StateError) {
        started = Date()
        if !options.deduplicates {
            memory = .off
        } else if let path = options.statePath {
            memory = .state(try StateDatabase(path: path, retentionDays: options.retentionDays ?? 10))
        } else {
            // No time stamped: without a state a run's records depend on its input alone (duplicates within a
            // run need no `duplicate-of-run`), so two runs over the same input write the same bytes.
            memory = .run(Deduplicator())
        }
    }

    /// For each item of `batch`, the first occurrence when it is a valid postback seen before (nil otherwise);
    /// nil when the state failed (see ``failure``).
    func begin(_ batch: VerifiedBatch) -> [DuplicateReference?]? {
        var answers = [DuplicateReference?](repeating: nil, count: batch.items.count)
        if case .off = memory { return answers }
        var sightings: [PostbackSighting] = []
        var positions: [Int] = []
        for (index, outcome) in batch.outcomes.enumerated() {
            let item = batch.items[index]
            let sighting: PostbackSighting?
            switch outcome {
            case .fast(let identifier):
                sighting = PostbackSighting(key: DeduplicationKey(identifier), source: item.source, line: item.line)
            case .general(let result):
                sighting = PostbackSighting(result, source: item.source, line: item.line)
            }
            if let sighting {
                sightings.append(sighting)
                positions.append(index)
            }
        }
        switch memory {
        case .off:
            break
        case .run(var deduplicator):
            memory = .off  // the dictionary stays uniquely referenced while it grows
            for (position, sighting) in zip(positions, sightings) {
                answers[position] = deduplicator.firstSeen(sighting)
            }
            memory = .run(deduplicator)
        case .state(let database):
            do {
                for (position, answer) in zip(positions, try database.begin(sightings, at: started)) {
                    answers[position] = answer.duplicateOf
                }
            } catch {
                failure = error.reason
                return nil
            }
        }
        return answers
    }

    /// Remembers the batch's first sightings, once their records were written and flushed; false when the state
    /// failed (see ``failure``).
    func commit() -> Bool {
        guard case .state(let database) = memory else { return true }
        do {
            try database.commit()
            return true
        } catch {
            failure = error.reason
            return false
        }
    }
}
