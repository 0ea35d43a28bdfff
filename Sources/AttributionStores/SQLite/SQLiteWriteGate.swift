@_spi(Stores) import Attribution
import Foundation

/// The turn to write one SQLite file, among this process's connections to it, handed out in the order asked for.
///
/// SQLite itself lets a connection that finds the file's write lock taken sleep and try again (1, 2, 5, 10 ms, ...
/// under `busy_timeout`), so a connection that writes now and then (the relay recording its deliveries) waits for
/// ever behind one that writes all the time (the archive's group commits), whose next transaction begins as soon as
/// its last one ends: the outbox fell behind while postbacks arrived, and drained only after. Connections of one
/// process to one file take their turn here first, one at a time, first come first served; SQLite's lock then never
/// finds them in each other's way (other processes still meet `busy_timeout`).
final class SQLiteWriteGate: @unchecked Sendable {
    // @unchecked: `next` and `serving` are read and written only with `condition` locked.
    private let condition = NSCondition()
    private var next: UInt64 = 0
    private var serving: UInt64 = 0

    private static let gates = Locked<[String: SQLiteWriteGate]>([:])

    private init() {}

    /// The gate of the file at `path` (its real path: two spellings of one file share a gate); made on first use
    /// and kept for the process's life (one per file written).
    static func gate(for path: String) -> SQLiteWriteGate {
        let key = path.withCString { pointer -> String in
            guard let resolved = realpath(pointer, nil) else { return path }
            defer { free(resolved) }
            return String(cString: resolved)
        }
        return gates.withLock { gates in
            if let gate = gates[key] { return gate }
            let gate = SQLiteWriteGate()
            gates[key] = gate
            return gate
        }
    }

    /// Runs `body` (a write transaction) in this file's turn, after every caller that asked before.
    func withTurn<Value, Failure: Error>(_ body: () throws(Failure) -> Value) throws(Failure) -> Value {
        condition.lock()
        let ticket = next
        next &+= 1
        while serving != ticket { condition.wait() }
        condition.unlock()
        defer {
            condition.lock()
            serving &+= 1
            condition.broadcast()
            condition.unlock()
        }
        return try body()
    }
}
