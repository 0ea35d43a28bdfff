@_spi(Stores) import Attribution

/// Where a consumer of an archive stands: every row exported after it has a greater cursor, so a consumer that
/// keeps the last cursor it read and resumes after it (`postback-verify export --after CURSOR`) reads each row once.
///
/// In a SQLite archive the cursor is the row's id (`812`): rows are committed one writer at a time, in id order. In
/// PostgreSQL, where receivers on several machines commit at once and a transaction that took a smaller id can
/// commit after one that took a larger, it is the writing transaction's id and the row's (`5071.812`), and a row is
/// exported only once every transaction with a smaller id has ended (`PostgresArchiveReader`): a later commit
/// can then only carry a greater transaction id, never land behind a consumer's cursor.
@_spi(CommandLine) public struct ArchiveCursor: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The writing transaction's id (PostgreSQL `xid8`); nil in a SQLite archive.
    public let transaction: UInt64?
    /// The row's id.
    public let row: Int64

    @_spi(CommandLine) public init(transaction: UInt64?, row: Int64) {
        self.transaction = transaction
        self.row = row
    }

    /// Reads `812` or `5071.812` (ASCII digits only, no sign, no leading zero, each part in range); nil otherwise.
    /// - Parameter text: the cursor's text, as ``description`` writes it.
    public init?(_ text: String) {
        let parts = text.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        func number(_ digits: Substring.UTF8View.SubSequence) -> UInt64? {
            guard !digits.isEmpty, digits.count <= 20,
                  digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
                  digits.count == 1 || digits.first != UInt8(ascii: "0") else { return nil }
            return UInt64(String(decoding: digits, as: UTF8.self))
        }
        switch parts.count {
        case 1:
            guard let row = number(parts[0]), row <= UInt64(Int64.max) else { return nil }
            self.init(transaction: nil, row: Int64(row))
        case 2:
            guard let transaction = number(parts[0]), let row = number(parts[1]), row <= UInt64(Int64.max) else {
                return nil
            }
            self.init(transaction: transaction, row: Int64(row))
        default:
            return nil
        }
    }

    /// `812` (SQLite) or `5071.812` (PostgreSQL: the transaction's id, then the row's).
    public var description: String {
        transaction.map { "\($0).\(row)" } ?? String(row)
    }

    /// The cursor as one non-negative integer, in decimal digits, that orders exactly as cursors do (export's
    /// `position` member): a warehouse's `MAX()` and `ORDER BY` on it follow the cursors, where the text
    /// `5071.813` sorts neither as a string (`"9999.5" > "10000.1"`) nor as a decimal (`5071.9 > 5071.10`).
    ///
    /// SQLite: the row id itself (at most 2^63 - 1, so it fits a signed 64-bit integer). PostgreSQL: the
    /// transaction id times 10^19 plus the row id (`5071.813` -> `50710000000000000000813`): the row id is below
    /// 10^19, so the transaction's digits are followed by the row's padded to 19; at most 39 digits (below 2^64 *
    /// 10^19), and 38 while the transaction id is below 10^19.
    public var position: String {
        guard let transaction, transaction > 0 else { return String(row) }
        let digits = String(row)
        return String(transaction) + String(repeating: "0", count: 19 - digits.utf8.count) + digits
    }

    /// Cursor order: by transaction (none counts as 0), then by row.
    /// - Parameters:
    ///   - left: a cursor.
    ///   - right: another cursor.
    /// - Returns: true when `left` comes before `right`.
    public static func < (left: ArchiveCursor, right: ArchiveCursor) -> Bool {
        (left.transaction ?? 0, left.row) < (right.transaction ?? 0, right.row)
    }
}
