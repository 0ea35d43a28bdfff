@_spi(Stores) import Attribution
/// The PostgreSQL schema of the deduplication state and the received-postback archive, version 2; `docs/state.md`
/// documents it for people.
///
/// Everything lives in one schema, `postback_verify`, which the store creates on first use and otherwise only
/// reads, inserts into, updates and deletes from: nothing else in the database is touched. `schema_version` holds
/// one row, the version: a later release reads it to migrate, and this one refuses a schema whose version it does
/// not know. `postbacks` holds one row per distinct valid postback: `key` is the deduplication key's UTF-8 bytes as
/// `bytea` (compared byte for byte, never by Unicode equivalence), `first_seen` the start of the run (or the
/// request) that first saw it, in milliseconds since 1970 UTC, `source` and `line` where its first valid record
/// was, `content` its ``ContentFingerprint`` (to name what a later sighting changed), `claim` the token of the
/// call that claimed it. `claims` has a row per claiming call not yet confirmed (its `token`, its `owner`, and
/// when, by the server's clock): a postback whose `claim` is there is pending; once the call's records were
/// written, confirming deletes that one row, however many postbacks it claimed, so a postback's row is written
/// once. `owners` has one row per store instance: where it runs (`host`, `pid`, for people) and until when its
/// lease runs (`lease_until`, milliseconds since 1970 by the server's clock). An owner is alive while its lease
/// runs, unless it is known dead: its `host` is the checker's and its process is gone there. A lost connection
/// alone is not death: the owner reconnects and keeps its claims within its lease.
///
/// `received_postbacks` (version 2) is the receivers' archive: one row per stored request, written in the same
/// transaction as the claims of its group (``PostgresStateDatabase/claim(_:at:synchronousCommit:archiving:)``),
/// with the id of the transaction that wrote it (`xact`), by which `postback-verify export` reads rows in an order
/// no later commit can land behind (`ArchiveCursor`). Version 1 had no archive: it is migrated when opened.
enum PostgresSchema {
    static let version: Int64 = 2
    static let name = "postback_verify"

    static let create = [
        "CREATE SCHEMA IF NOT EXISTS postback_verify",
        "CREATE TABLE postback_verify.schema_version (version integer NOT NULL)",
        "INSERT INTO postback_verify.schema_version (version) VALUES (2)",
        """
        CREATE TABLE postback_verify.postbacks (
            key bytea NOT NULL,
            first_seen bigint NOT NULL,
            source text NOT NULL,
            line bigint NOT NULL,
            content bytea,
            claim bigint,
            CONSTRAINT postbacks_pkey PRIMARY KEY (key)
        )
        """,
        "CREATE INDEX postbacks_first_seen ON postback_verify.postbacks (first_seen)",
        """
        CREATE TABLE postback_verify.claims (
            token bigint NOT NULL,
            owner bigint NOT NULL,
            claimed_at bigint NOT NULL,
            CONSTRAINT claims_pkey PRIMARY KEY (token)
        )
        """,
        """
        CREATE TABLE postback_verify.owners (
            id bigint NOT NULL,
            host text NOT NULL,
            pid bigint NOT NULL,
            lease_until bigint NOT NULL,
            CONSTRAINT owners_pkey PRIMARY KEY (id)
        )
        """,
    ] + createArchive

    /// The archive's table and index: what version 2 added.
    static let createArchive = [
        """
        CREATE TABLE postback_verify.received_postbacks (
            id bigint GENERATED ALWAYS AS IDENTITY,
            xact xid8 NOT NULL DEFAULT pg_catalog.pg_current_xact_id(),
            received bigint NOT NULL,
            request text NOT NULL,
            route text NOT NULL,
            verdict text NOT NULL,
            code text,
            key bytea,
            body bytea NOT NULL,
            record text NOT NULL,
            kept text NOT NULL,
            CONSTRAINT received_postbacks_pkey PRIMARY KEY (id)
        )
        """,
        "CREATE INDEX received_postbacks_export ON postback_verify.received_postbacks (xact, id)",
    ]

    /// From version 1 (no archive) to 2.
    static let migrationFromVersion1 = createArchive + ["UPDATE postback_verify.schema_version SET version = 2"]

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
    static let expected = (expectedVersion1 + [
        "column received_postbacks.body bytea not null",
        "column received_postbacks.code text",
        "column received_postbacks.id bigint not null",
        "column received_postbacks.kept text not null",
        "column received_postbacks.key bytea",
        "column received_postbacks.received bigint not null",
        "column received_postbacks.record text not null",
        "column received_postbacks.request text not null",
        "column received_postbacks.route text not null",
        "column received_postbacks.verdict text not null",
        "column received_postbacks.xact xid8 not null",
        "constraint received_postbacks.received_postbacks_pkey PRIMARY KEY (id)",
        "index CREATE INDEX received_postbacks_export ON postback_verify.received_postbacks USING btree (xact, id)",
        "index CREATE UNIQUE INDEX received_postbacks_pkey ON postback_verify.received_postbacks USING btree (id)",
        "relation received_postbacks r",
        "relation received_postbacks_export i",
        "relation received_postbacks_id_seq S",
        "relation received_postbacks_pkey i",
    ]).sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }

    /// ``describe`` of a version-1 schema (no archive), which is migrated.
    static let expectedVersion1 = [
        "column claims.claimed_at bigint not null",
        "column claims.owner bigint not null",
        "column claims.token bigint not null",
        "column owners.host text not null",
        "column owners.id bigint not null",
        "column owners.lease_until bigint not null",
        "column owners.pid bigint not null",
        "column postbacks.claim bigint",
        "column postbacks.content bytea",
        "column postbacks.first_seen bigint not null",
        "column postbacks.key bytea not null",
        "column postbacks.line bigint not null",
        "column postbacks.source text not null",
        "column schema_version.version integer not null",
        "constraint claims.claims_pkey PRIMARY KEY (token)",
        "constraint owners.owners_pkey PRIMARY KEY (id)",
        "constraint postbacks.postbacks_pkey PRIMARY KEY (key)",
        "index CREATE INDEX postbacks_first_seen ON postback_verify.postbacks USING btree (first_seen)",
        "index CREATE UNIQUE INDEX claims_pkey ON postback_verify.claims USING btree (token)",
        "index CREATE UNIQUE INDEX owners_pkey ON postback_verify.owners USING btree (id)",
        "index CREATE UNIQUE INDEX postbacks_pkey ON postback_verify.postbacks USING btree (key)",
        "relation claims r",
        "relation claims_pkey i",
        "relation owners r",
        "relation owners_pkey i",
        "relation postbacks r",
        "relation postbacks_first_seen i",
        "relation postbacks_pkey i",
        "relation schema_version r",
    ]

    static let schemaExists = "SELECT count(*) FROM pg_catalog.pg_namespace WHERE nspname = 'postback_verify'"
    static let versions = "SELECT version FROM postback_verify.schema_version"

    /// The server's clock in milliseconds since 1970: leases are counted by one clock for every machine.
    static let now = "(extract(epoch FROM pg_catalog.statement_timestamp()) * 1000)::bigint"

    /// Claims a batch in one statement. `$1` keys (distinct, in byte order, so that concurrent calls lock rows
    /// in one order and never deadlock), `$2` sources, `$3` lines, `$4` contents (NULL: none), `$5` first seen
    /// (ms), `$6` the retention cutoff (ms), `$7` this store's owner id, `$8` this call's token, `$9` the lease
    /// (ms), `$10` this host, `$11` this process id, `$12` this owner's earlier calls to confirm whole first, `$13`
    /// owners the caller knows are dead (on its machine, their process gone).
    ///
    /// The calls `$12` are confirmed (their `claims` rows deleted), the owner's row inserted when it has none (an
    /// existing one is neither locked nor renewed: only the heartbeat renews, on its own connection, so a claim that
    /// waits on another call's rows holds no renewal up), and the call's `claims` row inserted when it claimed a key
    /// (once: the caller may run the statement again with the same token). A key not there is inserted as this call's.
    /// A key there is taken over (its row becomes this call's) when it is past the retention, or is pending (its
    /// `claim` in `claims`) for another owner that is dead: its lease ran out, or it is among `$13`. A lost connection
    /// is not death (the owner reconnects within its lease). Each pending duplicate comes back with its owner's id,
    /// host and process, so that the caller can tell an owner on its own machine whose process is gone, and run the
    /// statement again with it in `$13`. Any other row stays as it is: `ON CONFLICT DO UPDATE` locks it and reads its
    /// latest committed version (which a plain SELECT in the same statement could not see), so a key committed by a
    /// concurrent call is never missed. Only the rows that are not this call's come back (the duplicates, with
    /// `pending` true while their claim is not confirmed): every other key was claimed. Every part of the statement
    /// sees one snapshot, so the calls `$12` confirmed here still show in `claims` to the last SELECT: it counts them
    /// confirmed, as a confirm followed by a claim would (regression test: the conformance suite's `claimConfirming`
    /// over PostgreSQL).
    static let claim = """
        WITH confirmed AS (
            DELETE FROM postback_verify.claims WHERE token = ANY($12::bigint[]) AND owner = $7),
        owner AS (
            INSERT INTO postback_verify.owners AS o (id, host, pid, lease_until) VALUES ($7, $10, $11, \(now) + $9)
            ON CONFLICT (id) DO NOTHING),
        claimed AS (
            INSERT INTO postback_verify.postbacks AS p (key, first_seen, source, line, content, claim)
            SELECT i.key, $5, i.source, i.line, i.content, $8
            FROM unnest($1::bytea[], $2::text[], $3::bigint[], $4::bytea[])
                WITH ORDINALITY AS i(key, source, line, content, n)
            ORDER BY i.n
            ON CONFLICT (key) DO UPDATE SET (first_seen, source, line, content, claim) = (
                SELECT CASE WHEN t.free THEN excluded.first_seen ELSE p.first_seen END,
                       CASE WHEN t.free THEN excluded.source ELSE p.source END,
                       CASE WHEN t.free THEN excluded.line ELSE p.line END,
                       CASE WHEN t.free THEN excluded.content ELSE p.content END,
                       CASE WHEN t.free THEN excluded.claim ELSE p.claim END
                FROM (SELECT p.first_seen < $6 OR EXISTS (
                          SELECT 1 FROM postback_verify.claims c
                          WHERE c.token = p.claim AND c.owner <> $7
                              AND (c.owner = ANY($13::bigint[])
                                   OR NOT EXISTS (SELECT 1 FROM postback_verify.owners o
                                                  WHERE o.id = c.owner AND o.lease_until >= \(now))))
                      AS free) AS t)
            RETURNING p.key, p.first_seen, p.source, p.line, p.content, p.claim),
        call AS (
            INSERT INTO postback_verify.claims (token, owner, claimed_at)
            SELECT $8, $7, \(now) WHERE EXISTS (SELECT 1 FROM claimed WHERE claim = $8)
            ON CONFLICT (token) DO NOTHING)
        SELECT d.key, d.first_seen, d.source, d.line, d.content,
               EXISTS (SELECT 1 FROM postback_verify.claims c WHERE c.token = d.claim
                       AND NOT (c.token = ANY($12::bigint[]) AND c.owner = $7)) AS pending,
               w.owner, w.host, w.pid
        FROM claimed d LEFT JOIN LATERAL (
            SELECT c.owner, o.host, o.pid FROM postback_verify.claims c
                JOIN postback_verify.owners o ON o.id = c.owner
            WHERE c.token = d.claim AND c.owner <> $7) AS w ON true
        WHERE d.claim IS DISTINCT FROM $8
        """

    /// Confirms owner `$3`'s calls `$1` (tokens) whole: their `claims` rows deleted, one per call; and, of calls
    /// confirmed only in part, the postbacks `$2` (keys) of calls `$4` (tokens) one by one. Leaves the owner's
    /// row alone (the heartbeat renews the lease: a confirm waiting on a row another call holds must not hold the
    /// owner's row meanwhile). Rows another owner took over meanwhile have its token, and are left as they are.
    static let confirm = """
        WITH whole AS (
            DELETE FROM postback_verify.claims WHERE token = ANY($1::bigint[]) AND owner = $3)
        UPDATE postback_verify.postbacks SET claim = NULL
        WHERE key = ANY($2::bytea[]) AND claim = ANY($4::bigint[])
        """

    /// Withdraws the claims of calls `$2` (tokens) on keys `$1`: their records were not delivered; and forgets
    /// the calls `$3` (tokens) of owner `$4` with nothing left to confirm.
    static let release = """
        WITH released AS (
            DELETE FROM postback_verify.postbacks WHERE key = ANY($1::bytea[]) AND claim = ANY($2::bigint[]))
        DELETE FROM postback_verify.claims WHERE token = ANY($3::bigint[]) AND owner = $4
        """

    /// At closing (its pending postbacks released first): owner `$1` forgotten. A call of its still in `claims`
    /// (a release that failed) is then a dead owner's: its postbacks are taken over by their next sighting, and
    /// the call pruned with the retention.
    static let close = "DELETE FROM postback_verify.owners WHERE id = $1"

    /// The heartbeat, on a connection of its own: owner `$1`'s lease renewed by `$2` ms (its row written again,
    /// host `$3`, process `$4`, if it was pruned while the owner stalled). Answers whether the lease had lapsed,
    /// or was within `$5` ms of its end (a checker whose statement began before this one may have read it
    /// expired): the owner then checks which of its claims were taken over (``lostClaims``).
    static let renew = """
        WITH previous AS (
            SELECT lease_until FROM postback_verify.owners WHERE id = $1),
        renewed AS (
            INSERT INTO postback_verify.owners (id, host, pid, lease_until) VALUES ($1, $3, $4, \(now) + $2)
            ON CONFLICT (id) DO UPDATE SET lease_until = excluded.lease_until)
        SELECT NOT EXISTS (SELECT 1 FROM previous WHERE lease_until >= \(now) + $5)
        """

    /// The rows of keys `$1` (this owner's pending claims) whose claim is no longer one of this owner's calls `$2`:
    /// taken over while its lease had lapsed. With each, whether its new claim is still pending.
    static let lostClaims = """
        SELECT p.key, p.first_seen, p.source, p.line, p.content,
               EXISTS (SELECT 1 FROM postback_verify.claims c WHERE c.token = p.claim)
        FROM postback_verify.postbacks p
        WHERE p.key = ANY($1::bytea[]) AND (p.claim IS NULL OR p.claim <> ALL($2::bigint[]))
        """

    /// Pruning: at most `$2` rows first seen before `$1`, the oldest first, skipping rows a call holds.
    static let prune = """
        DELETE FROM postback_verify.postbacks WHERE key IN (
            SELECT key FROM postback_verify.postbacks WHERE first_seen < $1
            ORDER BY first_seen LIMIT $2 FOR UPDATE SKIP LOCKED)
        """

    /// Calls never confirmed whose owner died, made before `$1` (ms, server clock; their postbacks are past any
    /// retention by then), and owners whose lease ended more than `$2` ms ago with no call left.
    static let pruneClaims = """
        WITH calls AS (
            DELETE FROM postback_verify.claims c WHERE c.claimed_at < $1
                AND NOT EXISTS (SELECT 1 FROM postback_verify.owners o
                                WHERE o.id = c.owner AND o.lease_until >= \(now)))
        DELETE FROM postback_verify.owners o WHERE o.lease_until < \(now) - $2
            AND NOT EXISTS (SELECT 1 FROM postback_verify.claims c WHERE c.owner = o.id)
        """

    static let count = "SELECT count(*) FROM postback_verify.postbacks"

    /// The archive rows of a group, in one statement: `$1` received (ms), `$2` request ids, `$3` routes, `$4`
    /// verdicts, `$5` codes (NULL: none), `$6` keys (NULL: none), `$7` bodies, `$8` records, `$9` what each body
    /// holds; and the call `$10` of owner `$11` confirmed (its `claims` row deleted): the rows stored are the
    /// records written, in the same transaction as the claims.
    static let archive = """
        WITH confirmed AS (
            DELETE FROM postback_verify.claims WHERE token = $10 AND owner = $11)
        INSERT INTO postback_verify.received_postbacks
            (received, request, route, verdict, code, key, body, record, kept)
        SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[], $6::bytea[],
                             $7::bytea[], $8::text[], $9::text[])
        """

    /// ``archive`` with the group's owed deliveries in the same statement: `$12` request ids and `$13` destination
    /// names, a pair per delivery, each joined to the row the request's id stored (`PostgresOutbox`'s table).
    static let archiveOwing = """
        WITH confirmed AS (
            DELETE FROM postback_verify.claims WHERE token = $10 AND owner = $11),
        stored AS (
            INSERT INTO postback_verify.received_postbacks
                (received, request, route, verdict, code, key, body, record, kept)
            SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[], $6::bytea[],
                                 $7::bytea[], $8::text[], $9::text[])
            RETURNING id, request)
        INSERT INTO postback_relay.deliveries (postback, destination, status, owed_since, due)
        SELECT s.id, o.destination, 'owed', \(now), \(now)
        FROM stored s JOIN unnest($12::text[], $13::text[]) AS o(request, destination) ON o.request = s.request
        """

    /// Export: at most `$3` rows after the cursor (`$1` transaction id as text, `$2` row id), in cursor order,
    /// written by transactions older than every transaction still running (the snapshot's `xmin`): a transaction
    /// still running, or one that starts later, can only commit rows with a greater cursor.
    static let export = """
        SELECT r.xact::text, r.id, r.received, r.request, r.route, r.verdict, r.code, r.key, r.body, r.record,
               r.kept
        FROM postback_verify.received_postbacks r
        WHERE (r.xact, r.id) > ($1::text::xid8, $2)
            AND r.xact < pg_catalog.pg_snapshot_xmin(pg_catalog.pg_current_snapshot())
        ORDER BY r.xact, r.id
        LIMIT $3
        """
}
