import Foundation

/// A value behind an `NSLock`: the stores' one lock type.
///
/// Not `Synchronization.Mutex`: on Linux its waits happen in the Swift runtime's uninstrumented
/// priority-inheritance futexes, so ThreadSanitizer misses the happens-before edge between two holders and
/// reports every guarded access as a race (docs/hardening.md; `VerifiedTokenCache` moved to `NSLock` for the
/// same reason). An `NSLock` is a pthread mutex, which ThreadSanitizer sees.
@_spi(Stores) public final class Locked<Value>: @unchecked Sendable {
    // @unchecked: `value` is only read or written with `lock` held.
    private let lock = NSLock()
    private var value: Value

    @_spi(Stores) public init(_ value: Value) {
        self.value = value
    }

    /// Runs `body` with the value, holding the lock.
    @_spi(Stores) public func withLock<Result, Failure: Error>(
        _ body: (inout Value) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
