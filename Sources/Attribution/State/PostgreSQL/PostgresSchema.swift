/// The PostgreSQL schema of the deduplication state, version 1; `docs/state.md` documents it for people.
///
/// Everything lives in one schema, `postback_verify`, which the store creates on first use and otherwise only
/// reads, inserts into, updates and deletes from: any other content of the database is never touched.
/// `schema_version` holds one row, the version: a later release reads it to migrate, and this one refuses a
/// schema whose version it does not know. `postbacks` holds one row per distinct valid postback: `key` is the
/// deduplication key's UTF-8 bytes as `bytea` (compared byte for byte, never by Unicode equivalence), `first_seen`
/// the start of the run (or the request) that first saw it, in milliseconds since 1970 UTC, `source` and `line`
/// where its first valid record was, `digest` what that first sighting carried (to name what differs in a later
/// one). A row whose `owner` is not null is a claim not yet confirmed: `owner` is the claiming connection's
/// token (which that connection holds as a session advisory lock while it lives), `claim` the batch's token,
/// `claimed_at` when, by the server's clock.
enum PostgresSchema {
    static let version: Int64 = 1
    static let name = "postback_verify"

    static let create = [
        "CREATE SCHEMA IF NOT EXISTS postback_verify",
        "CREATE TABLE postback_verify.schema_version (version integer NOT NULL)",
        "INSERT INTO postback_verify.schema_version (version) VALUES (1)",
        """
        CREATE TABLE postback_verify.postbacks (
            key bytea NOT NULL,
            first_seen bigint NOT NULL,
            source text NOT NULL,
            line bigint NOT NULL,
            digest bytea NOT NULL,
            owner bigint,
            claim bigint,
            claimed_at timestamp with time zone,
            CONSTRAINT postbacks_pkey PRIMARY KEY (key)
        )
        """,
        "CREATE INDEX postbacks_first_seen ON postback_verify.postbacks (first_seen)",
    ]

    /// One line per table, view, column, constraint, index and trigger in the schema, sorted: what ``expected``
    /// must equal before anything writes. Views are left out (a user's own reports may live beside our tables);
    /// NOT NULL is read from the column (PostgreSQL 18 also lists it as a constraint, which is skipped).
    static let describe = """
        WITH n AS (SELECT oid FROM pg_catalog.pg_namespace WHERE nspname = 'postback_verify')
        SELECT line FROM (
            SELECT 'relation ' || c.relname || ' ' || c.relkind::text AS line
            FROM pg_catalog.pg_class c, n
            WHERE c.relnamespace = n.oid AND c.relkind NOT IN ('v', 'm')
            UNION ALL
            SELECT 'column ' || c.relname || '.' || a.attname || ' '
                || pg_catalog.format_type(a.atttypid, a.atttypmod) || CASE WHEN a.attnotnull THEN ' not null' ELSE '' END
            FROM pg_catalog.pg_class c JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid, n
            WHERE c.relnamespace = n.oid AND c.relkind = 'r' AND a.attnum > 0 AND NOT a.attisdropped
            UNION ALL
            SELECT 'constraint ' || c.relname || '.' || k.conname || ' ' || pg_catalog.pg_get_constraintdef(k.oid)
            FROM pg_catalog.pg_constraint k JOIN pg_catalog.pg_class c ON c.oid = k.conrelid, n
            WHERE c.relnamespace = n.oid AND k.contype <> 'n'
            UNION ALL
            SELECT 'index ' || pg_catalog.pg_get_indexdef(i.indexrelid)
            FROM pg_catalog.pg_index i JOIN pg_catalog.pg_class c ON c.oid = i.indrelid, n
            WHERE c.relnamespace = n.oid
            UNION ALL
            SELECT 'trigger ' || c.relname || '.' || t.tgname
            FROM pg_catalog.pg_trigger t JOIN pg_catalog.pg_class c ON c.oid = t.tgrelid, n
            WHERE c.relnamespace = n.oid AND NOT t.tgisinternal
        ) AS schema
        ORDER BY line COLLATE "C"
        """

    /// ``describe`` of a schema ``create`` made (with `search_path` set to `pg_catalog`, so names are qualified).
    static let expected = [
        "column postbacks.claim bigint",
        "column postbacks.claimed_at timestamp with time zone",
        "column postbacks.digest bytea not null",
        "column postbacks.first_seen bigint not null",
        "column postbacks.key bytea not null",
        "column postbacks.line bigint not null",
        "column postbacks.owner bigint",
        "column postbacks.source text not null",
        "column schema_version.version integer not null",
        "constraint postbacks.postbacks_pkey PRIMARY KEY (key)",
        "index CREATE INDEX postbacks_first_seen ON postback_verify.postbacks USING btree (first_seen)",
        "index CREATE UNIQUE INDEX postbacks_pkey ON postback_verify.postbacks USING btree (key)",
        "relation postbacks r",
        "relation postbacks_first_seen i",
        "relation postbacks_pkey i",
        "relation schema_version r",
    ]

    static let schemaExists = "SELECT count(*) FROM pg_catalog.pg_namespace WHERE nspname = 'postback_verify'"
    static let versions = "SELECT version FROM postback_verify.schema_version"

    /// Claims a batch in one statement. `$1` keys (distinct, in byte order, so that concurrent batches lock rows
    /// in one order and never deadlock), `$2` sources, `$3` lines, `$4` digests, `$5` first seen (ms), `$6` the
    /// retention cutoff (ms), `$7` this connection's owner token, `$8` this claim's token, `$9` the lease (ms).
    ///
    /// A key not there is inserted as this claim's. A key there is taken over (its row becomes this claim's) when
    /// it is past the retention, or is a claim whose lease ran out or whose owner's connection is gone (its session
    /// advisory lock is free: `pg_try_advisory_xact_lock_shared` gets it). Any other row is answered as it is (a
    /// duplicate): `ON CONFLICT DO UPDATE` locks it and reads its latest committed version, which a plain SELECT in
    /// the same statement could not see, so a key committed by a concurrent batch is never missed. Every input
    /// key comes back once: `ours` says whether it is this claim's.
    static let claim = """
        INSERT INTO postback_verify.postbacks AS p (key, first_seen, source, line, digest, owner, claim, claimed_at)
        SELECT i.key, $5, i.source, i.line, i.digest, $7, $8, pg_catalog.statement_timestamp()
        FROM unnest($1::bytea[], $2::text[], $3::bigint[], $4::bytea[])
            WITH ORDINALITY AS i(key, source, line, digest, n)
        ORDER BY i.n
        ON CONFLICT (key) DO UPDATE SET (first_seen, source, line, digest, owner, claim, claimed_at) = (
            SELECT CASE WHEN t.free THEN excluded.first_seen ELSE p.first_seen END,
                   CASE WHEN t.free THEN excluded.source ELSE p.source END,
                   CASE WHEN t.free THEN excluded.line ELSE p.line END,
                   CASE WHEN t.free THEN excluded.digest ELSE p.digest END,
                   CASE WHEN t.free THEN excluded.owner ELSE p.owner END,
                   CASE WHEN t.free THEN excluded.claim ELSE p.claim END,
                   CASE WHEN t.free THEN excluded.claimed_at ELSE p.claimed_at END
            FROM (SELECT p.first_seen < $6
                      OR (p.owner IS NOT NULL AND p.owner <> $7
                          AND (p.claimed_at < pg_catalog.statement_timestamp() - $9 * interval '1 millisecond'
                               OR pg_catalog.pg_try_advisory_xact_lock_shared(p.owner))) AS free) AS t)
        RETURNING p.key, coalesce(p.claim = $8, false), p.first_seen, p.source, p.line, p.digest, p.owner IS NULL
        """

    /// Confirms a claim's rows (`$1` keys, `$2` the claim's token), locking them in byte order (see ``claim``).
    /// Rows another connection took over meanwhile (this one was presumed dead) are left as they are.
    static let confirm = """
        WITH mine AS (
            SELECT key FROM postback_verify.postbacks WHERE key = ANY($1::bytea[]) AND claim = $2
            ORDER BY key FOR UPDATE)
        UPDATE postback_verify.postbacks AS p SET owner = NULL, claim = NULL, claimed_at = NULL
        FROM mine WHERE p.key = mine.key
        """

    /// Withdraws a claim's rows (`$1` keys, `$2` its token): their records were not delivered.
    static let release = """
        WITH mine AS (
            SELECT key FROM postback_verify.postbacks WHERE key = ANY($1::bytea[]) AND claim = $2
            ORDER BY key FOR UPDATE)
        DELETE FROM postback_verify.postbacks AS p USING mine WHERE p.key = mine.key
        """

    /// Pruning: at most `$2` rows first seen before `$1`, the oldest first, skipping rows a batch holds.
    static let prune = """
        DELETE FROM postback_verify.postbacks WHERE key IN (
            SELECT key FROM postback_verify.postbacks WHERE first_seen < $1
            ORDER BY first_seen LIMIT $2 FOR UPDATE SKIP LOCKED)
        """

    static let count = "SELECT count(*) FROM postback_verify.postbacks"
}
