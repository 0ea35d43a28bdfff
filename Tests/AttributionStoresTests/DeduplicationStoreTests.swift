import Foundation
import Testing
@_spi(CommandLine) @_spi(Servers) @_spi(Stores) @testable import Attribution
@_spi(CommandLine) @_spi(Servers) @testable import AttributionStores

/// The ``DeduplicationStore``s a server shares between requests, held to one protocol: the tests taking a `Kind`
/// run the same claim, confirm and release checks over the memory store, a SQLite file and a PostgreSQL database
/// (a real server, ``TestPostgres``; left out where none can be had and none is required). The same answers,
/// "first seen" or "duplicate of (when, where)", and the same promises; what only one store has (a file's
/// refusals and migrations, a server's schema and reconnection) is tested beside it, here and in
/// `PostgresStateTests`.
@Suite("Deduplication stores: one protocol over memory, SQLite and PostgreSQL")
struct DeduplicationStoreTests {
    enum Kind: String, CaseIterable, Sendable {
        case memory
        case sqlite
        case postgres
    }

    /// The stores the conformance tests run over: PostgreSQL only where a server can be had or is required.
    static let kinds: [Kind] = TestPostgres.enabled ? Kind.allCases : [.memory, .sqlite]
    /// The stores that outlive their instance (a file, a database), for tests that open a second instance.
    static let sharedKinds: [Kind] = kinds.filter { $0 != .memory }

    static func temporaryPath() throws -> String {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("postback-verify-store-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory.appendingPathComponent("state.sqlite").path
    }

    /// A new place for a store of `kind` to live: a SQLite file's path, a new PostgreSQL database's connection
    /// string (nil for memory).
    static func location(_ kind: Kind) throws -> String? {
        switch kind {
        case .memory: nil
        case .sqlite: try temporaryPath()
        case .postgres: try TestPostgres.database()
        }
    }

    /// A store of `kind` at `location` (a new one when nil); the memory store has no retention and no lease.
    static func store(_ kind: Kind, at location: String? = nil, retentionDays: Int = 10, leaseSeconds: Double = 30)
        throws -> any DeduplicationStore {
        switch kind {
        case .memory:
            MemoryDeduplicationStore()
        case .sqlite:
            try SQLiteDeduplicationStore(path: location ?? temporaryPath(), retentionDays: retentionDays,
                                         leaseSeconds: leaseSeconds)
        case .postgres:
            try PostgreSQLDeduplicationStore(connectionString: location ?? TestPostgres.database(),
                                             retentionDays: retentionDays, leaseSeconds: leaseSeconds)
        }
    }

    struct UnknownStore: Error {}

    /// How many postbacks `store` remembers, claimed or confirmed (expired rows not yet pruned included).
    static func count(_ store: any DeduplicationStore) throws -> Int {
        switch store {
        case let memory as MemoryDeduplicationStore: memory.count
        case let file as SQLiteDeduplicationStore: try file.count()
        case let database as PostgreSQLDeduplicationStore: try database.count()
        default: throw UnknownStore()
        }
    }

    static func sighting(_ key: String, _ source: String = "request", _ line: Int = 1,
                         content: ContentFingerprint? = nil) -> PostbackSighting {
        TestSighting.sighting(key, source, line, content: content)
    }

    static let monday = TestSighting.monday

    /// A server's readiness check calls `probe()`: it must answer while the store does, and change nothing, on
    /// every store. (Its failure while a PostgreSQL server is down is checked through the receiver:
    /// Receiver/Tests/slow.sh.)
    @Test("probe() answers while the store does, and leaves its claims as they were", arguments: kinds)
    func probeAnswers(_ kind: Kind) throws {
        let store = try Self.store(kind)
        try store.probe()
        #expect(try store.claim([Self.sighting("probed")], at: Self.monday) == [.firstSeen])
        try store.probe()
        let again = try store.claim([Self.sighting("probed", "another")], at: Self.monday)
        #expect(again.first?.duplicateOf?.isPending == true)
    }

    @Test("First seen, then a duplicate naming where and when", arguments: kinds)
    func firstThenDuplicate(_ kind: Kind) throws {
        let store = try Self.store(kind)
        #expect(try store.claimAndConfirm(Self.sighting("P1", "a", 4), at: Self.monday) == .firstSeen)
        let later = Self.monday.addingTimeInterval(3600)
        let answer = try store.claimAndConfirm(Self.sighting("P1", "b", 9), at: later)
        #expect(answer == .duplicate(of: DuplicateReference(source: "a", line: 4, firstSeen: Self.monday)))
        #expect(answer.duplicateOf?.firstSeen?.timeIntervalSince1970 == 1_795_305_600.25)
    }

    @Test("""
        Regression: keys compare by their bytes: A+U+030A and U+00C5 (and SKAdNetwork ones), and keys with U+0000, \
        are distinct postbacks
        """, arguments: kinds)
    func equivalentKeysAreDistinct(_ kind: Kind) throws {
        let store = try Self.store(kind)
        let keys = ["A\u{030A}", "\u{00C5}", "A\u{030A}\u{1F}0", "\u{00C5}\u{1F}0", "A\u{0}B", "A"]
        let answers = try store.claimAndConfirm(keys.enumerated().map { Self.sighting($1, "-", $0 + 1) },
                                            at: Self.monday) { $0 }
        #expect(answers == Array(repeating: .firstSeen, count: keys.count))
        let again = try store.claimAndConfirm(keys.reversed().map { Self.sighting($0, "g") }, at: Self.monday) { $0 }
        #expect(again.map { $0.duplicateOf?.line } == [6, 5, 4, 3, 2, 1])
        #expect(again.allSatisfy { $0.duplicateOf?.source == "-" && $0.duplicateOf?.firstSeen == Self.monday })
    }

    @Test("A memory store's expected size is room, never a limit: past it, and at zero, the same answers",
          arguments: [0, 1, 3])
    func expectedKeysIsNoLimit(_ expectedKeys: Int) {
        let store = MemoryDeduplicationStore(expectedKeys: expectedKeys)
        let keys = (1...50).map { "P\($0)" }
        let first = store.claim(keys.map { Self.sighting($0, "a") }, at: Self.monday)
        #expect(first.allSatisfy { $0 == .firstSeen })
        let again = store.claim(keys.map { Self.sighting($0, "b") }, at: Self.monday)
        #expect(again.allSatisfy { $0.duplicateOf?.source == "a" })
        #expect(store.count == 50)
    }

    @Test("A repeat within one call is a duplicate of its first occurrence there", arguments: kinds)
    func repeatWithinCall(_ kind: Kind) throws {
        let store = try Self.store(kind)
        let answers = try store.claimAndConfirm(
            [Self.sighting("X", "f", 1), Self.sighting("Y", "f", 2), Self.sighting("X", "f", 3)],
            at: Self.monday) { $0 }
        // The first X is claimed, not yet confirmed, when the second is answered: a duplicate of a pending record.
        #expect(answers == [.firstSeen, .firstSeen, .duplicate(of: DuplicateReference(
            source: "f", line: 1, firstSeen: Self.monday, isPending: true))])
    }

    struct NotStored: Error {}

    @Test("Nothing is remembered when the store step throws (insert after store)", arguments: kinds)
    func nothingRememberedWhenStoreFails(_ kind: Kind) throws {
        let store = try Self.store(kind)
        #expect(throws: NotStored.self) {
            try store.claimAndConfirm([Self.sighting("Z")], at: Self.monday) { _ in throw NotStored() }
        }
        #expect(try store.claimAndConfirm(Self.sighting("Z"), at: Self.monday) == .firstSeen)
    }

    @Test("Every store gives the memory store's answers to the same sightings", arguments: sharedKinds)
    func sameAnswers(_ kind: Kind) throws {
        var random = SplitMix64(seed: 5)
        let keys = ["K", "\u{212A}", "A\u{030A}", "\u{00C5}", "e\u{301}", "\u{E9}", "plain"]
        let calls = (0..<40).map { call in
            (0..<Int.random(in: 1...6, using: &random)).map { line in
                Self.sighting(keys.randomElement(using: &random)!, "call\(call)", line + 1)
            }
        }
        let memory = MemoryDeduplicationStore()
        let other = try Self.store(kind)
        for (number, call) in calls.enumerated() {
            let time = Self.monday.addingTimeInterval(Double(number))
            let fromMemory = try memory.claimAndConfirm(call, at: time) { $0 }
            let fromOther = try other.claimAndConfirm(call, at: time) { $0 }
            #expect(fromMemory == fromOther, "call \(number)")
        }
        #expect(memory.count == keys.count)
    }

    /// Sixteen callers send overlapping batches in different orders, one sighting a call or many, through the
    /// synchronous calls and the async overloads: on one store, and on a file or database also through three more
    /// stores on it (four connections).
    @Test("Concurrent callers on one store, and four stores on one file or database: each key first seen exactly once",
          arguments: kinds)
    func concurrentCallers(_ kind: Kind) async throws {
        let location = try Self.location(kind)
        let shared = try Self.store(kind, at: location)
        let stores = try [shared] + (kind == .memory ? [] : (1..<4).map { _ in try Self.store(kind, at: location) })
        let firsts = try await withThrowingTaskGroup(of: Int.self) { group in
            for caller in 0..<16 {
                let store = caller % 2 == 0 ? shared : stores[caller % stores.count]
                group.addTask {
                    var firsts = 0
                    // 4 batches of 25 of 100 keys, overlapping, in different orders (every key in some batch): enough
                    // to race, few enough transactions (a third are one call per sighting) for a sanitizer's run.
                    for batch in 0..<4 {
                        let keys = (0..<25).map { "key-\((($0 * 7) + batch * 13 + caller) % 100)" }
                        let sightings = keys.enumerated().map { Self.sighting($1, "caller-\(caller)", $0 + 1) }
                        let answers: [DeduplicationAnswer]
                        switch caller % 3 {
                        case 0: answers = try sightings.map { try store.claimAndConfirm($0, at: Self.monday) }
                        case 1: answers = try store.claimAndConfirm(sightings, at: Self.monday) { $0 }
                        default:
                            answers = try await store.claimAndConfirm(sightings, at: Self.monday) { answers in
                                await Task.yield()
                                return answers
                            }
                        }
                        firsts += answers.filter { $0 == .firstSeen }.count
                    }
                    return firsts
                }
            }
            return try await group.reduce(0, +)
        }
        #expect(firsts == 100)
        #expect(try Self.count(shared) == 100)
    }

    /// Both stores prune at most 512 expired rows a call (their `pruneLimit`), the oldest first, so that no call
    /// waits on a large delete. The memory store has no retention: it keeps every key.
    @Test("""
        A postback first seen more than the retention ago is first seen again; expired rows are pruned, at most 512 \
        a call
        """, arguments: sharedKinds)
    func retention(_ kind: Kind) throws {
        let location = try Self.location(kind)
        let store = try Self.store(kind, at: location, retentionDays: 10)
        let day = 86_400.0
        let old = Self.monday.addingTimeInterval(-30 * day)
        _ = try store.claimAndConfirm((0..<1300).map { Self.sighting("old-\($0)", "old", $0 + 1) }, at: old) { $0 }
        _ = try store.claimAndConfirm(Self.sighting("E", "e", 1), at: old.addingTimeInterval(day))
        #expect(try Self.count(store) == 1301)
        let nineDaysOn = old.addingTimeInterval(9 * day)
        #expect(try store.claimAndConfirm(Self.sighting("old-1"), at: nineDaysOn).duplicateOf?.source == "old")
        #expect(try Self.count(store) == 1301, "nothing is expired yet, so nothing is pruned")

        // A later run: its first call prunes the 512 oldest; E, expired but not among them, is first seen again.
        let later = try Self.store(kind, at: location, retentionDays: 10)
        #expect(try later.claim([Self.sighting("E", "again", 2)], at: Self.monday) == [.firstSeen])
        #expect(try Self.count(later) == 1301 - 512)
        try later.confirm([ExactString("E")])
        #expect(try later.claimAndConfirm(Self.sighting("E", "third", 3), at: Self.monday).duplicateOf?.source
                == "again")
        #expect(try Self.count(later) == 1301 - 1024, "each call prunes at most 512")
        _ = try later.claim([Self.sighting("new-1")], at: Self.monday)
        #expect(try Self.count(later) == 2, "the last 276 old rows pruned: E and new-1 remain")
        _ = try later.claim([Self.sighting("new-2")], at: Self.monday)
        #expect(try Self.count(later) == 3)
        #expect(try later.claimAndConfirm(Self.sighting("E", "fourth", 4), at: Self.monday).duplicateOf?.source
                == "again", "the key seen again outlives the pruning")
    }

    @Test("SQLite: a file that is not a state is refused with its code", arguments: [
        ("not a database at all, padded to more than a header's length" + String(repeating: "!", count: 600),
         AttributionError.Code.notOurs),
    ])
    func refusal(contents: String, code: AttributionError.Code) throws {
        let path = try Self.temporaryPath()
        try Data(contents.utf8).write(to: URL(fileURLWithPath: path))
        #expect(throws: AttributionError(code, "")) { try SQLiteDeduplicationStore(path: path) }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data(contents.utf8))
    }

    // MARK: Claim and confirm

    @Test("A claim is pending until confirmed: a concurrent sighting is its duplicate, then a confirmed one's",
          arguments: kinds)
    func claimThenConfirm(_ kind: Kind) throws {
        let store = try Self.store(kind)
        var builder = ContentFingerprint.Builder(signedDigest: SHA256Digest(of: Array(#"{"a":1}"#.utf8)))
        builder.add(name: Array("conversion-value".utf8), value: Array("7".utf8))
        let content = builder.finish()
        let first = PostbackSighting(key: ExactString("C"), source: "run-a", line: 7, content: content)
        #expect(try store.claim([first], at: Self.monday) == [.firstSeen])
        let pending = try store.claim([Self.sighting("C", "run-b", 1)], at: Self.monday)
        #expect(pending == [.duplicate(of: DuplicateReference(
            source: "run-a", line: 7, firstSeen: Self.monday, firstContent: content, isPending: true))])
        try store.confirm([first.key])
        let confirmed = try store.claim([Self.sighting("C", "run-c", 1)], at: Self.monday)
        #expect(confirmed == [.duplicate(of: DuplicateReference(
            source: "run-a", line: 7, firstSeen: Self.monday, firstContent: content, isPending: false))])
    }

    /// A run confirms its previous call as it claims the next; PostgreSQL confirms a call whole in the claim's
    /// statement, and a call confirmed in part on its own.
    @Test("""
        Regression: claim(_:at:confirming:) confirms one call whole and another in part as it claims the next; a \
        key confirmed in the same call is a confirmed duplicate, not a pending one (PostgreSQL's one statement \
        answered pending)
        """, arguments: kinds)
    func claimConfirming(_ kind: Kind) throws {
        let location = try Self.location(kind)
        let store = try Self.store(kind, at: location)
        #expect(try store.claim([Self.sighting("W1", "run", 1), Self.sighting("W2", "run", 2)], at: Self.monday)
                == [.firstSeen, .firstSeen])
        #expect(try store.claim([Self.sighting("P1", "run", 3), Self.sighting("P2", "run", 4)], at: Self.monday)
                == [.firstSeen, .firstSeen])
        // W1 and W2 are the whole first call; P1 is half of the second.
        let answers = try store.claim(
            [Self.sighting("N1", "run", 5), Self.sighting("W1", "run", 6), Self.sighting("P1", "run", 7)],
            at: Self.monday, confirming: [ExactString("W1"), ExactString("W2"), ExactString("P1")])
        #expect(answers == [
            .firstSeen,
            .duplicate(of: DuplicateReference(source: "run", line: 1, firstSeen: Self.monday)),
            .duplicate(of: DuplicateReference(source: "run", line: 3, firstSeen: Self.monday)),
        ], "\(answers)")
        let observer = kind == .memory ? store : try Self.store(kind, at: location)
        let seen = try observer.claim(["W1", "W2", "P1", "P2", "N1"].map { Self.sighting($0, "observer") },
                                      at: Self.monday)
        #expect(seen.map { $0.duplicateOf?.isPending } == [false, false, false, true, true], "\(seen)")
    }

    @Test("Confirming part of a batch leaves the rest claimed; releasing part forgets only that part",
          arguments: kinds)
    func partOfABatch(_ kind: Kind) throws {
        let location = try Self.location(kind)
        let store = try Self.store(kind, at: location)
        let keys = (1...5).map { "P\($0)" }
        #expect(try store.claim(keys.map { Self.sighting($0, "batch", 1) }, at: Self.monday)
                == Array(repeating: .firstSeen, count: 5))
        try store.confirm([ExactString("P2"), ExactString("P4")])
        try store.release([ExactString("P3")])
        let observer = kind == .memory ? store : try Self.store(kind, at: location)
        let answers = try observer.claim(keys.map { Self.sighting($0, "later", 2) }, at: Self.monday)
        #expect(answers.map { $0.duplicateOf?.isPending } == [true, false, nil, false, true])
        #expect(answers[2] == .firstSeen, "the released key is claimed again")
    }

    @Test("A released claim is forgotten: the next sighting is first seen", arguments: kinds)
    func releasedClaimIsFirstSeenAgain(_ kind: Kind) throws {
        let store = try Self.store(kind)
        #expect(try store.claim([Self.sighting("R", "a", 1)], at: Self.monday) == [.firstSeen])
        try store.release([ExactString("R")])
        #expect(try store.claim([Self.sighting("R", "b", 2)], at: Self.monday) == [.firstSeen])
        try store.confirm([ExactString("R")])
        try store.release([ExactString("R")])
        #expect(try store.claimAndConfirm(Self.sighting("R", "c", 3), at: Self.monday).duplicateOf?.source == "b",
                "release drops claims only, never a confirmed key")
    }

    @Test("The async overloads answer as the synchronous calls do", arguments: kinds)
    func asyncOverloads(_ kind: Kind) async throws {
        let store = try Self.store(kind)
        let answers: [DeduplicationAnswer] = try await store.claim([Self.sighting("A1")], at: Self.monday)
        #expect(answers == [.firstSeen])
        try await store.confirm([ExactString("A1")])
        let again = try await store.claimAndConfirm([Self.sighting("A1", "later", 2)], at: Self.monday) { answers in
            await Task.yield()
            return answers
        }
        #expect(again.first?.duplicateOf?.isPending == false)
    }

    // MARK: Schema versions

    @Test("A version-1 state (an earlier release's) is migrated: its postbacks stay duplicates, schema 3 after")
    func migratesVersion1() throws {
        let path = try Self.temporaryPath()
        do {
            let old = try SQLiteConnection(path: path, readOnly: false)
            try old.execute(StateSchema.createVersion1 + """
                INSERT INTO postbacks (key, first_seen, source, line)
                    VALUES ('OLD', \(Self.monday.millisecondsSince1970), 'old.jsonl', 3);
                PRAGMA journal_mode = WAL;
                """)
        }
        let store = try SQLiteDeduplicationStore(path: path)
        #expect(try store.claim([Self.sighting("OLD", "new", 1)], at: Self.monday)
                == [.duplicate(of: DuplicateReference(source: "old.jsonl", line: 3, firstSeen: Self.monday))])
        let reader = try SQLiteConnection(path: path, readOnly: true)
        let version = try reader.prepare("SELECT version FROM postback_verify_schema")
        #expect(try version.step() && version.int64(0) == 3)
        let hash = try reader.prepare("SELECT hash FROM postbacks WHERE key = 'OLD'")
        #expect(try hash.step() && hash.int64(0) == StateKeyHash.of(Array("OLD".utf8)))
    }

    /// Part of the file format (schema version 3 files hold these values), so it must never change. The expected
    /// values are FNV-1a 64's published test vectors ("" is its offset basis, "a" 0xaf63dc4c8601ec8c, "foobar"
    /// 0x85944171f73967e8) put through MurmurHash3's fmix64 by an independent implementation (a few lines of
    /// Python), not this one's output.
    @Test("StateKeyHash is FNV-1a 64 then fmix64, as a signed integer", arguments: [
        ("", -1_166_397_803_181_037_274 as Int64),
        ("a", -9_033_471_704_281_723_301),
        ("foobar", 3_180_132_088_784_447_275),
        ("CF386F01-DC32-5DCD-ABE6-BB88775B83D2", -146_270_150_607_159_725),
    ])
    func keyHashIsStable(_ text: String, _ expected: Int64) {
        #expect(StateKeyHash.of(Array(text.utf8)) == expected)
    }

    static func fingerprint(_ value: String) -> ContentFingerprint {
        var builder = ContentFingerprint.Builder(signedDigest: SHA256Digest(of: Array(#"{"a":1}"#.utf8)))
        builder.add(name: Array("conversion-value".utf8), value: Array(value.utf8))
        return builder.finish()
    }

    /// Its postbacks stay duplicates with their conflict digests, its ids and claims are kept (a dead owner's claim
    /// is then taken over), every key is under its hash, and the old table is gone.
    @Test("A version-2 state (the previous release's, made by its own SQL) is migrated to 3")
    func migratesVersion2() throws {
        let path = try Self.temporaryPath()
        let first = Self.fingerprint("7")
        let seen = Self.monday.millisecondsSince1970
        let digest = first.bytes.map { String(format: "%02x", $0) }.joined()
        do {
            let old = try SQLiteConnection(path: path, readOnly: false)
            try old.execute(StateSchema.createVersion2 + """
                INSERT INTO postbacks (id, key, first_seen, source, line, content)
                    VALUES (5, 'KEPT', \(seen), 'old.jsonl', 3, x'\(digest)');
                INSERT INTO postbacks (id, key, first_seen, source, line, content)
                    VALUES (9, 'BARE', \(seen), 'older.jsonl', 8, NULL);
                INSERT INTO postbacks (id, key, first_seen, source, line, content)
                    VALUES (12, 'DEAD', \(seen), 'killed.jsonl', 1, NULL);
                INSERT INTO owners (id, host, pid, lease_until) VALUES (77, 'gone', 1, 0);
                INSERT INTO claims (lo, hi, owner) VALUES (12, 12, 77);
                PRAGMA journal_mode = WAL;
                """)
        }
        let store = try SQLiteDeduplicationStore(path: path)
        let later = Self.monday.addingTimeInterval(60)
        let answers = try store.claim([
            Self.sighting("KEPT", "new", 1, content: Self.fingerprint("9")), Self.sighting("BARE", "new", 2),
            Self.sighting("DEAD", "new", 3), Self.sighting("NEW", "new", 4),
        ], at: later)
        #expect(answers == [
            .duplicate(of: DuplicateReference(source: "old.jsonl", line: 3, firstSeen: Self.monday,
                                              firstContent: first, isPending: false)),
            .duplicate(of: DuplicateReference(source: "older.jsonl", line: 8, firstSeen: Self.monday)),
            .firstSeen, .firstSeen,
        ])
        // The D2 comparison still has the first sighting's digest to compare against.
        #expect(answers.first?.duplicateOf?.firstContent?.bytes == first.bytes)
        let reader = try SQLiteConnection(path: path, readOnly: true)
        let version = try reader.prepare("SELECT version FROM postback_verify_schema")
        #expect(try version.step() && version.int64(0) == 3)
        let rows = try reader.prepare("SELECT id, key, hash FROM postbacks ORDER BY id")
        var found: [(Int64, String, Int64)] = []
        while try rows.step() { found.append((rows.int64(0), rows.text(1), rows.int64(2))) }
        #expect(found.map(\.0) == [5, 9, 12, 13], "ids kept, a new row after them")
        #expect(found.allSatisfy { $0.2 == StateKeyHash.of(Array($0.1.utf8)) }, "every key under its hash")
        let tables = try reader.prepare("SELECT count(*) FROM sqlite_schema WHERE name = 'postbacks_version2'")
        #expect(try tables.step() && tables.int64(0) == 0)
    }

    /// ... and stays a duplicate after the other key is gone (its hash free again).
    @Test("Version 3: a key whose hash another key holds is kept without a hash")
    func hashCollision() throws {
        let path = try Self.temporaryPath()
        let store = try SQLiteDeduplicationStore(path: path)
        #expect(try store.claim([Self.sighting("SEED")], at: Self.monday) == [.firstSeen])
        // Forge a collision: a row whose key is not the one its hash stands for ("B"'s hash, another key).
        let writer = try SQLiteConnection(path: path, readOnly: false)
        writer.setBusyTimeout(milliseconds: 5_000)
        try writer.execute("INSERT INTO postbacks (key, hash, first_seen, source, line) VALUES ('A', "
                           + "\(StateKeyHash.of(Array("B".utf8))), \(Self.monday.millisecondsSince1970), 'a.jsonl', 1)")
        #expect(try store.claim([Self.sighting("B", "b.jsonl", 2)], at: Self.monday) == [.firstSeen])
        let other = try SQLiteDeduplicationStore(path: path)
        let duplicate = DeduplicationAnswer.duplicate(of: DuplicateReference(
            source: "b.jsonl", line: 2, firstSeen: Self.monday, isPending: true))
        #expect(try other.claim([Self.sighting("B", "c.jsonl", 3)], at: Self.monday) == [duplicate])
        try writer.execute("DELETE FROM postbacks WHERE key = 'A'")
        // The hash is free again; "B" is still found by its bytes, not inserted a second time.
        #expect(try other.claim([Self.sighting("B", "d.jsonl", 4)], at: Self.monday) == [duplicate])
        #expect(try other.count() == 2)
        let unhashed = try writer.prepare("SELECT count(*) FROM postbacks WHERE hash IS NULL AND key = 'B'")
        #expect(try unhashed.step() && unhashed.int64(0) == 1)
    }

    @Test("SQLite: an empty file is a new state")
    func emptyFileIsNew() throws {
        let path = try Self.temporaryPath()
        _ = FileManager.default.createFile(atPath: path, contents: Data())
        let store = try SQLiteDeduplicationStore(path: path)
        #expect(try store.claimAndConfirm(Self.sighting("N")) == .firstSeen)
    }
}
