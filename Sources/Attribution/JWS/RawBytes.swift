#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The two libc byte routines the parsers need, in one place: `memcmp` to compare and `memchr` to find a byte.
/// Both are vectorised by libc; the Swift loops they replace ran a byte at a time.
enum RawBytes {
    /// True when the `count` bytes at `left` and at `right` are the same.
    @inline(__always)
    static func equal(_ left: UnsafeRawPointer, _ right: UnsafeRawPointer, count: Int) -> Bool {
        count == 0 || memcmp(left, right, count) == 0
    }

    /// True when `bytes` are exactly `literal`'s.
    @inline(__always)
    static func equal(_ bytes: UnsafeBufferPointer<UInt8>, _ literal: StaticString) -> Bool {
        guard bytes.count == literal.utf8CodeUnitCount else { return false }
        guard let base = bytes.baseAddress else { return true }
        return equal(base, literal.utf8Start, count: bytes.count)
    }

    /// The index of the first `byte` in `bytes` at or after `start`, or nil.
    @inline(__always)
    static func firstIndex(of byte: UInt8, in bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
        guard let base = bytes.baseAddress, start < bytes.count,
              let found = memchr(base + start, Int32(byte), bytes.count - start) else { return nil }
        return base.distance(to: found.assumingMemoryBound(to: UInt8.self))
    }
}
