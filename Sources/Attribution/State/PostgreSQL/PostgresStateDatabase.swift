import Foundation

/// The deduplication state in a PostgreSQL database: checked at connection (refused, untouched, unless its
/// `postback_verify` schema is ours or absent), then asked batch by batch with the claim/confirm protocol.
///
/// A batch costs one round trip to claim (``claim(_:at:)``, one statement: ``PostgresSchema/claim``) and one to
/// confirm; no transaction stays open in between, so a caller whose records wait on a slow reader holds up no one.
/// A claim belongs to this connection's owner token, which the connection holds as a session advisory lock: when
/// the process dies or its connection drops, the lock goes with it, and the next sighting of a claimed key takes
/// the claim over (so does any sighting once the lease has run out). Not thread-safe: one caller at a time
/// (``PostgreSQLDeduplicationStore`` keeps a pool of these).
package final class PostgresStateDatabase {
    /// How long a statement may wait for a row another batch holds, or run at all, before it fails.
    static let statementTimeoutSeconds = 60
    /// Expired rows deleted per pruning statement at most.
    static let pruneLimit: Int64 = 512
    /// Deadlocks are avoided by locking keys in byte order; should one still happen, the statement had no effect
    /// and is run again this many times.
    static let transientRetries = 3

    /// One row of a claim's answer, in the order of the keys claimed.
    package struct ClaimedRow: Sendable {
        /// The key is this claim's: first seen (or taken over from a dead owner, or past the retention).
        package let ours: Bool
        /// The row as it stands: this claim's values when ``ours``, the first sighting's otherwise.
        package let firstSeen: Int64
        package let source: String
        package let line: Int
        package let digest: [UInt8]
        /// The first sighting's claim was confirmed (false: a live owner still holds it).
        package let confirmed: Bool
    }

    /// What one key of a batch claims with.
    package struct Claim: Sendable {
        package let key: [UInt8]
        package let source: String
        package let line: Int
        package let digest: [UInt8]

        package init(key: [UInt8], source: String, line: Int, digest: [UInt8]) {
            self.key = key
            self.source = source
            self.line = line
            self.digest = digest
        }
    }

    /// The server and database, for messages (never the password).
    package let target: String
    private let retentionMilliseconds: Int64
    private let leaseMilliseconds: Int64
    private let connection: PostgresConnection
    /// This connection's owner token (changes when it reconnects: the old one's claims are then dead).
    private var owner: Int64 { ownerBox.value }
    private let ownerBox: OwnerToken
    /// Batches skip pruning while their cutoff is at most this (see ``StateDatabase``).
    private var prunedThrough: Int64 = .min

    /// Connects, checks the schema and creates it when the database has none.
    ///
    /// - Parameters:
    ///   - connectionString: a libpq connection string or URL; the password may come from it, `PGPASSWORD` or
    ///     the password file, and is never printed.
    ///   - retentionDays: postbacks first seen longer ago than this count as absent, and are pruned.
    ///   - leaseMilliseconds: a claim older than this is taken over even when its owner seems alive.
    package init(connectionString: String, retentionDays: Int, leaseMilliseconds: Int64) throws(StateError) {
        retentionMilliseconds = Int64(retentionDays) * 86_400_000
        self.leaseMilliseconds = leaseMilliseconds
        let parsed: PostgresConnectionString
        do {
            parsed = try PostgresConnectionString(connectionString)
        } catch {
            throw StateError(.cannotOpen, "--state: \(error.message); write a libpq connection string "
                             + "(host=... dbname=...) or a postgresql:// URL, see docs/state.md")
        }
        target = "PostgreSQL state (\(parsed.description))"
        let ownerBox = OwnerToken()
        self.ownerBox = ownerBox
        do {
            connection = try PostgresConnection(parsed) { connection throws(PostgresFailure) in
                try Self.startSession(connection, owner: ownerBox)
            }
        } catch {
            throw Self.stateError(error, target: target, doing: "cannot connect to", opening: true)
        }
        try prepareSchema()
    }

    /// Claims `claims` (distinct keys) as first seen at `time`: one statement, one round trip (plus, at the start
    /// of a run or once a minute, one bounded pruning statement). Returns the claim's token, for ``confirm(_:token:)``,
    /// and each key's row in the order given.
    package func claim(_ claims: [Claim], at time: Date) throws(StateError) -> (token: Int64, rows: [ClaimedRow]) {
        let seen = time.millisecondsSince1970
        let cutoff = seen - retentionMilliseconds
        let token = Int64.random(in: 1...Int64.max)
        guard !claims.isEmpty else { return (token, []) }
        // Byte order, so that two batches lock shared keys in the same order (bytea compares like memcmp).
        let order = claims.indices.sorted { claims[$0].key.lexicographicallyPrecedes(claims[$1].key) }
        var position: [[UInt8]: Int] = [:]
        position.reserveCapacity(claims.count)
        for index in claims.indices { position[claims[index].key] = index }
        return try run("cannot claim postbacks in") { () throws(PostgresFailure) in
            if cutoff > prunedThrough {
                let pruned = try connection.execute(PostgresSchema.prune, [.int64(cutoff), .int64(Self.pruneLimit)])
                if pruned.changedRows < Self.pruneLimit { prunedThrough = cutoff + 60_000 }
            }
            let result = try connection.execute(PostgresSchema.claim, [
                .bytesArray(order.map { claims[$0].key }),
                .textArray(order.map { claims[$0].source }),
                .int64Array(order.map { Int64(claims[$0].line) }),
                .bytesArray(order.map { claims[$0].digest }),
                .int64(seen), .int64(cutoff), .int64(owner), .int64(token), .int64(leaseMilliseconds),
            ])
            var rows = [ClaimedRow?](repeating: nil, count: claims.count)
            for row in 0..<result.rowCount {
                guard let index = position[result.bytes(row, 0)] else { continue }
                rows[index] = ClaimedRow(
                    ours: result.bool(row, 1), firstSeen: result.int64(row, 2), source: result.text(row, 3),
                    line: Int(result.int64(row, 4)), digest: result.bytes(row, 5), confirmed: result.bool(row, 6))
            }
            let answered = rows.compactMap { $0 }
            guard answered.count == claims.count else {
                throw PostgresFailure(message: "the claim answered \(answered.count) of \(claims.count) keys")
            }
            return (token, answered)
        }
    }

    /// Confirms the claim `token` made on `keys`, once their records were delivered. Returns how many were still
    /// this claim's (fewer when another connection took some over, having seen this one as dead).
    @discardableResult
    package func confirm(_ keys: [[UInt8]], token: Int64) throws(StateError) -> Int {
        guard !keys.isEmpty else { return 0 }
        return try run("cannot confirm postbacks in") { () throws(PostgresFailure) in
            try connection.execute(PostgresSchema.confirm, [.bytesArray(keys), .int64(token)]).changedRows
        }
    }

    /// Withdraws the claim `token` made on `keys`: their records were not delivered, so the next sighting is new.
    package func release(_ keys: [[UInt8]], token: Int64) throws(StateError) {
        guard !keys.isEmpty else { return }
        _ = try run("cannot release claims in") { () throws(PostgresFailure) in
            try connection.execute(PostgresSchema.release, [.bytesArray(keys), .int64(token)])
        }
    }

    /// How many postbacks the database remembers (claims and expired rows not yet pruned included).
    package func count() throws(StateError) -> Int {
        try run("cannot read") { () throws(PostgresFailure) in
            Int(try connection.execute(PostgresSchema.count).int64(0, 0))
        }
    }

    /// Runs `body`, reconnecting first if the connection was lost, and again (at most ``transientRetries`` times)
    /// after a deadlock or serialisation failure.
    private func run<Value>(_ doing: String, _ body: () throws(PostgresFailure) -> Value) throws(StateError) -> Value {
        var attempt = 0
        while true {
            do throws(PostgresFailure) {
                try connection.reconnectIfNeeded()
                return try body()
            } catch where error.isTransient && attempt < Self.transientRetries {
                attempt += 1
            } catch {
                throw Self.stateError(error, target: target, doing: doing, opening: false)
            }
        }
    }

    // MARK: The session and the schema

    /// Settings for a new connection, and a fresh owner token held as a session advisory lock.
    private static func startSession(_ connection: PostgresConnection, owner: OwnerToken) throws(PostgresFailure) {
        // Our statements name every object with its schema; functions resolve in pg_catalog first.
        try connection.execute("SET search_path TO pg_catalog, pg_temp")
        try connection.execute("SET statement_timeout TO '\(statementTimeoutSeconds)s'")
        try connection.execute("SET lock_timeout TO '\(statementTimeoutSeconds)s'")
        // A commit lost in a server crash forgets a key or leaves a claim unconfirmed: either way the postback
        // is reported valid again, never lost (docs/state.md), so a commit need not wait for the disk.
        try connection.execute("SET synchronous_commit TO off")
        // The server notices a client machine that vanished (its claims' owner is then dead) within a minute.
        try connection.execute("SET tcp_keepalives_idle TO 30")
        try connection.execute("SET tcp_keepalives_interval TO 10")
        try connection.execute("SET tcp_keepalives_count TO 3")
        while true {
            let token = Int64.random(in: 1...Int64.max)
            if try connection.execute("SELECT pg_catalog.pg_try_advisory_lock($1)", [.int64(token)]).bool(0, 0) {
                owner.value = token
                return
            }
        }
    }

    /// Refuses, before anything writes, a `postback_verify` schema that is not exactly ours at our version;
    /// creates it (in one transaction, one connection at a time) when there is none.
    private func prepareSchema() throws(StateError) {
        do throws(PostgresFailure) {
            if try !hasTables() { try create() }
        } catch {
            throw Self.stateError(error, target: target, doing: "cannot create the schema postback_verify in",
                                  opening: true)
        }
        try check()
    }

    /// Creates the schema in one transaction, unless another connection made it meanwhile (a second creator
    /// waits on the advisory lock, then finds the tables and leaves them to ``check()``).
    private func create() throws(PostgresFailure) {
        try connection.execute("BEGIN")
        do throws(PostgresFailure) {
            try connection.execute("SELECT pg_catalog.pg_advisory_xact_lock(\(Self.creationLock))")
            if try !hasTables() {
                for statement in PostgresSchema.create { try connection.execute(statement) }
            }
            try connection.execute("COMMIT")
        } catch {
            if connection.isConnected { _ = try? connection.execute("ROLLBACK") }
            throw error
        }
    }

    /// An advisory lock key (one of ours: "pbv-schm") taken while the schema is created.
    private static let creationLock: Int64 = 0x7062_762D_7363_686D

    /// The schema exists and holds something (an empty one, made by an administrator for us, is filled in).
    private func hasTables() throws(PostgresFailure) -> Bool {
        guard try connection.execute(PostgresSchema.schemaExists).int64(0, 0) == 1 else { return false }
        return try !describe().isEmpty
    }

    private func describe() throws(PostgresFailure) -> [String] {
        let result = try connection.execute(PostgresSchema.describe)
        return (0..<result.rowCount).map { result.text($0, 0) }
    }

    /// The schema is ours at our version, or the reason it is not (nothing written).
    private func check() throws(StateError) {
        let left = "left as it is"
        do {
            let described = try describe()
            if described.contains("column schema_version.version integer not null") {
                let versions = try connection.execute(PostgresSchema.versions)
                guard versions.rowCount == 1, !versions.isNull(0, 0) else {
                    throw StateError(.damaged, "\(target) is damaged: postback_verify.schema_version has "
                                     + "\(versions.rowCount) rows, not one; \(left)")
                }
                let version = versions.int64(0, 0)
                if version > PostgresSchema.version {
                    throw StateError(.newerSchema, "\(target) has schema version \(version), newer than this "
                                     + "postback-verify knows (\(PostgresSchema.version)): use a later release")
                }
                if version != PostgresSchema.version {
                    throw StateError(.damaged, "\(target) is damaged: unknown schema version \(version); \(left)")
                }
            }
            guard described == PostgresSchema.expected else {
                let missing = PostgresSchema.expected.filter { !described.contains($0) }
                let foreign = described.filter { !PostgresSchema.expected.contains($0) }
                let difference = (missing.prefix(3).map { "missing \($0)" } + foreign.prefix(3).map { "unexpected \($0)" })
                    .joined(separator: "; ")
                throw StateError(.notOurs, "\(target): the schema postback_verify is not postback-verify's "
                                 + "(\(difference)); \(left)")
            }
        } catch let error as StateError {
            throw error
        } catch let failure as PostgresFailure {
            throw Self.stateError(failure, target: target, doing: "cannot check", opening: true)
        } catch {
            throw StateError(.failed, "\(target): \(error)")
        }
    }

    /// What a failure means for the state, with what to do about it.
    private static func stateError(_ failure: PostgresFailure, target: String, doing: String, opening: Bool)
        -> StateError {
        if failure.connectionLost {
            let remedy = opening
                ? "check that the server is running and reachable, and the connection string"
                : "the records written so far stand; run again once the server is back (postbacks whose records "
                    + "were written but not confirmed are reported valid once more, none is lost)"
            return StateError(opening ? .cannotOpen : .unavailable,
                              "\(doing) \(target): the server cannot be reached (\(failure.message)); \(remedy)")
        }
        if failure.isAccessDenied {
            return StateError(.cannotOpen, "\(doing) \(target): \(failure.message) (SQLSTATE \(failure.sqlState ?? "")); "
                              + "check the user, password (PGPASSWORD or ~/.pgpass), database and privileges "
                              + "(docs/state.md lists the grants)")
        }
        if failure.sqlState == "55P03" || failure.sqlState == "57014" {
            return StateError(.busy, "\(doing) \(target): waited \(statementTimeoutSeconds) s for rows another "
                              + "connection holds (\(failure.message))")
        }
        let state = failure.sqlState.map { " (SQLSTATE \($0))" } ?? ""
        return StateError(.failed, "\(doing) \(target): \(failure.message)\(state)")
    }
}

/// A connection's owner token, set by each new session (the connection's reconnect hook writes it).
private final class OwnerToken: @unchecked Sendable {
    var value: Int64 = 0
}
