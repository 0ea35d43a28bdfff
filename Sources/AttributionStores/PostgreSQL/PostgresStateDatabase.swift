@_spi(Stores) import Attribution
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// The deduplication state in a PostgreSQL database: checked at connection (refused, untouched, unless its
/// `postback_verify` schema is ours or absent), then asked batch by batch with the claim/confirm protocol
/// (``DeduplicationStore``).
///
/// A batch costs one round trip to claim (one statement, ``PostgresSchema/claim``) and one to confirm; no
/// transaction stays open in between, so a caller whose records wait on a slow reader holds up no one. The
/// instance is one owner: the next sighting of one of its claims takes it over once its lease ran out (a
/// heartbeat renews it on a connection of its own, ``PostgresLeaseRenewer``), or at once when it ran on the
/// checker's machine and its process is gone there. A dropped connection alone is not death: the owner
/// reconnects and keeps its claims within its lease. Not thread-safe: one caller at a time
/// (``PostgreSQLDeduplicationStore`` holds it under a lock).
final class PostgresStateDatabase {
    /// How long a statement may wait for a row another call holds, or run at all, before it fails.
    static let statementTimeoutSeconds = 60
    /// Expired rows deleted per pruning statement at most.
    static let pruneLimit: Int64 = 512
    /// Deadlocks are avoided by locking keys in byte order; should one still happen, the statement had no effect
    /// and is run again this many times.
    static let transientRetries = 3

    /// The server and database, for messages (never the password).
    let target: String
    private let retentionMilliseconds: Int64
    private let connection: PostgresConnection
    /// This instance's owner id.
    let owner: Int64
    /// The lease, in milliseconds.
    let leaseMilliseconds: Int64
    /// This owner's lease as its claims and its heartbeat show it.
    let lease: LeaseRecord
    /// Claims another owner took over while this owner's lease had lapsed, with the record each now duplicates,
    /// until ``reaffirm(_:)`` hands them to the caller.
    private var takenOver: [ExactString: DuplicateReference] = [:]
    /// A claim registered the owner (its row, with a whole lease).
    private var isRegistered = false
    private var closed = false
    /// This owner's calls not yet wholly confirmed or released: each call's token and how many of the keys it
    /// claimed are still pending (bounded by what the caller has claimed and not settled).
    private var outstanding: [Int64: Int] = [:]
    /// The call that claimed each pending key.
    private var claimedBy: [ExactString: Int64] = [:]

    /// Batches skip pruning while their cutoff is at most this (see ``StateDatabase``).
    private var prunedThrough: Int64 = .min

    /// Connects, checks the schema, and creates it when the database has none.
    ///
    /// - Parameters:
    ///   - connectionString: a libpq connection string or URL; the password may come from it, `PGPASSWORD` or
    ///     the password file, and is never printed.
    ///   - retentionDays: postbacks first seen longer ago than this count as absent, and are pruned.
    ///   - leaseSeconds: how long this owner's claims outlive a process that stopped renewing them while its
    ///     connection stayed up (a process that dies loses them at once).
    init(connectionString: String, retentionDays: Int, leaseSeconds: Double) throws(AttributionError) {
        retentionMilliseconds = Int64(retentionDays) * 86_400_000
        leaseMilliseconds = max(1, Int64(leaseSeconds * 1000))
        owner = Int64.random(in: 1...Int64.max)
        (connection, target) = try Self.connect(connectionString) { connection throws(PostgresFailure) in
            try Self.startSession(connection)
        }
        lease = LeaseRecord(leaseSeconds: leaseSeconds, target: target)
        try prepareSchema()
    }

    /// Answers `sightings` in order and claims the first sightings for this owner, seen at `time`: one statement,
    /// one round trip (plus, at the start of a run and once a minute after, one bounded pruning statement). A
    /// repeat within `sightings` is a duplicate of its first occurrence there.
    func claim(_ sightings: [PostbackSighting], at time: Date)
        throws(AttributionError) -> [DeduplicationAnswer] {
        try claim(sightings, at: time, confirming: [])
    }

    /// Confirms this owner's claims on `confirming`, then claims `sightings`: one statement when every call it
    /// confirms is confirmed whole (a run confirming its previous batch as it claims the next); a call confirmed
    /// in part is confirmed first, on its own.
    func claim(_ sightings: [PostbackSighting], at time: Date, confirming: [ExactString])
        throws(AttributionError) -> [DeduplicationAnswer] {
        // Calls confirmed whole go along with the claim; keys of calls confirmed only in part are sent first.
        let confirmedAlong = settle(confirming)
        if !confirmedAlong.partKeys.isEmpty {
            try sendConfirm(whole: [], partKeys: confirmedAlong.partKeys, partCalls: confirmedAlong.partCalls)
        }
        guard !sightings.isEmpty else {
            if !confirmedAlong.whole.isEmpty {
                try sendConfirm(whole: confirmedAlong.whole, partKeys: [], partCalls: [])
            }
            return []
        }
        let seen = time.millisecondsSince1970
        let cutoff = seen - retentionMilliseconds
        let token = Int64.random(in: 1...Int64.max)
        let plan = ClaimPlan(sightings)
        let started = ContinuousClock.now
        // Run again after a lost connection (once reconnected): the same token makes a second run change nothing
        // the first committed.
        let duplicates = try run("cannot claim postbacks in", idempotent: true) {
            () throws(PostgresFailure) -> [ExactString: DuplicateReference] in
            if cutoff > prunedThrough { try prune(cutoff) }
            return try sendClaim(sightings, plan, seen: seen, cutoff: cutoff, token: token,
                                 confirming: confirmedAlong.whole)
        }
        registered(at: started)
        let answers = Self.answers(sightings, plan, duplicates, at: time)
        var claimed = 0
        for (index, answer) in answers.enumerated() {
            guard case .firstSeen = answer else { continue }
            claimedBy[plan.keys[index]] = token
            claimed += 1
        }
        if claimed > 0 { outstanding[token] = claimed }
        lease.holdsClaims = !outstanding.isEmpty
        return answers
    }

    /// Claims `sightings` and stores the archive rows `rows` makes from the answers, in one transaction, which
    /// also confirms the claims: the rows are the records written. If anything fails, nothing of it happened (no
    /// claim, no row), and the next sighting of these postbacks is first seen. `synchronousCommit` makes the
    /// commit wait for the server's disk (the session's other commits do not). With no sightings, only the rows.
    func claim(_ sightings: [PostbackSighting], at time: Date, synchronousCommit: Bool,
                       owing destinations: [OutboxDestination] = [],
                       archiving rows: ([DeduplicationAnswer]) -> [ArchivedPostback])
        throws(AttributionError) -> [DeduplicationAnswer] {
        let seen = time.millisecondsSince1970
        let cutoff = seen - retentionMilliseconds
        let plan = ClaimPlan(sightings)
        let started = ContinuousClock.now
        let answers = try run("cannot store received postbacks in") {
            () throws(PostgresFailure) -> [DeduplicationAnswer] in
            if !sightings.isEmpty && cutoff > prunedThrough { try prune(cutoff) }
            let token = Int64.random(in: 1...Int64.max)
            do throws(PostgresFailure) {
                try connection.executeSimple(
                    synchronousCommit ? "BEGIN; SET LOCAL synchronous_commit TO on" : "BEGIN")
                var answers: [DeduplicationAnswer] = []
                if !sightings.isEmpty {
                    let duplicates = try sendClaim(sightings, plan, seen: seen, cutoff: cutoff, token: token,
                                                   confirming: [])
                    answers = Self.answers(sightings, plan, duplicates, at: time)
                }
                let archived = rows(answers)
                var parameters: [PostgresParameter] = [
                    .int64Array(archived.map(\.received)), .textArray(archived.map(\.request)),
                    .textArray(archived.map(\.route)), .textArray(archived.map(\.verdict)),
                    .optionalTextArray(archived.map(\.code)), .optionalBytesArray(archived.map(\.key)),
                    .optionalBytesArray(archived.map(\.body)),
                    .textArray(archived.map { String(decoding: $0.record, as: UTF8.self) }),
                    .textArray(archived.map(\.kept.rawValue)), .int64(token), .int64(owner),
                ]
                let owed = archived.flatMap { row in
                    destinations.filter { $0.owes(row) }.map { (row.request, $0.name) }
                }
                if destinations.isEmpty {
                    try connection.execute(PostgresSchema.archive, parameters, prepare: true)
                } else {
                    // The deliveries are owed in the transaction that stores their rows: a crash after the commit
                    // leaves them owed, one before it leaves neither.
                    parameters += [.textArray(owed.map(\.0)), .textArray(owed.map(\.1))]
                    try connection.execute(PostgresSchema.archiveOwing, parameters, prepare: true)
                }
                try connection.executeSimple("COMMIT")
                return answers
            } catch {
                if connection.isConnected { try? connection.executeSimple("ROLLBACK") }
                throw error
            }
        }
        if !sightings.isEmpty { registered(at: started) }
        return answers
    }

    /// A batch's keys as a claim sends them: each key once, at its first occurrence (`occurrence[i]`: the index
    /// of sighting i's first occurrence), in byte order, so that two calls lock shared keys in the same order
    /// (bytea compares like memcmp).
    private struct ClaimPlan {
        let keys: [ExactString]
        var first: [ExactString: Int] = [:]
        var distinct: [Int] = []
        var occurrence: [Int] = []

        init(_ sightings: [PostbackSighting]) {
            keys = sightings.map(\.key)
            first.reserveCapacity(sightings.count)
            distinct.reserveCapacity(sightings.count)
            occurrence.reserveCapacity(sightings.count)
            for (index, key) in keys.enumerated() {
                if let earlier = first[key] {
                    occurrence.append(earlier)
                } else {
                    first[key] = index
                    distinct.append(index)
                    occurrence.append(index)
                }
            }
            let keys = keys
            distinct.sort { keys[$0].precedes(keys[$1]) }
        }
    }

    /// Runs the claim statement (``PostgresSchema/claim``) as call `token`, confirming the calls `confirming`:
    /// the rows that are not this call's, by key. When some are pending for an owner on this machine whose
    /// process is gone, runs it once more with those owners known dead (only then: a second round trip).
    private func sendClaim(_ sightings: [PostbackSighting], _ plan: ClaimPlan, seen: Int64, cutoff: Int64,
                           token: Int64, confirming: [Int64])
        throws(PostgresFailure) -> [ExactString: DuplicateReference] {
        var dead: [Int64] = []
        while true {
            let (duplicates, found) = try sendClaim(sightings, plan, seen: seen, cutoff: cutoff, token: token,
                                                    confirming: dead.isEmpty ? confirming : [], dead: dead)
            if found.isEmpty || !dead.isEmpty { return duplicates }
            dead = found
        }
    }

    /// One run of the claim statement: the duplicates, and the owners of pending ones that are known dead (on
    /// this machine, their process gone).
    private func sendClaim(_ sightings: [PostbackSighting], _ plan: ClaimPlan, seen: Int64, cutoff: Int64,
                           token: Int64, confirming: [Int64], dead: [Int64])
        throws(PostgresFailure) -> ([ExactString: DuplicateReference], dead: [Int64]) {
        let distinct = plan.distinct
        let result = try connection.execute(PostgresSchema.claim, [
            .bytesArray(distinct.map { sightings[$0].key.utf8 }),
            .textArray(distinct.map { sightings[$0].source }),
            .int64Array(distinct.map { Int64(sightings[$0].line) }),
            .optionalBytesArray(distinct.map { sightings[$0].content?.bytes }),
            .int64(seen), .int64(cutoff), .int64(owner), .int64(token), .int64(leaseMilliseconds),
            .text(DeduplicationOwner.thisHost), .int64(Int64(DeduplicationOwner.thisProcess)),
            .int64Array(confirming), .int64Array(dead),
        ], prepare: true)
        var duplicates: [ExactString: DuplicateReference] = [:]
        var found: Set<Int64> = []
        for row in 0..<result.rowCount {
            let key = ExactString(utf8: result.bytes(row, 0))
            guard plan.first[key] != nil else {
                throw PostgresFailure(message: "the claim answered for a key it was not given")
            }
            duplicates[key] = DuplicateReference(
                source: result.text(row, 2), line: Int(result.int64(row, 3)),
                firstSeen: Date(milliseconds: result.int64(row, 1)),
                firstContent: result.isNull(row, 4) ? nil : ContentFingerprint(bytes: result.bytes(row, 4)),
                isPending: result.bool(row, 5))
            if !result.isNull(row, 6), !DeduplicationOwner.isAlive(
                host: result.text(row, 7), process: result.int64(row, 8), leaseUntil: .max, now: 0) {
                found.insert(result.int64(row, 6))
            }
        }
        return (duplicates, Array(found))
    }

    /// Each sighting's answer: a duplicate of the row the claim returned for its key, a duplicate (pending) of its
    /// first occurrence in the batch, or first seen.
    private static func answers(_ sightings: [PostbackSighting], _ plan: ClaimPlan,
                                _ duplicates: [ExactString: DuplicateReference], at time: Date)
        -> [DeduplicationAnswer] {
        sightings.indices.map { index -> DeduplicationAnswer in
            // Most batches have no duplicate: no lookup then.
            if !duplicates.isEmpty, let reference = duplicates[plan.keys[index]] { return .duplicate(of: reference) }
            if plan.occurrence[index] == index { return .firstSeen }
            // A repeat within this call of a key it claimed: a duplicate of that first occurrence, pending.
            let original = sightings[plan.occurrence[index]]
            return .duplicate(of: DuplicateReference(source: original.source, line: original.line, firstSeen: time,
                                                     firstContent: original.content, isPending: true))
        }
    }

    /// Confirms this owner's claims on `keys`, once their records were delivered (one round trip, one row per
    /// call whose keys are all confirmed); keys it does not hold (duplicates, claims taken over) are left alone.
    func confirm(_ keys: [ExactString]) throws(AttributionError) {
        let (whole, partKeys, partCalls) = settle(keys)
        try sendConfirm(whole: whole, partKeys: partKeys, partCalls: partCalls)
    }

    /// Confirms the calls `whole` entirely, and the keys `partKeys` of the calls `partCalls`.
    private func sendConfirm(whole: [Int64], partKeys: [ExactString], partCalls: [Int64]) throws(AttributionError) {
        guard !whole.isEmpty || !partKeys.isEmpty else { return }
        // Sent without waiting: the server confirms while the caller goes on, and the next call (or the
        // heartbeat) reads the outcome. A run that ends first has still sent it: the server runs it all the same.
        try run("cannot confirm postbacks in", idempotent: true) { () throws(PostgresFailure) in
            try connection.send(PostgresSchema.confirm, [
                .int64Array(whole), .bytesArray(partKeys.map(\.utf8)), .int64(owner), .int64Array(partCalls),
            ])
        }
        lease.holdsClaims = !outstanding.isEmpty
    }

    /// Withdraws this owner's claims on `keys`: their records were not delivered, so the next sighting is new.
    func release(_ keys: [ExactString]) throws(AttributionError) {
        let pending = keys.compactMap { key in claimedBy[key].map { (key, $0) } }
        let (whole, _, _) = settle(keys)
        lease.holdsClaims = !outstanding.isEmpty
        guard !pending.isEmpty || !whole.isEmpty else { return }
        try run("cannot release claims in", idempotent: true) { () throws(PostgresFailure) in
            try connection.execute(PostgresSchema.release, [
                .bytesArray(pending.map(\.0.utf8)), .int64Array(Array(Set(pending.map(\.1)))), .int64Array(whole),
                .int64(owner),
            ])
        }
    }

    /// Takes `keys` out of the pending claims: the calls left with nothing pending, and, for calls settled only in
    /// part, those keys and their calls.
    private func settle(_ keys: [ExactString]) -> (whole: [Int64], partKeys: [ExactString], partCalls: [Int64]) {
        guard !keys.isEmpty else { return ([], [], []) }
        var touched: [Int64: [ExactString]] = [:]
        for key in keys {
            guard let call = claimedBy.removeValue(forKey: key) else { continue }
            touched[call, default: []].append(key)
            outstanding[call, default: 0] -= 1
        }
        var whole: [Int64] = []
        var partKeys: [ExactString] = []
        var partCalls: [Int64] = []
        for (call, keys) in touched {
            if outstanding[call, default: 0] <= 0 {
                outstanding.removeValue(forKey: call)
                whole.append(call)
            } else {
                partKeys += keys
                partCalls.append(call)
            }
        }
        return (whole, partKeys, partCalls)
    }

    /// One round trip to the server (the readiness probe).
    func probe() throws(AttributionError) {
        try run("cannot reach") { () throws(PostgresFailure) in
            try connection.execute("SELECT 1")
        }
    }

    /// After a claim sent at `started` succeeded: the first one registered the owner with a whole lease, which it
    /// shows; later ones leave the lease to the heartbeat.
    private func registered(at started: ContinuousClock.Instant) {
        guard !isRegistered else { return }
        isRegistered = true
        lease.renewed(at: started)
    }

    /// Checks, after a renewal found this owner's lease lapsed, which of its pending claims another owner took
    /// over meanwhile (one statement; rare, never on the way of a batch): those are no longer its own, and
    /// ``reaffirm(_:)`` answers them as duplicates of the other owner's record.
    func checkClaimsAfterLapse() throws(AttributionError) {
        guard !claimedBy.isEmpty else { return }
        let keys = Array(claimedBy.keys)
        let calls = Array(outstanding.keys)
        let result = try run("cannot check claims in", idempotent: true) {
            () throws(PostgresFailure) -> PostgresResult in
            try connection.execute(PostgresSchema.lostClaims, [.bytesArray(keys.map(\.utf8)), .int64Array(calls)])
        }
        var lost: [ExactString] = []
        for row in 0..<result.rowCount {
            let key = ExactString(utf8: result.bytes(row, 0))
            guard claimedBy[key] != nil else { continue }
            takenOver[key] = DuplicateReference(
                source: result.text(row, 2), line: Int(result.int64(row, 3)),
                firstSeen: Date(milliseconds: result.int64(row, 1)),
                firstContent: result.isNull(row, 4) ? nil : ContentFingerprint(bytes: result.bytes(row, 4)),
                isPending: result.bool(row, 5))
            lost.append(key)
        }
        // Out of this owner's pending claims: the rows are another owner's now. A call left with none is
        // forgotten (its `claims` row deleted), as a release would.
        let (whole, _, _) = settle(lost)
        if !whole.isEmpty {
            try run("cannot check claims in", idempotent: true) { () throws(PostgresFailure) in
                try connection.execute(PostgresSchema.release, [
                    .bytesArray([]), .int64Array([]), .int64Array(whole), .int64(owner),
                ])
            }
        }
        lease.holdsClaims = !outstanding.isEmpty
    }

    /// The keys among `keys` whose claims another owner took over while this owner's lease had lapsed (found by
    /// ``checkClaimsAfterLapse()``), each with the record it now duplicates; handed over once.
    func reaffirm(_ keys: [ExactString]) -> [ExactString: DuplicateReference] {
        guard !takenOver.isEmpty else { return [:] }
        var lost: [ExactString: DuplicateReference] = [:]
        for key in keys {
            if let reference = takenOver.removeValue(forKey: key) { lost[key] = reference }
        }
        return lost
    }

    /// Withdraws every claim this owner still holds and forgets the owner; not used after.
    func close() {
        guard !closed else { return }
        closed = true
        lease.close()
        if connection.isConnected {
            try? connection.finishSent()
            let pending = Array(claimedBy.keys)
            if !pending.isEmpty { try? release(pending) }
            _ = try? connection.execute(PostgresSchema.close, [.int64(owner)])
        }
    }

    /// How many postbacks the database remembers (claims and expired rows not yet pruned included).
    func count() throws(AttributionError) -> Int {
        try run("cannot read") { () throws(PostgresFailure) in
            Int(try connection.execute(PostgresSchema.count).int64(0, 0))
        }
    }

    /// Deletes a bounded share of the rows past the retention; once fewer than a share were left, looks again
    /// only when the cutoff has moved on by a minute, and forgets owners long dead.
    private func prune(_ cutoff: Int64) throws(PostgresFailure) {
        let pruned = try connection.execute(PostgresSchema.prune, [.int64(cutoff), .int64(Self.pruneLimit)])
        if pruned.changedRows < Self.pruneLimit {
            prunedThrough = cutoff + 60_000
            try connection.execute(PostgresSchema.pruneClaims, [.int64(cutoff), .int64(2 * leaseMilliseconds)])
        }
    }

    /// Runs `body`, reconnecting first if the connection was lost, and again (at most ``transientRetries`` times)
    /// after a deadlock or serialisation failure; when `idempotent` (running it twice changes nothing more than
    /// once), also once more after the connection dropped under it: a live owner reconnects and goes on.
    @discardableResult
    private func run<Value>(
        _ doing: String, idempotent: Bool = false, _ body: () throws(PostgresFailure) -> Value
    ) throws(AttributionError) -> Value {
        var attempt = 0
        var reconnected = false
        while true {
            do throws(PostgresFailure) {
                try connection.reconnectIfNeeded()
                return try body()
            } catch where error.isTransient && attempt < Self.transientRetries {
                attempt += 1
            } catch where error.connectionLost && idempotent && !reconnected {
                reconnected = true
            } catch {
                throw Self.stateError(error, target: target, doing: doing, opening: false)
            }
        }
    }

    // MARK: The session and the schema

    /// Parses `connectionString` (a `--state` value) and connects: how the store and the archive reader open a
    /// PostgreSQL state. Every session (and every reconnection) first gets the search path our statements need
    /// (they name every object with its schema; functions resolve in pg_catalog first) and the statement
    /// timeout, then `session`. Returns the connection and the target its messages name (never the password).
    static func connect(
        _ connectionString: String,
        session: @escaping (PostgresConnection) throws(PostgresFailure) -> Void = { _ throws(PostgresFailure) in }
    ) throws(AttributionError) -> (PostgresConnection, String) {
        let parsed: PostgresConnectionString
        do {
            parsed = try PostgresConnectionString(connectionString)
        } catch {
            throw AttributionError(.cannotOpen, "--state: \(error.message); write a libpq connection string "
                                   + "(host=... dbname=...) or a postgresql:// URL, see docs/state.md")
        }
        let target = "PostgreSQL state (\(parsed.description))"
        do {
            let connection = try PostgresConnection(parsed) { connection throws(PostgresFailure) in
                try connection.execute("SET search_path TO pg_catalog, pg_temp")
                try connection.execute("SET statement_timeout TO '\(statementTimeoutSeconds)s'")
                try session(connection)
            }
            return (connection, target)
        } catch {
            throw stateError(error, target: target, doing: "cannot connect to", opening: true)
        }
    }

    /// Settings for a new connection of the store (first, and after a reconnect).
    private static func startSession(_ connection: PostgresConnection) throws(PostgresFailure) {
        try connection.execute("SET lock_timeout TO '\(statementTimeoutSeconds)s'")
        // A commit lost in a server crash forgets a key or leaves a claim unconfirmed: either way the postback
        // is reported valid again, never lost (docs/state.md), so a commit need not wait for the disk.
        try connection.execute("SET synchronous_commit TO off")
        // The server notices a client machine that vanished (its owner is then dead) within about a minute.
        try connection.execute("SET tcp_keepalives_idle TO 30")
        try connection.execute("SET tcp_keepalives_interval TO 10")
        try connection.execute("SET tcp_keepalives_count TO 3")
    }

    /// Refuses, before anything writes, a `postback_verify` schema that is not exactly ours at our version;
    /// creates it (in one transaction, one connection at a time) when there is none.
    private func prepareSchema() throws(AttributionError) {
        do throws(PostgresFailure) {
            if try !hasTables() { try create() }
            if try Self.describe(connection) == PostgresSchema.expectedVersion1 { try migrateFromVersion1() }
        } catch {
            throw Self.stateError(error, target: target, doing: "cannot create the schema postback_verify in",
                                  opening: true)
        }
        try Self.check(connection, target: target)
    }

    /// Adds the archive to a version-1 schema, in one transaction, unless another connection did meanwhile (a
    /// second migrator waits on the advisory lock, then finds version 2).
    private func migrateFromVersion1() throws(PostgresFailure) {
        try connection.execute("BEGIN")
        do throws(PostgresFailure) {
            try connection.execute("SELECT pg_catalog.pg_advisory_xact_lock(\(Self.creationLock))")
            try connection.execute("SET LOCAL synchronous_commit TO on")
            let versions = try connection.execute(PostgresSchema.versions)
            if try Self.describe(connection) == PostgresSchema.expectedVersion1, versions.rowCount == 1,
               !versions.isNull(0, 0), versions.int64(0, 0) == 1 {
                for statement in PostgresSchema.migrationFromVersion1 { try connection.execute(statement) }
            }
            try connection.execute("COMMIT")
        } catch {
            if connection.isConnected { _ = try? connection.execute("ROLLBACK") }
            throw error
        }
    }

    /// Creates the schema in one transaction, unless another connection made it meanwhile (a second creator
    /// waits on the advisory lock, then finds the tables and leaves them to ``check()``).
    private func create() throws(PostgresFailure) {
        try connection.execute("BEGIN")
        do throws(PostgresFailure) {
            try connection.execute("SELECT pg_catalog.pg_advisory_xact_lock(\(Self.creationLock))")
            // Unlike a claim, the schema must survive a crash of the server the moment after.
            try connection.execute("SET LOCAL synchronous_commit TO on")
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
        return try !Self.describe(connection).isEmpty
    }

    static func describe(_ connection: PostgresConnection) throws(PostgresFailure) -> [String] {
        let result = try connection.execute(PostgresSchema.describe)
        return (0..<result.rowCount).map { result.text($0, 0) }
    }

    /// The schema is ours at our version, or the reason it is not (nothing written).
    static func check(_ connection: PostgresConnection, target: String) throws(AttributionError) {
        let left = "left as it is"
        do {
            let described = try describe(connection)
            if described.contains("column schema_version.version integer not null") {
                let versions = try connection.execute(PostgresSchema.versions)
                guard versions.rowCount == 1, !versions.isNull(0, 0) else {
                    throw AttributionError(.damaged, "\(target) is damaged: postback_verify.schema_version has "
                                           + "\(versions.rowCount) rows, not one; \(left)")
                }
                let version = versions.int64(0, 0)
                if version > PostgresSchema.version {
                    throw AttributionError(.newerSchema, "\(target) has schema version \(version), newer than this "
                                           + "postback-verify knows (\(PostgresSchema.version)): use a later release")
                }
                if version != PostgresSchema.version {
                    throw AttributionError(.damaged, "\(target) is damaged: unknown schema version \(version); \(left)")
                }
            }
            guard described == PostgresSchema.expected else {
                let missing = PostgresSchema.expected.filter { !described.contains($0) }
                let foreign = described.filter { !PostgresSchema.expected.contains($0) }
                let difference = (missing.prefix(3).map { "missing \($0)" }
                    + foreign.prefix(3).map { "unexpected \($0)" }).joined(separator: "; ")
                throw AttributionError(.notOurs, "\(target): the schema postback_verify is not postback-verify's "
                                       + "(\(difference)); \(left)")
            }
        } catch let error as AttributionError {
            throw error
        } catch let failure as PostgresFailure {
            throw Self.stateError(failure, target: target, doing: "cannot check", opening: true)
        } catch {
            throw AttributionError(.failed, "\(target): \(error)")
        }
    }

    /// What a failure means for the state, with what to do about it.
    static func stateError(_ failure: PostgresFailure, target: String, doing: String, opening: Bool)
        -> AttributionError {
        let access = "check the user, the password (PGPASSWORD or ~/.pgpass; never put it on a command line), "
            + "the database name and the server's pg_hba.conf"
        if opening && failure.connectionLost {
            // libpq gives no SQLSTATE for a refused connection: the server's own words say whether it answered.
            let message = failure.message
            if message.contains("no password supplied") {
                return AttributionError(.cannotOpen, "\(doing) \(target): the server asks for a password and none was "
                                        + "given (\(message)); put it in PGPASSWORD or ~/.pgpass (see docs/state.md)")
            }
            if message.contains("FATAL:") || message.contains("authentication") {
                return AttributionError(.cannotOpen, "\(doing) \(target): the server refused the connection "
                                        + "(\(message)); \(access)")
            }
            return AttributionError(.cannotOpen, "\(doing) \(target): the server cannot be reached (\(message)); check "
                                    + "that it is running and that host and port are right")
        }
        if failure.connectionLost {
            return AttributionError(.unavailable, "\(doing) \(target): the connection to the server was lost "
                                    + "(\(failure.message)); the records written so far stand: run again once the "
                                    + "server is back (postbacks whose records were written but not confirmed are then "
                                    + "reported valid once more; none is lost)")
        }
        if failure.isAccessDenied {
            return AttributionError(.cannotOpen, "\(doing) \(target): \(failure.message) (SQLSTATE "
                                    + "\(failure.sqlState ?? "")); \(access); docs/state.md lists the privileges "
                                    + "needed")
        }
        if failure.sqlState == "55P03" || failure.sqlState == "57014" {
            return AttributionError(.busy, "\(doing) \(target): waited \(statementTimeoutSeconds) s for rows another "
                                    + "connection holds (\(failure.message))")
        }
        let state = failure.sqlState.map { " (SQLSTATE \($0))" } ?? ""
        return AttributionError(.failed, "\(doing) \(target): \(failure.message)\(state)")
    }
}
