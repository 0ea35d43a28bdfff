@_spi(Stores) import Attribution
/// The SQLite schema of the deduplication state (`--state`), version 3; `docs/state.md` documents it for people.
///
/// `postback_verify_schema` holds one row, the schema version: this release migrates versions 1 and 2 (the previous
/// releases') and refuses any other. `postbacks` holds one row per distinct valid postback, claimed or confirmed:
/// `key` is the deduplication key as UTF-8 TEXT compared bytewise (`BINARY`), never by Unicode equivalence; `hash`
/// its ``StateKeyHash`` (64 bits of its bytes), unique: the one index a key is looked up and inserted by, a
/// quarter of the size of an index of the keys themselves, so a claim touches (and the write-ahead log receives)
/// fewer pages; a key whose hash another key already holds (about one chance in 2^64 per pair of keys) has a NULL
/// `hash` and is found among those rows by its bytes. `first_seen` is the start of the run (or the request) that
/// first saw it, in milliseconds since 1970 UTC; `source` and `line` where its first valid record was; `id` grows
/// with insertion, so the oldest rows are found first for pruning; `content` that record's ``ContentFingerprint``
/// (NULL for rows from version 1). `claims` holds the postbacks whose claims are not confirmed yet, as runs of
/// consecutive rows (`postbacks.id` from `lo` to `hi`) and the `owners` row that holds them: a batch's claims are
/// one row, confirming deletes (or shortens) it, so a postback's row is written once, and the table stays as small
/// as the batches in flight. `owners` holds one row per store instance (a run, a server process) that claimed: its
/// machine, process and lease; its `id` is random, so a new owner never inherits a pruned one's claims.
enum StateSchema {
    static let version: Int64 = 3

    static let versionTable = "postback_verify_schema"

    /// What version 2 added to version 1's tables (version 3 keeps them as they are).
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

    /// Version 3's table of postbacks: created by a new file and by the migration from version 2 alike, so a migrated
    /// file's schema reads back exactly as a new one's.
    static let postbacks = """
        CREATE TABLE postbacks (
            id INTEGER PRIMARY KEY,
            key TEXT NOT NULL COLLATE BINARY,
            hash INTEGER UNIQUE,
            first_seen INTEGER NOT NULL,
            source TEXT NOT NULL,
            line INTEGER NOT NULL,
            content BLOB
        );
        """

    static let create = """
        CREATE TABLE postback_verify_schema (
            version INTEGER NOT NULL
        );
        INSERT INTO postback_verify_schema (version) VALUES (3);
        """ + postbacks + claimsAndOwners

    /// Version 2, as the previous release created it: what a file must hold, exactly, to be migrated (or, from
    /// version 1, ``migrateFromVersion1``'s result).
    static let createVersion2 = """
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

    /// Version 1, as the release before that created it.
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

    /// From version 1 to 2 (no row is rewritten): the fingerprint column (NULL for the rows there: confirmed,
    /// without one) and the two new tables. A file migrated so reads back as SQLite records an added column, which
    /// the check knows beside a new version-2 file's. Run in the same transaction as the step to version 3.
    static let migrateFromVersion1 = "ALTER TABLE postbacks ADD COLUMN content BLOB;\n" + claimsAndOwners + """
        UPDATE postback_verify_schema SET version = 2;
        """

    /// From version 2 to 3, in the transaction that checked the file: the old table is renamed out of the way, the
    /// new one made by version 3's own statement, every row copied with its `id` (so `claims`, which names rows by
    /// id, stays true) and its key's hash (``migratedRow``, row by row), then the old table dropped.
    static let migrateFromVersion2 = "ALTER TABLE postbacks RENAME TO postbacks_version2;\n" + postbacks
    static let version2Rows = "SELECT id, key, first_seen, source, line, content FROM postbacks_version2 ORDER BY id"
    static let migratedRow = "INSERT INTO postbacks (id, key, hash, first_seen, source, line, content) "
        + "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT (hash) DO NOTHING"
    static let migratedFromVersion2 = "DROP TABLE postbacks_version2;\nUPDATE postback_verify_schema SET version = 3;"

    /// A new key under its hash (`?2`, or NULL when another key holds it): no change when the hash is taken.
    static let insert = "INSERT INTO postbacks (key, hash, first_seen, source, line, content) "
        + "VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT (hash) DO NOTHING"
    /// The row holding hash `?1`, its key last (compared by its bytes).
    static let lookup = "SELECT id, first_seen, source, line, content, key FROM postbacks WHERE hash = ?1"
    /// The row of key `?1` among those without a hash (whose hash another key holds).
    static let lookupUnhashed = "SELECT id, first_seen, source, line, content, key FROM postbacks "
        + "WHERE hash IS NULL AND key = ?1"
    /// Whether any row lacks a hash: read once per claim, so that a file without such rows (every file, in
    /// practice) costs no second lookup per key.
    static let anyUnhashed = "SELECT EXISTS (SELECT 1 FROM postbacks WHERE hash IS NULL)"
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
    /// Row `?1`'s first sighting: what a claim taken over now duplicates.
    static let row = "SELECT first_seen, source, line, content FROM postbacks WHERE id = ?1"
    /// The heartbeat (on a connection of its own): owner `?1`'s lease, read before it is renewed (to tell a lapse).
    static let leaseOf = "SELECT lease_until FROM owners WHERE id = ?1"
    /// The heartbeat's renewal of owner `?1` until `?4`, registering it again (host `?2`, process `?3`) if its row
    /// was pruned while it was stalled.
    static let renewOwner = "INSERT INTO owners (id, host, pid, lease_until) VALUES (?1, ?2, ?3, ?4) "
        + "ON CONFLICT (id) DO UPDATE SET lease_until = excluded.lease_until"
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
