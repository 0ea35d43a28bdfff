import Foundation
import Synchronization

/// A ``DeduplicationStore`` in a SQLite file: the CLI's `--state`, shared by every run, thread and process on
/// one machine that opens the same file.
///
/// The file is refused, untouched, unless it is a postback-verify state (``StateError``); a missing one is
/// created. Postbacks first seen more than the retention ago are forgotten (Apple retries for up to 9 days, so
/// the default keeps 10). Memory stays bounded whatever the file holds: lookups go to the file, through SQLite's
/// page cache. Calls through one store are serialised, and `store` runs inside the file's write transaction:
/// keep it short, and do not call the same store from it. `docs/state.md` documents the schema.
public final class SQLiteDeduplicationStore: DeduplicationStore {
    private let database: Mutex<StateDatabase>
    /// The file's path, as given.
    public let path: String

    /// Opens (or creates) the state at `path`.
    /// - Parameter retentionDays: forget postbacks first seen more than this many days before a call's time.
    public init(path: String, retentionDays: Int = 10) throws(StateError) {
        self.path = path
        database = Mutex(try StateDatabase(path: path, retentionDays: retentionDays))
    }

    public func deduplicate<Outcome>(
        _ sightings: [PostbackSighting], at time: Date, store: ([DeduplicationAnswer]) throws -> Outcome
    ) throws -> Outcome {
        try database.withLock { (database: inout StateDatabase) throws -> Outcome in
            let answers = try database.begin(sightings, at: time)
            let outcome: Outcome
            do {
                outcome = try store(answers)
            } catch {
                database.rollback()
                throw error
            }
            try database.commit()
            return outcome
        }
    }

    /// How many postbacks the file remembers (expired ones not yet pruned included).
    package func count() throws(StateError) -> Int {
        try database.withLock { (database: inout StateDatabase) throws(StateError) -> Int in try database.count() }
    }
}
