/// The SQLite schema of the deduplication state (`--state`), version 1; `docs/state.md` documents it for people.
///
/// `postback_verify_schema` holds one row, the schema version: a later release reads it to migrate, and this one
/// refuses a file whose version it does not know. `postbacks` holds one row per distinct valid postback: `key`
/// is the deduplication key as UTF-8 TEXT compared bytewise (`BINARY`), never by Unicode equivalence;
/// `first_seen` the start of the run that first saw it, in milliseconds since 1970 UTC; `source` and `line`
/// where its first valid record was. `id` grows with insertion, so the oldest rows are found first for pruning.
enum StateSchema {
    static let version: Int64 = 1

    static let versionTable = "postback_verify_schema"

    static let create = """
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

    /// Every column the queries use: preparing this fails on a file that lacks one.
    static let columnsCheck = "SELECT id, key, first_seen, source, line FROM postbacks ORDER BY id DESC LIMIT 1"

    static let insert = "INSERT INTO postbacks (key, first_seen, source, line) VALUES (?1, ?2, ?3, ?4) "
        + "ON CONFLICT (key) DO NOTHING"
    static let lookup = "SELECT id, first_seen, source, line FROM postbacks WHERE key = ?1"
    static let forget = "DELETE FROM postbacks WHERE id = ?1"
    /// Pruning: the expired rows among the oldest few hundred, so each batch does a bounded share of it.
    static let prune = "DELETE FROM postbacks WHERE id IN (SELECT id FROM postbacks ORDER BY id LIMIT ?2) "
        + "AND first_seen < ?1"
    static let count = "SELECT count(*) FROM postbacks"
}
