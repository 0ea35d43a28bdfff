@_spi(Stores) import Attribution
import Foundation

/// The heartbeat's own connection to a state file: it renews one owner's lease without waiting for the store's
/// lock (a slow claim, a caller stalled inside the store), in a transaction of its own, and tells whether the
/// lease had lapsed before (other owners may then have taken its claims over). WAL mode lets it write between
/// the store's transactions; it waits for another writer a quarter of the lease at most, so that a renewal
/// that cannot be made fails (and is counted) instead of hanging.
///
/// Not thread-safe: ``SQLiteDeduplicationStore`` holds it under a lock of its own.
final class SQLiteLeaseRenewer {
    /// The heartbeat's own connection to the file.
    private let connection: SQLiteConnection
    /// Reads the owner's lease (``StateSchema/leaseOf``).
    private let leaseOf: SQLiteStatement
    /// Renews it (``StateSchema/renewOwner``).
    private let renewOwner: SQLiteStatement
    /// The owner whose lease this renews.
    private let owner: Int64
    /// The lease, in milliseconds.
    private let leaseMilliseconds: Int64

    /// Opens a second connection to the state at `path` for the owner `owner`, whose lease lasts `leaseMilliseconds`.
    init(path: String, owner: Int64, leaseMilliseconds: Int64) throws(SQLiteFailure) {
        connection = try SQLiteConnection(path: path, readOnly: false)
        connection.setBusyTimeout(milliseconds: Int32(clamping: max(50, leaseMilliseconds / 4)))
        connection.skipCheckpointOnClose()
        try connection.execute("PRAGMA synchronous = NORMAL")
        leaseOf = try connection.prepare(StateSchema.leaseOf)
        renewOwner = try connection.prepare(StateSchema.renewOwner)
        self.owner = owner
        self.leaseMilliseconds = leaseMilliseconds
    }

    /// Renews the lease for another `leaseMilliseconds` from now, in one short transaction; true when it had
    /// lapsed, or was within a third of its end (a checker may have read it expired), or the owner's row was gone.
    func renew() throws(SQLiteFailure) -> Bool {
        do throws(SQLiteFailure) {
            try connection.execute("BEGIN IMMEDIATE")
            let now = Date().millisecondsSince1970
            try leaseOf.bind(1, owner)
            let lapsed = try !leaseOf.step() || leaseOf.int64(0) < now + leaseMilliseconds / 3
            leaseOf.reset()
            try renewOwner.bind(1, owner)
            try renewOwner.bind(2, text: DeduplicationOwner.thisHost)
            try renewOwner.bind(3, Int64(DeduplicationOwner.thisProcess))
            try renewOwner.bind(4, now + leaseMilliseconds)
            try renewOwner.run()
            try connection.execute("COMMIT")
            return lapsed
        } catch {
            leaseOf.reset()
            if connection.isInTransaction { try? connection.execute("ROLLBACK") }
            throw error
        }
    }
}
