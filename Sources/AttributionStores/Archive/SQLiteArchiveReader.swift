@_spi(Stores) import Attribution

/// Reads a SQLite archive of received postbacks (`SQLiteReceivedArchive`) in id order, read-only, for
/// `postback-verify export`. Rows are committed one writer at a time in id order, so the id is the cursor.
@_spi(CommandLine) public final class SQLiteArchiveReader {
    @_spi(CommandLine) public let path: String
    private let connection: SQLiteConnection
    private let select: SQLiteStatement

    /// Opens the archive at `path` read-only; refuses a file that is not one (a state file given by mistake), or
    /// of a newer version. A version-1 archive (no `kept`: every row kept its body) is read as it is.
    @_spi(CommandLine) public init(path: String) throws(AttributionError) {
        self.path = path
        do {
            connection = try SQLiteConnection(path: path, readOnly: true)
            connection.setBusyTimeout(milliseconds: 60_000)
            let tables = try connection.prepare(
                "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'received_postbacks_schema'")
            guard try tables.step(), tables.int64(0) == 1 else {
                throw AttributionError(.notOurs, "\(path) is not an archive of received postbacks (it has no "
                                       + "received_postbacks_schema table); a receiver's archive is STATE-received"
                                       + ".sqlite beside its state file, or its --archive")
            }
            let versions = try connection.prepare("SELECT version FROM received_postbacks_schema")
            guard try versions.step() else {
                throw AttributionError(.damaged, "\(path) is damaged: received_postbacks_schema has no row")
            }
            let version = versions.int64(0)
            guard version == 1 || version == SQLiteReceivedArchive.schemaVersion else {
                throw AttributionError(version > SQLiteReceivedArchive.schemaVersion ? .newerSchema : .damaged,
                                       "\(path) has received_postbacks version \(version); this release knows "
                                       + "\(SQLiteReceivedArchive.schemaVersion)")
            }
            select = try connection.prepare("""
                SELECT id, received, request, route, verdict, code, key, body, record, \
                \(version == 1 ? "'body'" : "kept")
                FROM received_postbacks WHERE id > ? ORDER BY id LIMIT ?
                """)
        } catch {
            throw SQLiteReceivedArchive.error(error, path: path, doing: "read")
        }
    }

    /// At most `limit` rows after `cursor` (from the first when nil), in id order.
    @_spi(CommandLine)
    public func rows(after cursor: ArchiveCursor?, limit: Int) throws(AttributionError) -> [ExportedPostback] {
        defer { select.reset() }
        var rows: [ExportedPostback] = []
        do throws(SQLiteFailure) {
            try select.bind(1, cursor?.row ?? 0)
            try select.bind(2, Int64(limit))
            while try select.step() {
                rows.append(ExportedPostback(
                    cursor: ArchiveCursor(transaction: nil, row: select.int64(0)),
                    postback: ArchivedPostback(
                        received: select.int64(1), request: select.text(2), route: select.text(3),
                        verdict: select.text(4), code: select.isNull(5) ? nil : select.text(5), key: select.blob(6),
                        body: select.blob(7) ?? [], record: Array(select.text(8).utf8),
                        kept: ArchivedPostback.Kept(rawValue: select.text(9)) ?? .body)))
            }
        } catch {
            throw SQLiteReceivedArchive.error(error, path: path, doing: "read")
        }
        return rows
    }
}
