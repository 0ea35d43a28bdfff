import Foundation

/// The process's tables of multiples of trusted P-256 keys (``P256KeyTable``), each built once, lazily, when its
/// key has verified enough signatures to repay the building, and then shared by every thread.
///
/// Keyed by the public point's bytes, so every ``ECPublicKey`` value holding the same key (Apple's AdAttributionKit
/// key and the byte-identical SKAdNetwork P-256 key, a network's impression key loaded twice) shares one table.
/// Not built at start-up: a run over one item never pays for a table. The thread whose signatures reach the
/// threshold builds the table outside the lock while the others go on without it; once published a table is
/// never modified or freed, so a thread keeps its reference without locking again.
///
/// Bounded: tables for at most ``maximumTables`` keys (real traffic has one key or a handful; each table holds a
/// few hundred KiB; later keys keep the generic multiplication), and counts for a bounded number of keys (when
/// full, the counts of keys without a table start over).
final class P256KeyTables: @unchecked Sendable {
    // Safe to share across threads: every stored property but the constants is read and written under `lock`.
    /// The tables every thread's ``P256BatchVerifier`` uses.
    static let shared = P256KeyTables(threshold: defaultThreshold)

    /// Signatures a key verifies before its table is built: more than the table saves its building cost over
    /// (Benchmarks/README.md has the measurements), so a key builds one only once the work spent without it
    /// already exceeds the building (the rent-or-buy rule: never more than twice the better choice's cost), and
    /// one item, or a short run, never pays for a table.
    static let defaultThreshold = 1024
    /// Signatures counted before a key gets its table (0: on its first signature).
    let threshold: Int
    /// Keys that get a table, at most, and keys whose signatures are counted, at most.
    let maximumTables: Int
    private var maximumCountedKeys: Int { 8 * maximumTables }

    private let lock = NSLock()
    private var keys: [[UInt8]: KeyState] = [:]
    private var builtTables = 0

    private struct KeyState {
        var verified = 0
        var table: P256KeyTable?
        /// A thread is building the table, or building failed (libcrypto without precomputation): do not start.
        var started = false
    }

    init(threshold: Int, maximumTables: Int = 8) {
        self.threshold = threshold
        self.maximumTables = maximumTables
    }

    /// Counts `count` more signatures under the key whose uncompressed point is `point`, and returns its table:
    /// the one already built, or built now by this call if these signatures reach the threshold; nil otherwise.
    func table(forPoint point: [UInt8], adding count: Int) -> P256KeyTable? {
        let (table, build): (P256KeyTable?, Bool) = lock.withLock {
            if keys[point] == nil {
                if keys.count >= maximumCountedKeys {
                    // Counting starts over for the keys without a table (tables, and builds under way, stay).
                    keys = keys.filter { $0.value.started }
                    guard keys.count < maximumCountedKeys else { return (nil, false) }
                }
                keys[point] = KeyState()
            }
            if let table = keys[point]!.table { return (table, false) }
            keys[point]!.verified += count
            guard !keys[point]!.started, keys[point]!.verified >= threshold, builtTables < maximumTables else {
                return (nil, false)
            }
            keys[point]!.started = true
            builtTables += 1
            return (nil, true)
        }
        guard build else { return table }
        let built = P256KeyTable(uncompressedPoint: point)
        lock.withLock { keys[point]!.table = built }
        return built
    }

    /// The key's table if it has one, without counting anything.
    func existingTable(forPoint point: [UInt8]) -> P256KeyTable? {
        lock.withLock { keys[point]?.table }
    }
}
