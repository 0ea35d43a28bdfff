import Dispatch
import Foundation

extension Thread {
    /// Runs `body` on a new thread; the result is waited for by `get()`.
    static func detachNewThreadWithResult<Value: Sendable>(_ body: @escaping @Sendable () throws -> Value)
        -> ThreadResult<Value> {
        let result = ThreadResult<Value>()
        Thread.detachNewThread { result.set(Result { try body() }) }
        return result
    }
}

final class ThreadResult<Value: Sendable>: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)
    private var result: Result<Value, any Error>?

    func set(_ result: Result<Value, any Error>) {
        self.result = result
        done.signal()
    }

    func get() throws -> Value {
        done.wait()
        done.signal()
        return try result!.get()
    }
}
