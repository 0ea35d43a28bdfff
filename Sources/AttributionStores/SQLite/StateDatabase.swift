@_spi(Stores) import Attribution
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// The deduplication state in one SQLite file, by claim and confirm (``DeduplicationStore``): refused at opening,
/// untouched, unless it is ours; then each call is one short transaction.
///
/// ``claim(_:at:)`` takes the write lock (`BEGIN IMMEDIATE`, waited for up to ``busyTimeout``), inserts each new
/// key as a claim of this owner (a row whose `owner` is ours), answers every sighting and commits: other runs see
/// the claims at once, and no lock is held while the caller writes its records. ``confirm(_:)`` then clears the
/// rows' `owner`, in another short transaction; ``release(_:)`` deletes them. A claim whose owner died (its
/// process is gone from this machine, or its lease ran out) is taken over by the next sighting. Each instance is
/// one owner, registered in `owners` at its first claim and removed, with any claim it still holds, by
/// ``close()``.
///
/// Not thread-safe: ``SQLiteDeduplicationStore`` wraps it in a lock.
final class StateDatabase {
    /// How long a run waits for another run's transaction (or a `sqlite3` shell's) before giving up.
    static let busyTimeout: Int32 = 60_000
    /// Expired rows deleted per claim at most: pruning keeps pace with inserts without a pause of its own.
    static let pruneLimit: Int64 = 512

    let path: String
    private let retentionMilliseconds: Int64
    /// How long an owner's claims stay its own without a heartbeat.
    let leaseMilliseconds: Int64
    private let connection: SQLiteConnection
    private let insert: SQLiteStatement
    private let lookup: SQLiteStatement
    private let lookupUnhashed: SQLiteStatement
    private let anyUnhashed: SQLiteStatement
    private let takeOver: SQLiteStatement
    private let claimAt: SQLiteStatement
    private let ownRuns: SQLiteStatement
    private let deleteRun: SQLiteStatement
    private let insertRun: SQLiteStatement
    private let deletePostbacks: SQLiteStatement
    private let renewLease: SQLiteStatement
    private let ownerLookup: SQLiteStatement
    private let prune: SQLiteStatement
    /// Claims are pruned while their cutoff is past this: set a minute past a cutoff whose pruning found fewer
    /// than ``pruneLimit`` expired rows among the oldest, so a run (whose cutoff never moves) stops looking once the
    /// old rows are gone, and a server looks again once a minute has expired more.
    private var prunedThrough: Int64 = .min
    /// This instance's row in `owners`, once it claimed something.
    private var ownerID: Int64?
    /// The rows of this owner's unconfirmed claims, by key (filed by its hash): confirm and release go by row, and
    /// the heartbeat renews the lease only while there are some.
    private var claimed = ClaimedKeys()
    /// When this owner's lease was last renewed (milliseconds since 1970).
    private var leaseRenewed: Int64 = 0
    /// This owner's lease as its claims and its heartbeat (``SQLiteLeaseRenewer``, on a connection of its own)
    /// show it.
    let lease: LeaseRecord
    /// The id this owner registers under at its first claim (random: never a dead owner's).
    let plannedOwner = Int64.random(in: 1...Int64.max)
    /// A renewal made by the transaction in progress, shown once it commits.
    private var uncommittedRenewal: ContinuousClock.Instant?
    /// Claims another owner took over while this owner's lease had lapsed, with the record each now duplicates,
    /// until ``reaffirm(_:)`` hands them to the caller.
    private var takenOver: [ExactString: DuplicateReference] = [:]

    /// Opens the state at `path`, creating it when missing (or empty), migrating a version-1 file, and refusing,
    /// untouched, a file that is not exactly ours, is damaged, or has a newer schema: it is opened read-only and
    /// its every table, column, index and constraint checked before anything writes to it.
    ///
    /// - Parameters:
    ///   - retentionDays: postbacks first seen longer ago than this are forgotten.
    ///   - leaseSeconds: how long this owner's claims outlive its last heartbeat.
    init(path: String, retentionDays: Int, leaseSeconds: Double = 30) throws(AttributionError) {
        self.path = path
        retentionMilliseconds = Int64(retentionDays) * 86_400_000
        leaseMilliseconds = Int64(leaseSeconds * 1000)
        lease = LeaseRecord(leaseSeconds: leaseSeconds, target: "state file \(path)")
        var existing = try Self.existingSize(path)
        if existing == nil, Self.createWhole(path) { existing = try Self.existingSize(path) }
        if let existing, existing > 0 {
            let reader = try Self.open(path, readOnly: true)
            guard try Self.schemaVersion(reader, path: path, thorough: true) != nil else {
                throw AttributionError(.notOurs, "\(path) is a SQLite database without postback-verify's "
                                       + "\(StateSchema.versionTable) table: not a state file, left as it is")
            }
        }
        let connection = try Self.open(path, readOnly: false)
        self.connection = connection
        do {
            // A new file gets its tables in one commit before anything else is written (not WAL mode first): another
            // run that opens it meanwhile finds it empty (new) or complete, never a database without our tables.
            try Self.createOrMigrate(connection, path: path)
            try Self.useWriteAheadLog(connection)
            // A run ends without waiting for the disk: its last transactions stay in the log (which carries
            // checksums), synced by a later checkpoint. Power loss before then loses them: their postbacks are
            // reported valid again.
            connection.skipCheckpointOnClose()
            // NORMAL: in WAL mode a commit is not synced, a checkpoint is; power loss can undo the last commits
            // (their postbacks are then reported valid again), never corrupt the file. A 16 MiB page cache and
            // checkpoints every 64 MiB of log: fewer reads and rewrites of the same index pages, memory still fixed.
            try connection.execute("PRAGMA synchronous = NORMAL; PRAGMA cache_size = -16384; "
                                   + "PRAGMA wal_autocheckpoint = 16384; PRAGMA journal_size_limit = 67108864")
            insert = try connection.prepare(StateSchema.insert)
            lookup = try connection.prepare(StateSchema.lookup)
            lookupUnhashed = try connection.prepare(StateSchema.lookupUnhashed)
            anyUnhashed = try connection.prepare(StateSchema.anyUnhashed)
            takeOver = try connection.prepare(StateSchema.takeOver)
            claimAt = try connection.prepare(StateSchema.claimAt)
            ownRuns = try connection.prepare(StateSchema.ownRuns)
            deleteRun = try connection.prepare(StateSchema.deleteRun)
            insertRun = try connection.prepare(StateSchema.insertRun)
            deletePostbacks = try connection.prepare(StateSchema.deletePostbacks)
            renewLease = try connection.prepare(StateSchema.renewLease)
            ownerLookup = try connection.prepare(StateSchema.owner)
            prune = try connection.prepare(StateSchema.prune)
        } catch let error as SQLiteFailure {
            throw Self.stateError(error, path: path, doing: "cannot use state file")
        } catch let error as AttributionError {
            throw error
        } catch {
            throw AttributionError(.failed, "cannot use state file \(path): \(error)")
        }
    }

    // MARK: - Claim, confirm, release

    /// One short transaction: prunes a bounded share of expired rows, answers `sightings` in order and claims each
    /// first sighting (seen at `time`) for this owner, then commits. Rows older than the retention count as
    /// absent even before pruning reaches them. On a throw, nothing was claimed.
    func claim(_ sightings: [PostbackSighting], at time: Date, confirming: [ExactString] = [])
        throws(AttributionError) -> [DeduplicationAnswer] {
        let seen = time.millisecondsSince1970
        let cutoff = seen - retentionMilliseconds
        let started = ContinuousClock.now
        let now = Date().millisecondsSince1970
        do throws(SQLiteFailure) {
            try connection.execute("BEGIN IMMEDIATE")
            let owner = try registeredOwner(now: now, started: started)
            let confirmingHashes = confirming.map { StateKeyHash.of($0.utf8) }
            let confirmed = zip(confirming, confirmingHashes).compactMap { claimed.row($0, hash: $1) }
            try settleRows(confirmed, releasing: false, owner: owner)
            if cutoff > prunedThrough {
                try prune.bind(1, cutoff)
                try prune.bind(2, Self.pruneLimit)
                try prune.run()
                let pruned = connection.changes
                if pruned > 0 { try connection.execute(StateSchema.pruneClaims) }
                if pruned < Self.pruneLimit {
                    prunedThrough = cutoff + 60_000
                    let owners = try connection.prepare(StateSchema.pruneOwners)
                    try owners.bind(1, now - 2 * leaseMilliseconds)
                    try owners.run()
                }
            }
            hasUnhashed = try anyUnhashed.step() && anyUnhashed.int64(0) != 0
            anyUnhashed.reset()
            var liveness: [Int64: Bool] = [:]
            var answers: [DeduplicationAnswer] = []
            answers.reserveCapacity(sightings.count)
            var rows: [(key: ExactString, hash: Int64, row: Int64)] = []
            rows.reserveCapacity(sightings.count)
            // The rows this call claimed: those it inserted (from `firstInserted` on: it holds the write lock, and a
            // new row's id is past every other) and those it took over.
            var claimedHere = ClaimedRows()
            for sighting in sightings {
                let (answer, row, inserted, hash) = try answer(sighting, seen: seen, cutoff: cutoff, owner: owner,
                                                               now: now, claimedHere: claimedHere, liveness: &liveness)
                if let row {
                    rows.append((sighting.key, hash, row))
                    claimedHere.insert(row, inserted: inserted)
                }
                answers.append(answer)
            }
            for (lo, hi) in Self.runs(of: rows.map(\.row)) {
                try insertRun.bind(1, lo)
                try insertRun.bind(2, hi)
                try insertRun.bind(3, owner)
                try insertRun.run()
            }
            try connection.execute("COMMIT")
            if !confirmed.isEmpty {
                for (key, hash) in zip(confirming, confirmingHashes) { claimed.remove(key, hash: hash) }
            }
            for (key, hash, row) in rows { claimed.insert(key, hash: hash, row: row) }
            committed()
            return answers
        } catch {
            rollback()
            throw Self.stateError(error, path: path, doing: "cannot read or write state file")
        }
    }

    /// Confirms this owner's claims on `keys`, in one short transaction.
    func confirm(_ keys: [ExactString]) throws(AttributionError) {
        try settle(keys, releasing: false)
    }

    /// Drops this owner's claims on `keys`, in one short transaction.
    func release(_ keys: [ExactString]) throws(AttributionError) {
        try settle(keys, releasing: true)
    }

    /// After a commit: shows the renewal it made, and tells the heartbeat whether claims are held.
    private func committed() {
        if let renewal = uncommittedRenewal { lease.renewed(at: renewal) }
        uncommittedRenewal = nil
        lease.holdsClaims = !claimed.isEmpty
    }

    /// Checks, after a renewal found this owner's lease lapsed, which of its claims another owner took over
    /// meanwhile (one read-only pass over its claims: rare, never on the way of a batch): those are no longer
    /// its own, and ``reaffirm(_:)`` answers them as duplicates of the other owner's record. A claim whose row
    /// is gone (taken over, then released) stays this owner's as far as it knows (docs/state.md).
    func checkClaimsAfterLapse() throws(AttributionError) {
        guard let ownerID, !claimed.isEmpty else { return }
        do throws(SQLiteFailure) {
            let row = try connection.prepare(StateSchema.row)
            for (key, hash, id) in claimed.entries {
                try claimAt.bind(1, id)
                var holder: Int64?
                if try claimAt.step(), claimAt.int64(1) >= id { holder = claimAt.int64(2) }
                claimAt.reset()
                guard holder != ownerID else { continue }
                try row.bind(1, id)
                defer { row.reset() }
                guard try row.step() else { continue }
                takenOver[key] = DuplicateReference(
                    source: row.text(1), line: Int(row.int64(2)), firstSeen: Date(milliseconds: row.int64(0)),
                    firstContent: row.blob(3).flatMap(ContentFingerprint.init(bytes:)), isPending: holder != nil)
                claimed.remove(key, hash: hash)
            }
            lease.holdsClaims = !claimed.isEmpty
        } catch {
            throw Self.stateError(error, path: path, doing: "cannot check claims in state file")
        }
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

    /// Releases every claim this owner still holds and removes it from `owners`; the store is not used after.
    func close() {
        guard let ownerID else { return }
        do throws(SQLiteFailure) {
            try connection.execute("BEGIN IMMEDIATE")
            try settleRows(claimed.rows, releasing: true, owner: ownerID)
            let forget = try connection.prepare(StateSchema.forgetOwner)
            try forget.bind(1, ownerID)
            try forget.run()
            try connection.execute("COMMIT")
        } catch {
            // The claims stay behind with a dead owner: the next sighting takes each over.
            rollback()
        }
        self.ownerID = nil
        claimed.removeAll()
        lease.close()
    }

    /// Reads the schema's first row: the file is there, readable and a database (the readiness probe).
    func probe() throws(AttributionError) {
        do throws(SQLiteFailure) {
            let statement = try connection.prepare("SELECT count(*) FROM sqlite_schema")
            _ = try statement.step()
        } catch {
            throw Self.stateError(error, path: path, doing: "cannot read state file")
        }
    }

    /// How many postbacks the file remembers, claimed or confirmed (expired rows not yet pruned included).
    func count() throws(AttributionError) -> Int {
        do throws(SQLiteFailure) {
            let statement = try connection.prepare(StateSchema.count)
            return try statement.step() ? Int(statement.int64(0)) : 0
        } catch {
            throw Self.stateError(error, path: path, doing: "cannot read state file")
        }
    }

    private func rollback() {
        uncommittedRenewal = nil
        if connection.isInTransaction { try? connection.execute("ROLLBACK") }
    }

    /// Confirms or releases this owner's claims on `keys` in one transaction, renewing the lease.
    private func settle(_ keys: [ExactString], releasing: Bool) throws(AttributionError) {
        guard let ownerID else { return }
        let hashes = keys.map { StateKeyHash.of($0.utf8) }
        let rows = zip(keys, hashes).compactMap { claimed.row($0, hash: $1) }
        guard !rows.isEmpty else { return }
        let started = ContinuousClock.now
        let now = Date().millisecondsSince1970
        do throws(SQLiteFailure) {
            try connection.execute("BEGIN IMMEDIATE")
            try settleRows(rows, releasing: releasing, owner: ownerID)
            _ = try registeredOwner(now: now, started: started)
            try connection.execute("COMMIT")
            for (key, hash) in zip(keys, hashes) { claimed.remove(key, hash: hash) }
            committed()
        } catch {
            rollback()
            throw Self.stateError(error, path: path, doing: releasing ? "cannot release claims in state file"
                                  : "cannot confirm claims in state file")
        }
    }

    /// Confirms (or releases) this owner's claims on `rows`: takes them out of its runs of claims (a batch's claims
    /// are one run, so usually one statement), and, releasing, deletes the postbacks' rows it still held.
    private func settleRows(_ rows: [Int64], releasing: Bool, owner: Int64) throws(SQLiteFailure) {
        for (first, last) in Self.runs(of: rows) {
            try ownRuns.bind(1, owner)
            try ownRuns.bind(2, first)
            try ownRuns.bind(3, last)
            var overlapping: [(Int64, Int64)] = []
            while try ownRuns.step() { overlapping.append((ownRuns.int64(0), ownRuns.int64(1))) }
            ownRuns.reset()
            for (lo, hi) in overlapping {
                if releasing {
                    try deletePostbacks.bind(1, max(lo, first))
                    try deletePostbacks.bind(2, min(hi, last))
                    try deletePostbacks.run()
                }
                try replaceRun(lo: lo, hi: hi, owner: owner, without: first...last)
            }
        }
    }

    /// Replaces the run of claims `lo`...`hi` by what is left of it without `rows`.
    private func replaceRun(lo: Int64, hi: Int64, owner: Int64, without rows: ClosedRange<Int64>)
        throws(SQLiteFailure) {
        try deleteRun.bind(1, lo)
        try deleteRun.run()
        for (left, right) in [(lo, min(hi, rows.lowerBound - 1)), (max(lo, rows.upperBound + 1), hi)]
        where left <= right {
            try insertRun.bind(1, left)
            try insertRun.bind(2, right)
            try insertRun.bind(3, owner)
            try insertRun.run()
        }
    }

    /// The runs of consecutive values in `rows`, as (first, last) pairs.
    private static func runs(of rows: [Int64]) -> [(Int64, Int64)] {
        let sorted = rows.sorted()
        var runs: [(Int64, Int64)] = []
        for row in sorted {
            if let last = runs.last, row == last.1 + 1 {
                runs[runs.count - 1].1 = row
            } else if runs.last?.1 != row {
                runs.append((row, row))
            }
        }
        return runs
    }

    /// This owner's id, registering it (or renewing its lease) inside the caller's transaction.
    /// `started`: the monotonic instant the transaction began, which a renewal here shows once it commits.
    private func registeredOwner(now: Int64, started: ContinuousClock.Instant) throws(SQLiteFailure) -> Int64 {
        // Renewed less than a third of a lease ago: the row is there (only owners whose lease ran out are pruned).
        if let ownerID, now - leaseRenewed < leaseMilliseconds / 3 { return ownerID }
        if let ownerID {
            try renewLease.bind(1, ownerID)
            try renewLease.bind(2, now + leaseMilliseconds)
            try renewLease.run()
            if connection.changes == 1 {
                leaseRenewed = now
                uncommittedRenewal = started
                return ownerID
            }
            // Our row is gone (pruned after a stall longer than twice the lease): registered again under the same
            // id below, our claims that nobody took over are ours again.
        }
        let id = ownerID ?? plannedOwner
        let register = try connection.prepare(StateSchema.registerOwner)
        try register.bind(1, id)
        try register.bind(2, text: DeduplicationOwner.thisHost)
        try register.bind(3, Int64(DeduplicationOwner.thisProcess))
        try register.bind(4, now + leaseMilliseconds)
        try register.run()
        ownerID = id
        leaseRenewed = now
        uncommittedRenewal = started
        return id
    }

    private func answer(
        _ sighting: PostbackSighting, seen: Int64, cutoff: Int64, owner: Int64, now: Int64, claimedHere: ClaimedRows,
        liveness: inout [Int64: Bool]
    ) throws(SQLiteFailure) -> (DeduplicationAnswer, claimedRow: Int64?, inserted: Bool, hash: Int64) {
        let key = sighting.key.utf8
        let hash = StateKeyHash.of(key)
        var found: SQLiteStatement?
        if hasUnhashed {
            try lookupUnhashed.bind(1, text: key)
            if try lookupUnhashed.step() { found = lookupUnhashed } else { lookupUnhashed.reset() }
        }
        if found == nil {
            if try insertRow(sighting, hash: hash, seen: seen) {
                return (.firstSeen, connection.lastInsertRowID, true, hash)
            }
            try lookup.bind(1, hash)
            guard try lookup.step() else {
                lookup.reset()
                throw SQLiteFailure(code: 11, message: "a key vanished within a transaction")
            }
            if lookup.columnEquals(5, key) {
                found = lookup
            } else {
                // Another key holds this hash: this one is kept without a hash, and found by its bytes.
                lookup.reset()
                guard try insertRow(sighting, hash: nil, seen: seen) else {
                    throw SQLiteFailure(code: 11, message: "a row without a hash was not inserted")
                }
                hasUnhashed = true
                return (.firstSeen, connection.lastInsertRowID, true, hash)
            }
        }
        guard let lookup = found else { throw SQLiteFailure(code: 11, message: "no row found") }
        defer { lookup.reset() }
        let id = lookup.int64(0)
        let firstSeen = lookup.int64(1)
        // Who holds a claim on the row: this call (its runs are written at its end), or a run of claims.
        var run: (lo: Int64, hi: Int64, owner: Int64)?
        if claimedHere.contains(id) {
            run = (id, id, owner)
        } else {
            try claimAt.bind(1, id)
            if try claimAt.step(), claimAt.int64(1) >= id {
                run = (claimAt.int64(0), claimAt.int64(1), claimAt.int64(2))
            }
            claimAt.reset()
        }
        var live = false
        if firstSeen >= cutoff, let claimant = run?.owner {
            if claimant == owner {
                live = true
            } else if let known = liveness[claimant] {
                live = known
            } else {
                live = try isAlive(claimant, now: now)
                liveness[claimant] = live
            }
        }
        if firstSeen >= cutoff && (run == nil || live) {
            return (.duplicate(of: DuplicateReference(
                source: lookup.text(2), line: Int(lookup.int64(3)), firstSeen: Date(milliseconds: firstSeen),
                firstContent: lookup.blob(4).flatMap(ContentFingerprint.init(bytes:)), isPending: run != nil)),
                    nil, false, hash)
        }
        // Expired, or claimed by an owner that died: the row is this sighting's now, out of the dead owner's run.
        lookup.reset()
        if let run { try replaceRun(lo: run.lo, hi: run.hi, owner: run.owner, without: id...id) }
        try takeOver.bind(1, id)
        try takeOver.bind(2, seen)
        try takeOver.bind(3, text: sighting.source)
        try takeOver.bind(4, Int64(sighting.line))
        try takeOver.bind(5, blob: sighting.content?.bytes)
        try takeOver.run()
        return (.firstSeen, id, false, hash)
    }

    /// Inserts a new row for `sighting` under `hash` (NULL when nil), its bytes bound without copies; false when
    /// another row holds the hash (nothing was inserted).
    private func insertRow(_ sighting: PostbackSighting, hash: Int64?, seen: Int64) throws(SQLiteFailure) -> Bool {
        let source = sourceBytes(sighting.source)
        let content = sighting.content?.bytes
        let insert = self.insert
        let status: Int32 = sighting.key.utf8.withUnsafeBytes { key in
            source.withUnsafeBytes { source in
                (content ?? []).withUnsafeBytes { fingerprint in
                    var status = insert.bindBorrowed(1, key)
                    if status == 0 { status = insert.bindInteger(2, hash) }
                    if status == 0 { status = insert.bindInteger(3, seen) }
                    if status == 0 { status = insert.bindBorrowed(4, source) }
                    if status == 0 { status = insert.bindInteger(5, Int64(sighting.line)) }
                    if status == 0 {
                        status = content == nil ? insert.bindInteger(6, nil)
                            : insert.bindBorrowed(6, fingerprint, blob: true)
                    }
                    // Stepped and reset while the bytes are lent.
                    return status == 0 ? insert.runReleasingBindings() : status
                }
            }
        }
        try insert.check(status)
        return connection.changes == 1
    }

    /// `source` as UTF-8, converted once for the many sightings of one file in a row (compared by bytes: two
    /// paths Swift's `String ==` calls equal may be two files).
    private func sourceBytes(_ source: String) -> [UInt8] {
        let same = source.utf8.withContiguousStorageIfAvailable { $0.elementsEqual(lastSource) }
            ?? source.utf8.elementsEqual(lastSource)
        if !same { lastSource = Array(source.utf8) }
        return lastSource
    }
    private var lastSource: [UInt8] = []
    /// Whether some row has no hash (another key holds its hash), as read at the start of the current claim.
    private var hasUnhashed = false

    /// Whether the owner `id` still holds its claims: its lease runs, and when it ran on this machine its process
    /// is still there.
    private func isAlive(_ id: Int64, now: Int64) throws(SQLiteFailure) -> Bool {
        try ownerLookup.bind(1, id)
        defer { ownerLookup.reset() }
        guard try ownerLookup.step() else { return false }
        return DeduplicationOwner.isAlive(host: ownerLookup.text(0), process: ownerLookup.int64(1),
                                          leaseUntil: ownerLookup.int64(2), now: now)
    }

    // MARK: - Opening

    /// The schema version of the database on `connection`: nil when it has no table at all; 1, 2 or 3 when its every
    /// table, column, index and constraint is exactly what that version creates (compared with a database made
    /// in memory by the same statements, so collations, unique keys and column types all count) and its version
    /// row says so. Throws for anything else: foreign or look-alike tables, a damaged file, another version.
    /// Reads only.
    private static func schemaVersion(_ connection: SQLiteConnection, path: String, thorough: Bool)
        throws(AttributionError) -> Int64? {
        do {
            let objects = try schemaObjects(connection)
            if objects.isEmpty { return nil }
            guard objects.contains(where: { $0[0] == "table" && $0[1] == StateSchema.versionTable }) else {
                throw AttributionError(.notOurs, "\(path) is a SQLite database without postback-verify's "
                                       + "\(StateSchema.versionTable) table: not a state file, left as it is")
            }
            let versionTable = reference(version: StateSchema.version).first { $0[1] == StateSchema.versionTable }
            guard objects.first(where: { $0[1] == StateSchema.versionTable }) == versionTable else {
                throw AttributionError(.notOurs, "\(path) has a \(StateSchema.versionTable) table unlike "
                                       + "postback-verify's: not a state file, left as it is")
            }
            let versions = try connection.prepare("SELECT version FROM \(StateSchema.versionTable)")
            guard try versions.step(), versions.isInteger(0) else {
                throw AttributionError(.damaged, "state file \(path) is damaged: its schema version is missing")
            }
            let version = versions.int64(0)
            guard try !versions.step() else {
                throw AttributionError(.damaged, "state file \(path) is damaged: it has more than one schema version")
            }
            guard version <= StateSchema.version else {
                throw AttributionError(.newerSchema, "state file \(path) has schema version \(version), newer than "
                                       + "this postback-verify knows (\(StateSchema.version)): use a later release")
            }
            guard version >= 1 else {
                throw AttributionError(.damaged, "state file \(path) is damaged: unknown schema version \(version)")
            }
            guard objects == reference(version: version) || (version == 2 && objects == referenceMigrated) else {
                let expected = reference(version: version)
                let unlike = objects.filter { !expected.contains($0) }.map { "\($0[0]) \($0[1])" }
                let missing = expected.filter { !objects.contains($0) }.map { "\($0[0]) \($0[1])" }
                let findings = (unlike.isEmpty ? [] : ["not as postback-verify makes them: "
                                                       + unlike.joined(separator: ", ")])
                    + (missing.isEmpty ? [] : ["missing: " + missing.joined(separator: ", ")])
                throw AttributionError(.notOurs, "\(path) is not a postback-verify state file of schema version "
                                       + "\(version) (\(findings.joined(separator: "; "))); left as it is")
            }
            // The same statements make the same unique key and columns; check, as SQLite reads them, that keys
            // compare bytewise all the same: versions 1 and 2 by their unique index, version 3 by the key column
            // (rows without a hash are found by it) and its unique hash.
            if version < 3 {
                let key = try connection.prepare("PRAGMA index_xinfo('sqlite_autoindex_postbacks_1')")
                var collations: [String] = []
                while try key.step() {
                    if key.int64(5) == 1 { collations.append(key.text(4)) }
                }
                guard collations == ["BINARY"] else {
                    throw AttributionError(.notOurs, "\(path): the unique key on postbacks.key is not bytewise "
                                           + "(BINARY); not a state file, left as it is")
                }
            } else {
                let hash = try connection.prepare("PRAGMA index_info('sqlite_autoindex_postbacks_1')")
                var columns: [String] = []
                while try hash.step() { columns.append(hash.text(2)) }
                let key = try connection.prepare(
                    "SELECT count(*) FROM pragma_table_xinfo('postbacks') WHERE name = 'key' AND type = 'TEXT' "
                    + "AND \"notnull\" = 1")
                guard columns == ["hash"], try key.step(), key.int64(0) == 1 else {
                    throw AttributionError(.notOurs, "\(path): postbacks is not keyed as postback-verify keys it (a "
                                           + "unique hash, a TEXT key); not a state file, left as it is")
                }
            }
            if thorough {
                let check = try connection.prepare("PRAGMA quick_check(1)")
                guard try check.step(), check.text(0) == "ok" else {
                    let finding = check.text(0).split(whereSeparator: \.isNewline).joined(separator: " ")
                    throw AttributionError(.damaged, "state file \(path) is damaged (\(finding)); left as it is")
                }
            }
            return version
        } catch let error as AttributionError {
            throw error
        } catch let error as SQLiteFailure {
            throw stateError(error, path: path, doing: "cannot use state file", untouched: true)
        } catch {
            throw AttributionError(.failed, "cannot use state file \(path): \(error)")
        }
    }

    /// Every object of the schema (type, name, table, SQL), in a fixed order.
    private static func schemaObjects(_ connection: SQLiteConnection) throws(SQLiteFailure) -> [[String]] {
        let statement = try connection.prepare(
            "SELECT type, name, tbl_name, coalesce(sql, '') FROM sqlite_schema ORDER BY type, name")
        var rows: [[String]] = []
        while try statement.step() {
            rows.append((0..<4).map { statement.text(Int32($0)) })
        }
        return rows
    }

    /// The schema objects version 1, 2 or 3 consists of, as SQLite records them: made once in memory.
    private static func reference(version: Int64) -> [[String]] {
        switch version {
        case 1: referenceVersion1
        case 2: referenceVersion2
        default: referenceVersion3
        }
    }

    private static let referenceVersion1 = madeInMemory(StateSchema.createVersion1)
    private static let referenceVersion2 = madeInMemory(StateSchema.createVersion2)
    private static let referenceVersion3 = madeInMemory(StateSchema.create)
    /// Version 2 as migrating version 1 leaves it (SQLite records the added column in the table's statement).
    private static let referenceMigrated = madeInMemory(StateSchema.createVersion1 + StateSchema.migrateFromVersion1)

    private static func madeInMemory(_ statements: String) -> [[String]] {
        do {
            let memory = try SQLiteConnection(path: ":memory:", readOnly: false)
            try memory.execute(statements)
            return try schemaObjects(memory)
        } catch {
            preconditionFailure("the state's own schema does not run in memory: \(error.message)")
        }
    }

    /// Creates the tables in an empty database, or migrates a version-1 one; checks them again otherwise, under
    /// the write lock (the file may have been created or replaced since the read-only check). Writes nothing to a
    /// file it refuses: the check comes first, and `BEGIN IMMEDIATE` alone writes no page.
    private static func createOrMigrate(_ connection: SQLiteConnection, path: String) throws {
        // A claim's keys land on random index pages and a commit writes each page it touched: of 1, 4, 8 and
        // 16 KiB pages, 4 KiB cost the least per key. Only a new database takes this; an existing one keeps its size.
        try connection.execute("PRAGMA page_size = 4096")
        try connection.execute("BEGIN IMMEDIATE")
        defer { if connection.isInTransaction { try? connection.execute("ROLLBACK") } }
        switch try schemaVersion(connection, path: path, thorough: false) {
        case nil:
            try connection.execute(StateSchema.create)
        case 1:
            try connection.execute(StateSchema.migrateFromVersion1)
            try migrateFromVersion2(connection)
        case 2:
            try migrateFromVersion2(connection)
        default:
            break
        }
        try connection.execute("COMMIT")
    }

    /// From schema version 2 to 3 inside the caller's transaction (a failure rolls all of it back, leaving the file
    /// at version 2): the table of postbacks is made again by version 3's statement and every row copied into it,
    /// its `id` kept (claims name rows by id) and its key's hash added; a key whose hash an earlier row holds keeps
    /// a NULL hash, as a claim would store it. Rewrites every row once: about a second per million on a laptop.
    private static func migrateFromVersion2(_ connection: SQLiteConnection) throws(SQLiteFailure) {
        try connection.execute(StateSchema.migrateFromVersion2)
        let rows = try connection.prepare(StateSchema.version2Rows)
        let insert = try connection.prepare(StateSchema.migratedRow)
        while try rows.step() {
            let key = rows.blob(1) ?? []
            for hash in [StateKeyHash.of(key), nil] {
                try insert.bind(1, rows.int64(0))
                try insert.bind(2, text: key)
                try insert.bind(3, hash)
                try insert.bind(4, rows.int64(2))
                try insert.bind(5, text: rows.blob(3) ?? [])
                try insert.bind(6, rows.int64(4))
                try insert.bind(7, blob: rows.blob(5))
                try insert.run()
                if connection.changes == 1 { break }
            }
        }
        try connection.execute(StateSchema.migratedFromVersion2)
    }

    /// Makes a new state file whole under a temporary name beside `path` (tables, schema version, WAL mode), syncs
    /// it once and links it into place, so another run finds no file or a complete one, and power loss leaves no
    /// half-made file at `path`: two syncs (file and directory) instead of the ten of creating it in place through
    /// rollback journals (most of what a fresh state cost a run). False when it could not (an unwritable
    /// directory, say): the caller then creates the file in place, with the errors that path reports. When another
    /// run linked its file first, that one is used (true).
    private static func createWhole(_ path: String) -> Bool {
        let temporary = path + ".new-\(getpid())-\(UInt32.random(in: .min ... .max))"
        defer { for suffix in ["", "-journal", "-wal", "-shm"] { unlink(temporary + suffix) } }
        do {
            let connection = try SQLiteConnection(path: temporary, readOnly: false)
            // No journal and no syncs while it is private: the single sync below makes it durable before it is
            // linked where anyone can see it.
            try connection.execute("PRAGMA page_size = 4096; PRAGMA synchronous = OFF; PRAGMA journal_mode = MEMORY")
            try connection.execute("BEGIN IMMEDIATE;\n" + StateSchema.create + "\nCOMMIT")
            try connection.execute("PRAGMA journal_mode = WAL")
        } catch {
            return false
        }
        // Closed: the log is folded into the file and removed.
        guard syncPath(temporary, directory: false) else { return false }
        guard link(temporary, path) == 0 || errno == EEXIST else { return false }
        let directory = (path as NSString).deletingLastPathComponent
        _ = syncPath(directory.isEmpty ? "." : directory, directory: true)
        return true
    }

    /// The file's size, or nil when there is no file; a directory or other non-file is refused.
    private static func existingSize(_ path: String) throws(AttributionError) -> Int64? {
        var status = stat()
        guard stat(path, &status) == 0 else {
            if errno == ENOENT { return nil }
            throw AttributionError(.cannotOpen, "cannot use state file \(path): \(String(cString: strerror(errno)))")
        }
        guard status.st_mode & S_IFMT == S_IFREG else {
            throw AttributionError(.notOurs, "state file \(path) is not a regular file")
        }
        return Int64(status.st_size)
    }

    private static func open(_ path: String, readOnly: Bool) throws(AttributionError) -> SQLiteConnection {
        do throws(SQLiteFailure) {
            let connection = try SQLiteConnection(path: path, readOnly: readOnly)
            // Another run may be creating the file or committing a batch: wait for it, as for a batch.
            connection.setBusyTimeout(milliseconds: busyTimeout)
            return connection
        } catch {
            throw stateError(error, path: path, doing: readOnly ? "cannot open state file" : "cannot create or "
                             + "write state file")
        }
    }

    /// WAL: a commit appends to the log without rewriting pages, and readers never block the writer.
    private static func useWriteAheadLog(_ connection: SQLiteConnection) throws(SQLiteFailure) {
        let mode = try connection.prepare("PRAGMA journal_mode = WAL")
        var attempts = 0
        while true {
            do throws(SQLiteFailure) {
                _ = try mode.step()
                mode.reset()
                return
            } catch where error.stateCode == .busy && attempts < 600 {
                // Changing the journal mode needs every other connection out of the file: wait like busy_timeout.
                attempts += 1
                mode.reset()
                usleep(100_000)
            }
        }
    }

    /// - Parameter untouched: the failure came from the start-up check, before anything wrote to the file.
    private static func stateError(_ error: SQLiteFailure, path: String, doing: String, untouched: Bool = false)
        -> AttributionError {
        let code = error.stateCode
        let left = untouched ? "; left as it is" : ""
        switch code {
        case .notOurs:
            return AttributionError(code, "\(path) is not a postback-verify state file (\(error.message))\(left)")
        case .damaged:
            return AttributionError(code, "state file \(path) is damaged (\(error.message))\(left)")
        case .busy:
            return AttributionError(code, "state file \(path) is locked by another process (waited up to "
                                    + "\(busyTimeout / 1000) s: \(error.message))")
        default:
            return AttributionError(code, "\(doing) \(path): \(error.message)")
        }
    }
}

/// `fsync`s the file (or directory) at `path` (file scope: ``StateDatabase``'s own `open` and `close` would hide
/// the C library's).
private func syncPath(_ path: String, directory: Bool) -> Bool {
    let descriptor = open(path, directory ? O_RDONLY | O_DIRECTORY | O_CLOEXEC : O_RDWR | O_CLOEXEC)
    guard descriptor >= 0 else { return false }
    defer { close(descriptor) }
    return fsync(descriptor) == 0
}

/// The rows one claim has claimed so far: those it inserted, all from the first on (a new row's id is past every
/// row there was, and the claim holds the write lock), and the few it took over.
private struct ClaimedRows {
    private var firstInserted = Int64.max
    private var takenOver: Set<Int64> = []

    func contains(_ row: Int64) -> Bool {
        row >= firstInserted || (!takenOver.isEmpty && takenOver.contains(row))
    }

    mutating func insert(_ row: Int64, inserted: Bool) {
        if inserted { firstInserted = min(firstInserted, row) } else { takenOver.insert(row) }
    }
}
