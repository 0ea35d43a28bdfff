#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A key of a store's own claims (``StateDatabase``, ``PostgresStateDatabase``), hashed by its bytes in one go (a
/// `[UInt8]`, and so a ``DeduplicationKey``, hashes byte by byte): each claimed key is hashed when claimed and when
/// confirmed, tens of thousands of times a run. Equal exactly when the keys' bytes are.
struct ClaimedKey: Hashable {
    let utf8: [UInt8]

    init(_ key: DeduplicationKey) {
        utf8 = key.utf8
    }

    func hash(into hasher: inout Hasher) {
        utf8.withUnsafeBytes { hasher.combine(bytes: $0) }
    }

    /// Byte order (`memcmp`, then the shorter first), as PostgreSQL compares `bytea` and SQLite `BINARY` text.
    func precedes(_ other: ClaimedKey) -> Bool {
        utf8.withUnsafeBytes { left in
            other.utf8.withUnsafeBytes { right in
                let common = min(left.count, right.count)
                if common > 0, let a = left.baseAddress, let b = right.baseAddress {
                    let order = memcmp(a, b, common)
                    if order != 0 { return order < 0 }
                }
                return left.count < right.count
            }
        }
    }
}
