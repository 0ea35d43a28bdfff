/// The SQLite schema of the deduplication state (`--state`), version 2; `docs/state.md` documents it for people.
///
/// `postback_verify_schema` holds one row, the schema version: this release migrates version 1 (the previous
/// release's) and refuses any other. `postbacks` holds one row per distinct valid postback, claimed or confirmed:
/// `key` is the deduplication key as UTF-8 TEXT compared bytewise (`BINARY`), never by Unicode equivalence;
/// `first_seen` the start of the run (or the request) that first saw it, in milliseconds since 1970 UTC; `source`
/// and `line` where its first valid record was; `content` that record's ``ContentFingerprint`` (NULL for rows
/// migrated from version 1); `owner` the `owners` row whose claim it is, NULL once confirmed. `owners` holds one
/// row per live store instance (a run, a server process) with claims: its machine, process and lease. `id`
/// grows with insertion, so the oldest rows are found first for pruning.
enum StateSchema {
    static let version: Int64 = 2

    static let versionTable = "postback_verify_schema"

    static let postbacksTable = """
        CREATE TABLE postbacks (
            id INTEGER PRIMARY KEY,
            key TEXT NOT NULL COLLATE BINARY UNIQUE,
            first_seen INTEGER NOT NULL,
            source TEXT NOT NULL,
            line INTEGER NOT NULL,
            content BLOB,
            owner INTEGER
        );
        CREATE INDEX postbacks_claims ON postbacks (owner) WHERE owner IS NOT NULL;
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
        """ + postbacksTable

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

    /// From version 1 to 2 in one transaction: the rows are copied into a table created with version 2's exact
    /// statement (so a migrated file's schema reads back exactly like a new one's), as confirmed rows without a
    /// fingerprint.
    static let migrateFromVersion1 = "ALTER TABLE postbacks RENAME TO postbacks_version_1;\n" + postbacksTable + """
        INSERT INTO postbacks (id, key, first_seen, source, line)
            SELECT id, key, first_seen, source, line FROM postbacks_version_1;
        DROP TABLE postbacks_version_1;
        UPDATE postback_verify_schema SET version = 2;
        """

    static let insert = "INSERT INTO postbacks (key, first_seen, source, line, content, owner) "
        + "VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT (key) DO NOTHING"
    static let lookup = "SELECT id, first_seen, source, line, content, owner FROM postbacks WHERE key = ?1"
    /// Takes over a row: an expired one, or a claim whose owner died.
    static let takeOver = "UPDATE postbacks SET first_seen = ?2, source = ?3, line = ?4, content = ?5, owner = ?6 "
        + "WHERE id = ?1"
    static let confirm = "UPDATE postbacks SET owner = NULL WHERE key = ?1 AND owner = ?2"
    static let release = "DELETE FROM postbacks WHERE key = ?1 AND owner = ?2"
    static let releaseAll = "DELETE FROM postbacks WHERE owner = ?1"
    static let registerOwner = "INSERT INTO owners (host, pid, lease_until) VALUES (?1, ?2, ?3)"
    static let renewLease = "UPDATE owners SET lease_until = ?2 WHERE id = ?1"
    static let owner = "SELECT host, pid, lease_until FROM owners WHERE id = ?1"
    static let forgetOwner = "DELETE FROM owners WHERE id = ?1"
    /// Owners whose lease ran out a while ago and who hold no claim any more.
    static let pruneOwners = "DELETE FROM owners WHERE lease_until < ?1 "
        + "AND NOT EXISTS (SELECT 1 FROM postbacks WHERE owner = owners.id)"
    /// Pruning: the expired rows among the oldest few hundred, so each batch does a bounded share of it.
    static let prune = "DELETE FROM postbacks WHERE id IN (SELECT id FROM postbacks ORDER BY id LIMIT ?2) "
        + "AND first_seen < ?1"
    static let count = "SELECT count(*) FROM postbacks"
}
