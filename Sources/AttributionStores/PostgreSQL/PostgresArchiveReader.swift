@_spi(Stores) import Attribution

/// Reads the received-postback archive of a PostgreSQL state (`postback_verify.received_postbacks`) in cursor
/// order, for `postback-verify export`; writes nothing.
///
/// Receivers on several machines commit at once, and a transaction that took smaller row ids can commit after
/// one that took larger. So a row's cursor is the id of the transaction that wrote it, then its own id, and a row
/// is read only once every transaction with a smaller id has ended (it is older than the snapshot's `xmin`): a
/// transaction still running, or one that starts later, can then only add rows with greater cursors, and a
/// consumer that resumes after the last cursor it read misses none. The price: a transaction left open anywhere
/// on the server holds back what is read until it ends (rows wait; none is lost).
@_spi(CommandLine) public final class PostgresArchiveReader {
    /// The server and database, for messages (never the password).
    @_spi(CommandLine) public let target: String
    private let connection: PostgresConnection

    /// Connects and checks that the database holds a `postback_verify` schema of this version, untouched.
    @_spi(CommandLine) public init(connectionString: String) throws(AttributionError) {
        (connection, target) = try PostgresStateDatabase.connect(connectionString)
        let described: [String]
        do throws(PostgresFailure) {
            let exists = try connection.execute(PostgresSchema.schemaExists).int64(0, 0) == 1
            described = exists ? try PostgresStateDatabase.describe(connection) : []
        } catch {
            throw PostgresStateDatabase.stateError(error, target: target, doing: "cannot read", opening: true)
        }
        if described.isEmpty {
            throw AttributionError(.cannotOpen, "\(target) has no schema postback_verify: no receiver or run of "
                                   + "postback-verify has stored anything there")
        }
        if described == PostgresSchema.expectedVersion1 {
            throw AttributionError(.cannotOpen, "\(target) has schema version 1, without the archive of received "
                                   + "postbacks: a receiver or postback-verify --state of this release adds it")
        }
        try PostgresStateDatabase.check(connection, target: target)
    }

    /// At most `limit` rows after `cursor` (from the first when nil), in cursor order, of transactions that
    /// have all ended; fewer (or none) when no more have.
    @_spi(CommandLine)
    public func rows(after cursor: ArchiveCursor?, limit: Int) throws(AttributionError) -> [ExportedPostback] {
        do throws(PostgresFailure) {
            let result = try connection.execute(PostgresSchema.export, [
                .text(String(cursor?.transaction ?? 0)), .int64(cursor?.row ?? 0), .int64(Int64(limit)),
            ], prepare: true)
            return (0..<result.rowCount).map { row in
                ExportedPostback(
                    cursor: ArchiveCursor(transaction: UInt64(result.text(row, 0)) ?? 0, row: result.int64(row, 1)),
                    postback: ArchivedPostback(
                        received: result.int64(row, 2), request: result.text(row, 3), route: result.text(row, 4),
                        verdict: result.text(row, 5), code: result.isNull(row, 6) ? nil : result.text(row, 6),
                        key: result.isNull(row, 7) ? nil : result.bytes(row, 7), body: result.bytes(row, 8),
                        record: result.bytes(row, 9),
                        kept: ArchivedPostback.Kept(rawValue: result.text(row, 10)) ?? .body))
            }
        } catch {
            throw PostgresStateDatabase.stateError(error, target: target, doing: "cannot read the archive in",
                                                   opening: false)
        }
    }
}
