@_spi(Stores) import Attribution
import Foundation

/// A row as an archive's reader returns it: its cursor and what was stored.
@_spi(CommandLine) public struct ExportedPostback: Sendable {
    /// The row's cursor: resume after it to read the rows stored later.
    public let cursor: ArchiveCursor
    /// What was stored.
    public let postback: ArchivedPostback
}

extension ExportedPostback {
    /// The row as `postback-verify export` prints it, one JSON object without the line end: the cursor, when and
    /// where it arrived, the verdict, the key, the body (base64), the cursor as a number and the stored record,
    /// read again with the strict parser and written with every character a terminal must not get raw escaped.
    /// Throws `damaged` when the stored record is not one JSON object.
    @_spi(CommandLine) public func jsonLine() throws(AttributionError) -> [UInt8] {
        jsonLine(record: try parsedRecord())
    }

    /// The stored record, read again with the strict parser; `damaged` when it is not one JSON object.
    @_spi(CommandLine) public func parsedRecord() throws(AttributionError) -> JSONValue {
        let record: JSONValue
        do {
            // A record nests an item's unsigned members (up to the verifier's depth, 16) a few levels down.
            record = try StrictJSONParser.parse(postback.record, options: .init(maximumDepth: 32, valueBudget: nil))
        } catch {
            throw AttributionError(.damaged, "the record of the row at cursor \(cursor) is not JSON "
                                   + "(\(error.reason)); the archive is damaged")
        }
        guard record.objectValue != nil else {
            throw AttributionError(.damaged, "the record of the row at cursor \(cursor) is not a JSON object; the "
                                   + "archive is damaged")
        }
        return record
    }

    /// ``jsonLine()`` with the record already parsed (``parsedRecord()``).
    @_spi(CommandLine) public func jsonLine(record: JSONValue) -> [UInt8] {
        let row = postback
        let members: [(String, JSONValue)] = [
            ("cursor", .string(cursor.description)),
            ("received", .string(RFC3339Timestamp.string(Date(milliseconds: row.received)))),
            ("request", .string(row.request)),
            ("route", .string(row.route)),
            ("verdict", .string(row.verdict)),
            ("code", row.code.map { .string($0) } ?? .null),
            ("key", row.key.map { .string(String(decoding: $0, as: UTF8.self)) } ?? .null),
            ("kept", .string(row.kept.rawValue)),
            ("body", .string(Base64.encode(row.body))),
            // Before the record: the cursor stays the first member and the record the last, which loaders read by
            // their place in the line (docs/state.md).
            ("position", .number(JSONNumber(validatedLiteral: cursor.position))),
            ("record", record),
        ]
        var out: [UInt8] = []
        JSONValue.appendObject(members, to: &out)
        return out
    }
}
