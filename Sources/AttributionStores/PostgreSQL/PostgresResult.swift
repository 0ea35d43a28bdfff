@_spi(Stores) import Attribution
internal import CAttributionPostgres

/// The rows a statement returned, in binary format, cleared when released.
final class PostgresResult {
    private let handle: OpaquePointer

    init(handle: OpaquePointer) {
        self.handle = handle
    }

    deinit {
        PQclear(handle)
    }

    var rowCount: Int { Int(PQntuples(handle)) }

    /// Rows changed by an INSERT, UPDATE or DELETE (0 for other statements).
    var changedRows: Int { Int(String(cString: PQcmdTuples(handle))) ?? 0 }

    func isNull(_ row: Int, _ column: Int) -> Bool {
        PQgetisnull(handle, Int32(row), Int32(column)) == 1
    }

    func bytes(_ row: Int, _ column: Int) -> [UInt8] {
        let count = Int(PQgetlength(handle, Int32(row), Int32(column)))
        guard count > 0, let value = PQgetvalue(handle, Int32(row), Int32(column)) else { return [] }
        return value.withMemoryRebound(to: UInt8.self, capacity: count) { Array(UnsafeBufferPointer(start: $0, count: count)) }
    }

    func text(_ row: Int, _ column: Int) -> String {
        String(decoding: bytes(row, column), as: UTF8.self)
    }

    /// A `bigint`, `integer` or `smallint` column (binary: big-endian, 8, 4 or 2 bytes).
    func int64(_ row: Int, _ column: Int) -> Int64 {
        var value: Int64 = 0
        let raw = bytes(row, column)
        for byte in raw { value = value << 8 | Int64(byte) }
        switch raw.count {
        case 4: return Int64(Int32(truncatingIfNeeded: value))
        case 2: return Int64(Int16(truncatingIfNeeded: value))
        default: return value
        }
    }

    /// A `boolean` column (binary: one byte, 1 for true).
    func bool(_ row: Int, _ column: Int) -> Bool {
        bytes(row, column) == [1]
    }
}
