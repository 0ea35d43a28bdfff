/// The SQLite schema of the deduplication state (`--state`), version 2; `docs/state.md` documents it for people.
///
/// `postback_verify_schema` holds one row, the schema version: this release migrates version 1 (the previous
/// release's) and refuses any other. `postbacks` holds one row per distinct valid postback, claimed or confirmed:
/// `key` is the deduplication key as UTF-8 TEXT compared bytewise (`BINARY`), never by Unicode equivalence;
/// `first_seen` the start of the run (or the request) that first saw it, in milliseconds since 1970 UTC; `source`
/// and `line` where its first valid record was; `id` grows with insertion, so the oldest rows are found first for
/// pruning; `content` that record's ``ContentFingerprint`` (NULL for rows from version 1). `claims` holds a row for
/// each postback whose claim is not confirmed yet (its `postbacks.id`, and the `owners` row that holds it): confirming
/// deletes it, so a postback's row is written once, and the table stays as small as the claims in flight. `owners`
/// holds one row per store instance (a run, a server process) that claimed: its machine, process and lease; its
/// `id` is random, so a new owner never inherits a pruned one's claims.
enum StateSchema {
    static let version: Int64 = 2

    static let versionTable = "postback_verify_schema"

    /// What version 2 adds to version 1's tables.
    static let claimsAndOwners = """
        CREATE TABLE claims (
            id INTEGER PRIMARY KEY,
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
    static let claim = "INSERT INTO claims (id, owner) VALUES (?1, ?2)"
    static let lookup = "SELECT postbacks.id, first_seen, source, line, content, claims.owner FROM postbacks "
        + "LEFT JOIN claims ON claims.id = postbacks.id WHERE key = ?1"
    /// Forgets a row (expired, or claimed by an owner that died) so that a sighting can claim its key again.
    static let forgetPostback = "DELETE FROM postbacks WHERE id = ?1"
    static let forgetClaim = "DELETE FROM claims WHERE id = ?1"
    /// Confirms this owner's claims on the rows `?1` to `?2` (a batch's claims are consecutive rows).
    static let confirm = "DELETE FROM claims WHERE id BETWEEN ?1 AND ?2 AND owner = ?3"
    /// Releases them: the postbacks' rows go, then the claims.
    static let releasePostbacks = "DELETE FROM postbacks WHERE id BETWEEN ?1 AND ?2 "
        + "AND id IN (SELECT id FROM claims WHERE id BETWEEN ?1 AND ?2 AND owner = ?3)"
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
    static let pruneClaims = "DELETE FROM claims WHERE id NOT IN (SELECT id FROM postbacks)"
    static let count = "SELECT count(*) FROM postbacks"
}
