@_spi(Stores) import Attribution
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension ExactString {
    /// Byte order (`memcmp`, then the shorter first), as PostgreSQL compares `bytea` and SQLite `BINARY` text: the
    /// order in which a store locks a claim's keys, so that two calls lock shared keys in the same order.
    func precedes(_ other: ExactString) -> Bool {
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
