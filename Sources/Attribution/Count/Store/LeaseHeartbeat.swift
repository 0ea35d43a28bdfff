import Foundation

/// A thread that calls `beat` every `interval` seconds until stopped: a store's owner renewing its lease while
/// the thread that claimed waits (on a slow reader, a long request), so that its claims stay its own.
@_spi(Stores) public final class LeaseHeartbeat: @unchecked Sendable {
    // @unchecked: `stopped` is read and written only with `condition` locked.
    private let condition = NSCondition()
    private var stopped = false

    @_spi(Stores) public init(interval: Double, beat: @escaping @Sendable () -> Void) {
        let thread = Thread { [condition] in
            condition.lock()
            while !self.stopped {
                _ = condition.wait(until: Date(timeIntervalSinceNow: interval))
                if self.stopped { break }
                condition.unlock()
                beat()
                condition.lock()
            }
            condition.unlock()
        }
        thread.name = "postback-verify lease heartbeat"
        thread.stackSize = 256 * 1024
        thread.start()
    }

    /// Stops the thread (it ends within a moment; `beat` is not called again once this returns... unless it was
    /// already running).
    @_spi(CommandLine) @_spi(Stores) public func stop() {
        condition.lock()
        stopped = true
        condition.signal()
        condition.unlock()
    }
}

/// A heartbeat's weak link to its store, so the thread never keeps a store open: set once the store exists.
@_spi(Stores) public final class WeakStoreLink<Store: AnyObject>: @unchecked Sendable {
    // @unchecked: `_store` is only read and written under `lock`.
    private let lock = NSLock()
    private weak var _store: Store?

    @_spi(Stores) public init() {}

    @_spi(CommandLine) @_spi(Stores) public var store: Store? {
        get { lock.withLock { _store } }
        set { lock.withLock { _store = newValue } }
    }
}
