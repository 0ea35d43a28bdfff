/// The SQLite schema of the deduplication state (`--state`), version 2; `docs/state.md` documents it for people.
///
/// `postback_verify_schema` holds one row, the schema version: this release migrates version 1 (the previous
/// release's) and refuses any other. `postbacks` holds one row per distinct valid postback, claimed or confirmed:
/// `key` is the deduplication key as UTF-8 TEXT compared bytewise (`BINARY`), never by Unicode equivalence;
/// `first_seen` the start of the run (or the request) that first saw it, in milliseconds since 1970 UTC; `source`
/// and `line` where its first valid record was; `id` grows with insertion, so the oldest rows are found first for
/// pruning; `content` that record's ``ContentFingerprint`` (NULL for rows from version 1). `claims` holds the
/// postbacks whose claims are not confirmed yet, as runs of consecutive rows (`postbacks.id` from `lo` to `hi`) and
/// the `owners` row that holds them: a batch's claims are one row, confirming deletes (or shortens) it, so a
/// postback's row is written once, and the table stays as small as the batches in flight. `owners`
/// holds one row per store instance (a run, a server process) that claimed: its machine, process and lease; its
/// `id` is random, so a new owner never inherits a pruned one's claims.
enum StateSchema {
    static let version: Int64 = 2

    static let versionTable = "postback_verify_schema"

    /// What version 2 adds to version 1's tables.
    static let claimsAndOwners = """
        CREATE TABLE claims (
            lo INTEGER PRIMARY KEY,
            hi INTEGER NOT NULL,
            owner INTEGER NOT NULL
        );
        CREATE TABLE owners (
            id INTEGER PRIMARY KEY,
            host TEXT NOT NULL,
            pid INTEGER NOT NULL,
            lease_until INTEGER NOT NULL
        );
        """

    static let create = """
        CREATE TABLE postback_verify_schema (
            version INTEGER NOT NULL
        );
        INSERT INTO postback_verify_schema (version) VALUES (2);
        CREATE TABLE postbacks (
            id INTEGER PRIMARY KEY,
            key TEXT NOT NULL COLLATE BINARY UNIQUE,
            first_seen INTEGER NOT NULL,
            source TEXT NOT NULL,
            line INTEGER NOT NULL,
            content BLOB
        );
        """ + claimsAndOwners

    /// Version 1, as the previous release created it: what a file must hold, exactly, to be migrated.
    static let createVersion1 = """
        CREATE TABLE postback_verify_schema (
            version INTEGER NOT NULL
        );
        INSERT INTO postback_verify_schema (version) VALUES (1);
        CREATE TABLE postbacks (
            id INTEGER PRIMARY KEY,
            key TEXT NOT NULL COLLATE BINARY UNIQUE,
            first_seen INTEGER NOT NULL,
            source TEXT NOT NULL,
            line INTEGER NOT NULL
        );
        """

    /// From version 1 to 2 in one transaction, whatever the file holds (no row is rewritten): the fingerprint
    /// column (NULL for the rows there: confirmed, without one) and the two new tables. A migrated file's schema
    /// reads back as SQLite records an added column, which the check knows beside a new file's.
    static let migrateFromVersion1 = "ALTER TABLE postbacks ADD COLUMN content BLOB;\n" + claimsAndOwners + """
        UPDATE postback_verify_schema SET version = 2;
        """

    static let insert = "INSERT INTO postbacks (key, first_seen, source, line, content) VALUES (?1, ?2, ?3, ?4, ?5) "
        + "ON CONFLICT (key) DO NOTHING"
    static let lookup = "SELECT id, first_seen, source, line, content FROM postbacks WHERE key = ?1"
    /// Takes over a row (expired, or claimed by an owner that died) for a new first sighting.
    static let takeOver = "UPDATE postbacks SET first_seen = ?2, source = ?3, line = ?4, content = ?5 WHERE id = ?1"
    /// The run of claims that may hold row `?1`: it does when its `hi` is at least `?1`.
    static let claimAt = "SELECT lo, hi, owner FROM claims WHERE lo <= ?1 ORDER BY lo DESC LIMIT 1"
    /// This owner's runs of claims that overlap the rows `?2` to `?3`.
    static let ownRuns = "SELECT lo, hi FROM claims WHERE owner = ?1 AND lo <= ?3 AND hi >= ?2"
    static let deleteRun = "DELETE FROM claims WHERE lo = ?1"
    static let insertRun = "INSERT INTO claims (lo, hi, owner) VALUES (?1, ?2, ?3)"
    static let deletePostbacks = "DELETE FROM postbacks WHERE id BETWEEN ?1 AND ?2"
    static let renewLease = "UPDATE owners SET lease_until = ?2 WHERE id = ?1"
    /// An owner's row, under a random id (never an id a dead owner's claims may still name).
    static let registerOwner = "INSERT OR REPLACE INTO owners (id, host, pid, lease_until) VALUES (?1, ?2, ?3, ?4)"
    static let owner = "SELECT host, pid, lease_until FROM owners WHERE id = ?1"
    static let forgetOwner = "DELETE FROM owners WHERE id = ?1"
    /// Owners whose lease ran out a while ago: dead; a claim naming a missing owner is a dead owner's.
    static let pruneOwners = "DELETE FROM owners WHERE lease_until < ?1"
    /// Pruning: the expired rows among the oldest few hundred, so each batch does a bounded share of it; then the
    /// claims on rows that are gone.
    static let prune = "DELETE FROM postbacks WHERE id IN (SELECT id FROM postbacks ORDER BY id LIMIT ?2) "
        + "AND first_seen < ?1"
    static let pruneClaims = "DELETE FROM claims WHERE NOT EXISTS "
        + "(SELECT 1 FROM postbacks WHERE postbacks.id BETWEEN claims.lo AND claims.hi)"
    static let count = "SELECT count(*) FROM postbacks"
}
