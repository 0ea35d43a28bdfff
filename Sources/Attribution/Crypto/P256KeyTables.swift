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
/// With several threads checking signatures at once, the others go on checking without the table while one
/// builds it: that is rent too. So the count a key must reach is lowered by what the other busy threads will
/// check without a table during one build (``signaturesPerBuild`` each, up to the core count): a `--jobs 2` run
/// pays about the rent a `--jobs 1` run pays before its table is ready, instead of half as much again (the second
/// worker checked ~770 more signatures without the table while the first built it). A thread is busy while it is
/// inside ``P256BatchVerifier``'s check of signatures under a key without a table (``beginCheckingWithoutTable()``),
/// so a slow stream spread over idle threads keeps the whole threshold.
///
/// Items already read count as the near future (``announce(_:)``): a run that has read thousands of items ahead
/// of its signature checks (a file, a fast pipe, a large `verify(batch:)`) will check them, so a key's count is
/// extrapolated over the items read but not yet checked, by the key's share of the signatures counted so far, and
/// the table is built as soon as that expectation reaches the threshold, typically on the first chunk, instead of
/// after the whole threshold paid without it (the rent-or-buy rule with the future that is already known). A
/// live stream, whose items are checked as they arrive, has nothing read ahead and keeps the whole threshold; one
/// item never builds a table. Items that never reach a signature check (malformed, unknown kid) make the
/// expectation too high: at worst one table is built that a run did not need, once per trusted key per process
/// (a few ms of CPU), never more.
///
/// Bounded: tables for at most ``maximumTables`` keys (real traffic has one key or a handful; each table holds
/// 832 KiB; later keys keep the generic multiplication), and counts for a bounded number of keys (when
/// full, the counts of keys without a table start over).
final class P256KeyTables: @unchecked Sendable {
    // Safe to share across threads: every stored property but the constants is read and written under `lock`.
    /// The tables every thread's ``P256BatchVerifier`` uses.
    static let shared = P256KeyTables(threshold: sharedThreshold)

    /// Signatures a key verifies before its table is built: more than the table saves its building cost over
    /// (Benchmarks/README.md has the measurements), so a key builds one only once the work spent without it
    /// already exceeds the building (the rent-or-buy rule: never more than twice the better choice's cost), and
    /// one item, or a short run, never pays for a table.
    static let defaultThreshold = 64

    /// The process's tables' threshold: ``defaultThreshold``, except in a debug build (the tests' binaries), where
    /// the table arithmetic is unoptimised and a table costs about a second instead of ~10 ms, which every test
    /// process over a corpus paid (sanitizers several times over): there only a run of a million signatures under
    /// one key builds one. The table path's tests make tables of their own (`P256KeyTables(threshold:)`), and the
    /// release build's (`Tests/release-mutations.sh`, the benchmarks) uses ``defaultThreshold``.
    #if DEBUG
    static let sharedThreshold = 1 << 20
    #else
    static let sharedThreshold = defaultThreshold
    #endif
    /// Signatures counted before a key gets its table (0: on its first signature).
    let threshold: Int
    /// Keys that get a table, at most, and keys whose signatures are counted, at most.
    let maximumTables: Int
    private var maximumCountedKeys: Int { 8 * maximumTables }

    /// Signatures one thread checks without a table in the time one table takes to build, G's included (~48M
    /// against ~710k instructions; with two threads G's is built beside the key's, in about half the time).
    static let signaturesPerBuild = 64
    /// Threads that may run at once (busy threads beyond it wait for a core, so they check nothing meanwhile).
    private let cores: Int

    private let lock = NSLock()
    private var keys: [[UInt8]: KeyState] = [:]
    private var builtTables = 0
    /// A thread has started building G's table while another built a key's (``table(forPoint:adding:)``).
    private var generatorStarted = false
    /// Threads now checking signatures under a key without a table.
    private var checkingWithoutTable = 0
    /// Items announced (read, to be checked) and signatures checked under every key, with a table or without, since
    /// the process started.
    private var announced = 0
    private var checked = 0

    private struct KeyState {
        var verified = 0
        var table: P256KeyTable?
        /// A thread is building the table, or building failed (libcrypto without precomputation): do not start.
        var started = false
    }

    init(threshold: Int, maximumTables: Int = 8,
         cores: Int = ProcessInfo.processInfo.activeProcessorCount) {
        self.threshold = threshold
        self.maximumTables = maximumTables
        self.cores = max(1, cores)
    }

    /// About `count` signatures are coming (a run's files hold that many items): when that reaches the threshold
    /// a key's table needs, G's table (``P256KeyTable/generator``, which every key's sums need) starts building now,
    /// on a thread of its own, while the process is still starting on one core (key files, state, the first
    /// batch read), instead of when the first chunk's key gets its table. The thread that then builds the key's
    /// table no longer finds G's to build beside it and goes on checking signatures without tables meanwhile. A run
    /// whose items never reach a P-256 check (SKAdNetwork 1.0 and 2.0 alone, every kid unknown) spent a few ms of
    /// an otherwise idle core for nothing.
    func anticipate(signatures count: Int) {
        let starts: Bool = lock.withLock {
            guard count >= threshold, !generatorStarted else { return false }
            generatorStarted = true
            return true
        }
        guard starts else { return }
        let builder = Thread { _ = P256KeyTable.generator }
        builder.stackSize = 1 << 20
        builder.start()
    }

    /// Whether G's table has been started, early (``anticipate(signatures:)``) or beside a key's.
    var hasStartedGenerator: Bool { lock.withLock { generatorStarted } }

    /// A thread starts checking signatures under a key without a table (``endCheckingWithoutTable()`` when done).
    func beginCheckingWithoutTable() {
        lock.withLock { checkingWithoutTable += 1 }
    }

    func endCheckingWithoutTable() {
        lock.withLock { checkingWithoutTable -= 1 }
    }

    /// `count` more items were read and will be checked soon (at most one signature each): a batch handed to the
    /// workers, a `verify(batch:)`.
    func announce(_ count: Int) {
        lock.withLock { announced += count }
    }

    /// `count` more signatures (under any key, with a table or without) are being checked: called once per chunk,
    /// before the chunk's keys without a table are counted by ``table(forPoint:adding:)``.
    func noteChecked(_ count: Int) {
        lock.withLock { checked += count }
    }

    /// The count a key's signatures must reach, with the lock held: ``threshold`` less what the other busy threads
    /// check without a table while the table is built.
    private var effectiveThreshold: Int {
        let others = min(checkingWithoutTable, cores) - 1
        return others > 0 ? max(0, threshold - others * Self.signaturesPerBuild) : threshold
    }

    /// Counts `count` more signatures under the key whose uncompressed point is `point`, and returns its table:
    /// the one already built, or built now by this call if these signatures reach the threshold; nil otherwise.
    ///
    /// A thread that finds the key's table being built by another builds G's table meanwhile
    /// (``P256KeyTable/generator``, which every key's sums need too), so on two cores the two tables are built side
    /// by side instead of one after the other; with one thread, the builder makes G's after the key's, on first use.
    func table(forPoint point: [UInt8], adding count: Int) -> P256KeyTable? {
        enum Work { case none, key, generator }
        let (table, work): (P256KeyTable?, Work) = lock.withLock {
            if keys[point] == nil {
                if keys.count >= maximumCountedKeys {
                    // Counting starts over for the keys without a table (tables, and builds under way, stay).
                    keys = keys.filter { $0.value.started }
                    guard keys.count < maximumCountedKeys else { return (nil, .none) }
                }
                keys[point] = KeyState()
            }
            if let table = keys[point]!.table { return (table, .none) }
            keys[point]!.verified += count
            if keys[point]!.started {
                guard !generatorStarted else { return (nil, .none) }
                generatorStarted = true
                return (nil, .generator)
            }
            // This key's signatures to come among the items read but not checked yet, by its share so far.
            let verified = keys[point]!.verified
            let expected = Double(verified) * (1 + Double(max(0, announced - checked)) / Double(max(1, checked)))
            guard expected >= Double(effectiveThreshold), builtTables < maximumTables else {
                return (nil, .none)
            }
            keys[point]!.started = true
            builtTables += 1
            return (nil, .key)
        }
        switch work {
        case .none:
            return table
        case .generator:
            _ = P256KeyTable.generator
            return lock.withLock { keys[point]?.table }
        case .key:
            let built = P256KeyTable(uncompressedPoint: point)
            lock.withLock { keys[point]!.table = built }
            return built
        }
    }

    /// The key's table if it has one, without counting anything.
    func existingTable(forPoint point: [UInt8]) -> P256KeyTable? {
        lock.withLock { keys[point]?.table }
    }
}
