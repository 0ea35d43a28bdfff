@_spi(Stores) import Attribution
import Foundation

/// The heartbeat's own connection to a PostgreSQL state: it renews one owner's lease without waiting for the
/// store's lock (a slow claim, a statement waiting on a row), and tells whether the lease had lapsed or was close
/// to its end (other owners may then have taken its claims over). It waits for a lock or a statement a quarter
/// of the lease at most, so that a renewal that cannot be made fails (and is counted) instead of hanging; after
/// a lost connection, the next renewal reconnects.
///
/// Not thread-safe: ``PostgreSQLDeduplicationStore`` holds it under a lock of its own.
final class PostgresLeaseRenewer {
    /// The heartbeat's connection, made at the first renewal.
    private var connection: PostgresConnection?
    /// Where to connect (never printed: messages name the server without the password).
    private let connectionString: String
    /// The owner whose lease this renews.
    private let owner: Int64
    /// The lease, in milliseconds.
    private let leaseMilliseconds: Int64

    /// A renewer for `owner`, whose lease lasts `leaseMilliseconds`, connecting to `connectionString` at its first
    /// renewal (a store that never claims opens no second connection).
    init(connectionString: String, owner: Int64, leaseMilliseconds: Int64) {
        self.connectionString = connectionString
        self.owner = owner
        self.leaseMilliseconds = leaseMilliseconds
    }

    /// Renews the lease for another `leaseMilliseconds` from now (the server's clock); true when it had lapsed,
    /// was within a third of its end, or the owner's row was gone. Throws what went wrong (never the password).
    func renew() throws(AttributionError) -> Bool {
        let wait = max(50, leaseMilliseconds / 4)
        let connection: PostgresConnection
        if let open = self.connection {
            connection = open
        } else {
            connection = try PostgresStateDatabase.connect(connectionString) { connection throws(PostgresFailure) in
                try connection.execute("SET statement_timeout TO '\(wait)ms'")
                try connection.execute("SET lock_timeout TO '\(wait)ms'")
            }.0
            self.connection = connection
        }
        // A connection found dropped (a restart, pg_terminate_backend) is made again at once, and the renewal
        // with it: renewing twice is harmless, and a dropped connection is no failure when the server is back.
        var reconnected = false
        while true {
            do throws(PostgresFailure) {
                try connection.reconnectIfNeeded()
                return try connection.execute(PostgresSchema.renew, [
                    .int64(owner), .int64(leaseMilliseconds), .text(DeduplicationOwner.thisHost),
                    .int64(Int64(DeduplicationOwner.thisProcess)), .int64(leaseMilliseconds / 3),
                ], prepare: true).bool(0, 0)
            } catch where error.connectionLost && !reconnected {
                reconnected = true
            } catch {
                throw AttributionError(error.connectionLost ? .unavailable : .failed, error.message)
            }
        }
    }
}
