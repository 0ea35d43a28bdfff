@_spi(Stores) import Attribution
import Foundation

/// The outbox of a PostgreSQL state, shared by every receiver on it: the schema `postback_relay`, beside the
/// state's own `postback_verify` (which stays exactly as `PostgresSchema` describes it), with its own version.
///
/// A group's deliveries are inserted by the statement that stores its rows (`PostgresSchema.archiveOwing`), in
/// the group's transaction. Receivers take due deliveries with `FOR UPDATE SKIP LOCKED` and lease them: no two
/// take the same row, and a receiver that dies hands its deliveries back when the lease runs out. Times are the
/// server's clock, one for every machine. Each call is one statement, on a connection of the outbox's own (taking
/// and recording deliveries never waits behind a group's commit, nor holds one up).
@_spi(CommandLine) @_spi(Servers) public final class PostgresOutbox: Outbox, Sendable {
    static let schemaVersion: Int64 = 1
    static let now = PostgresSchema.now
    static let create = [
        "CREATE SCHEMA IF NOT EXISTS postback_relay",
        "CREATE TABLE postback_relay.schema_version (version integer NOT NULL)",
        "INSERT INTO postback_relay.schema_version (version) VALUES (1)",
        """
        CREATE TABLE postback_relay.deliveries (
            id bigint GENERATED ALWAYS AS IDENTITY,
            postback bigint NOT NULL,
            destination text NOT NULL,
            status text NOT NULL,
            owed_since bigint NOT NULL,
            due bigint NOT NULL,
            attempts integer NOT NULL DEFAULT 0,
            holder bigint,
            lease_until bigint,
            answer text,
            CONSTRAINT deliveries_pkey PRIMARY KEY (id)
        )
        """,
        "CREATE INDEX deliveries_due ON postback_relay.deliveries (destination, due) WHERE status = 'owed'",
    ]
    /// `$1` destination, `$2` horizon (ms), `$3` the answer kept.
    static let expire = """
        UPDATE postback_relay.deliveries SET status = 'dead', holder = NULL, lease_until = NULL,
            answer = coalesce(answer || '; ', '') || $3
        WHERE id IN (SELECT id FROM postback_relay.deliveries
                     WHERE status = 'owed' AND destination = $1 AND owed_since < \(now) - $2
                         AND (lease_until IS NULL OR lease_until < \(now))
                     FOR UPDATE SKIP LOCKED)
        """
    /// `$1` destination, `$2` limit, `$3` holder, `$4` lease (ms), `$5` horizon (ms).
    static let claim = """
        WITH picked AS (
            SELECT id, holder FROM postback_relay.deliveries
            WHERE status = 'owed' AND destination = $1 AND due <= \(now) AND owed_since >= \(now) - $5
                AND (lease_until IS NULL OR lease_until < \(now))
            ORDER BY due LIMIT $2 FOR UPDATE SKIP LOCKED),
        taken AS (
            UPDATE postback_relay.deliveries d SET holder = $3, lease_until = \(now) + $4, attempts = d.attempts + 1
            FROM picked p WHERE d.id = p.id
            RETURNING d.id, d.postback, d.attempts, d.owed_since, d.due, p.holder IS NOT NULL AS reclaimed)
        SELECT t.id, t.attempts::bigint, t.owed_since, t.reclaimed, r.request, r.route, r.key, r.body, r.record
        FROM taken t JOIN postback_verify.received_postbacks r ON r.id = t.postback
        ORDER BY t.due
        """
    /// `$1` delivered ids; `$2` retried ids, `$3` their delays (ms), `$4` their answers; `$5` dead ids, `$6` their
    /// answers; `$7` holder; `$8` horizon (ms); `$9` the answer added when a retry falls past the horizon.
    static let record = """
        WITH delivered AS (
            DELETE FROM postback_relay.deliveries WHERE id = ANY($1::bigint[])),
        retried AS (
            UPDATE postback_relay.deliveries d SET holder = NULL, lease_until = NULL, due = \(now) + r.delay,
                answer = r.answer || CASE WHEN \(now) + r.delay > d.owed_since + $8 THEN '; ' || $9 ELSE '' END,
                status = CASE WHEN \(now) + r.delay > d.owed_since + $8 THEN 'dead' ELSE 'owed' END
            FROM unnest($2::bigint[], $3::bigint[], $4::text[]) AS r(id, delay, answer)
            WHERE d.id = r.id AND d.holder = $7 AND d.status = 'owed')
        UPDATE postback_relay.deliveries d SET holder = NULL, lease_until = NULL, answer = x.answer, status = 'dead'
        FROM unnest($5::bigint[], $6::text[]) AS x(id, answer)
        WHERE d.id = x.id AND d.holder = $7 AND d.status = 'owed'
        """
    /// `$1` ids, `$2` holder.
    static let release = """
        UPDATE postback_relay.deliveries SET holder = NULL, lease_until = NULL, attempts = greatest(0, attempts - 1)
        WHERE id = ANY($1::bigint[]) AND holder = $2 AND status = 'owed'
        """
    static let backlog = """
        SELECT destination, count(*), min(owed_since) FROM postback_relay.deliveries WHERE status = 'owed'
        GROUP BY destination
        """
    static let requeue = """
        UPDATE postback_relay.deliveries SET status = 'owed', owed_since = \(now), due = \(now), attempts = 0,
            holder = NULL, lease_until = NULL
        WHERE status = 'dead'
        """

    private let connection: Locked<PostgresConnection>
    /// When each destination's expired rows were last marked dead (``OutboxExpiry``).
    private let expiry = Locked(OutboxExpiry())
    /// The server and database, for messages (never the password).
    public let target: String

    /// Connects to the state's database, creating the outbox's schema when it has none.
    /// - Parameter connectionString: the `--state` value (libpq string or `postgresql://` URL).
    /// - Throws: ``/Attribution/AttributionError`` when the server cannot be reached or the schema `postback_relay`
    ///   is not ours.
    public init(connectionString: String) throws(AttributionError) {
        let (opened, target) = try PostgresStateDatabase.connect(connectionString)
        self.target = target
        do throws(PostgresFailure) {
            try opened.execute("BEGIN")
            do throws(PostgresFailure) {
                // The schema's creation lock (one of ours: "pbv-rely"), so two receivers starting together make it
                // once.
                try opened.execute("SELECT pg_catalog.pg_advisory_xact_lock(\(0x7062_762D_7265_6C79 as Int64))")
                try opened.execute("SET LOCAL synchronous_commit TO on")
                let exists = try opened.execute(
                    "SELECT count(*) FROM pg_catalog.pg_namespace WHERE nspname = 'postback_relay'").int64(0, 0)
                if exists == 0 {
                    for statement in Self.create { try opened.execute(statement) }
                }
                try opened.execute("COMMIT")
            } catch {
                if opened.isConnected { _ = try? opened.execute("ROLLBACK") }
                throw error
            }
            let versions = try opened.execute("SELECT version FROM postback_relay.schema_version")
            guard versions.rowCount == 1, !versions.isNull(0, 0), versions.int64(0, 0) == Self.schemaVersion else {
                throw PostgresFailure(message: "the schema postback_relay is not this release's outbox (its "
                                      + "schema_version is not one row holding \(Self.schemaVersion)); left as it is")
            }
        } catch {
            throw PostgresStateDatabase.stateError(error, target: target, doing: "cannot open the outbox in",
                                                   opening: true)
        }
        connection = Locked(opened)
    }

    public func claim(destination: String, limit: Int, holder: Int64, leaseMilliseconds: Int64,
                      horizonMilliseconds: Int64) throws(AttributionError) -> [OwedDelivery] {
        let expiring = expiry.withLock { $0.isDue(destination, horizon: horizonMilliseconds) }
        return try run("cannot take deliveries from") { (connection: PostgresConnection) throws(PostgresFailure) in
            if expiring {
                try connection.execute(Self.expire, [
                    .text(destination), .int64(horizonMilliseconds), .text(OutboxAnswers.horizonPassed),
                ], prepare: true)
            }
            let result = try connection.execute(Self.claim, [
                .text(destination), .int64(Int64(limit)), .int64(holder), .int64(leaseMilliseconds),
                .int64(horizonMilliseconds),
            ], prepare: true)
            return (0..<result.rowCount).map { row in
                OwedDelivery(id: result.int64(row, 0), destination: destination, attempts: Int(result.int64(row, 1)),
                             owedSince: result.int64(row, 2), wasReclaimed: result.bool(row, 3),
                             request: result.text(row, 4), route: result.text(row, 5),
                             key: result.isNull(row, 6) ? nil : result.bytes(row, 6), body: result.bytes(row, 7),
                             record: result.bytes(row, 8))
            }
        }
    }

    public func record(_ outcomes: [DeliveryOutcome], holder: Int64, horizonMilliseconds: Int64)
        throws(AttributionError) {
        guard !outcomes.isEmpty else { return }
        var delivered: [Int64] = []
        var retried: [(Int64, Int64, String)] = []
        var dead: [(Int64, String)] = []
        for outcome in outcomes {
            switch outcome.fate {
            case .delivered: delivered.append(outcome.id)
            case .retry(let delay): retried.append((outcome.id, delay, outcome.answer))
            case .dead: dead.append((outcome.id, outcome.answer))
            }
        }
        try run("cannot record deliveries in") { (connection: PostgresConnection) throws(PostgresFailure) in
            _ = try connection.execute(Self.record, [
                .int64Array(delivered), .int64Array(retried.map(\.0)), .int64Array(retried.map(\.1)),
                .textArray(retried.map(\.2)), .int64Array(dead.map(\.0)), .textArray(dead.map(\.1)),
                .int64(holder), .int64(horizonMilliseconds), .text(OutboxAnswers.horizonPassed),
            ], prepare: true)
        }
    }

    public func release(_ ids: [Int64], holder: Int64) throws(AttributionError) {
        guard !ids.isEmpty else { return }
        try run("cannot hand back deliveries to") { (connection: PostgresConnection) throws(PostgresFailure) in
            _ = try connection.execute(Self.release, [.int64Array(ids), .int64(holder)], prepare: true)
        }
    }

    public func backlog() throws(AttributionError) -> [String: OutboxBacklog] {
        try run("cannot read the outbox in") { (connection: PostgresConnection) throws(PostgresFailure) in
            let result = try connection.execute(Self.backlog)
            var backlog: [String: OutboxBacklog] = [:]
            for row in 0..<result.rowCount {
                backlog[result.text(row, 0)] = OutboxBacklog(owed: Int(result.int64(row, 1)),
                                                              oldestOwedSince: result.int64(row, 2))
            }
            return backlog
        }
    }

    public func entries(deadOnly: Bool) throws(AttributionError) -> [OutboxEntry] {
        try run("cannot read the outbox in") { (connection: PostgresConnection) throws(PostgresFailure) in
            let result = try connection.execute("""
                SELECT d.id, d.destination, d.status, d.attempts::bigint, d.owed_since, d.answer, r.request
                FROM postback_relay.deliveries d JOIN postback_verify.received_postbacks r ON r.id = d.postback
                \(deadOnly ? "WHERE d.status = 'dead'" : "") ORDER BY d.id
                """)
            return (0..<result.rowCount).map { row in
                OutboxEntry(id: result.int64(row, 0), destination: result.text(row, 1), status: result.text(row, 2),
                            attempts: Int(result.int64(row, 3)), owedSince: result.int64(row, 4),
                            answer: result.isNull(row, 5) ? nil : result.text(row, 5), request: result.text(row, 6))
            }
        }
    }

    public func requeue(_ id: Int64?) throws(AttributionError) -> Int {
        try run("cannot re-queue deliveries in") { (connection: PostgresConnection) throws(PostgresFailure) in
            if let id { return try connection.execute(Self.requeue + " AND id = $1", [.int64(id)]).changedRows }
            return try connection.execute(Self.requeue).changedRows
        }
    }

    /// Runs `body` on the connection, reconnecting first when it was lost.
    private func run<Value>(_ doing: String, _ body: (PostgresConnection) throws(PostgresFailure) -> Value)
        throws(AttributionError) -> Value {
        try connection.withLock { (connection: inout PostgresConnection) throws(AttributionError) -> Value in
            do throws(PostgresFailure) {
                try connection.reconnectIfNeeded()
                return try body(connection)
            } catch {
                throw PostgresStateDatabase.stateError(error, target: target, doing: doing, opening: false)
            }
        }
    }
}
