import Foundation
import Testing
@testable import Attribution
@testable import AttributionStores

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

    /// A store of `kind` at `location` (a new one when nil).
    static func store(_ kind: Kind, at location: String? = nil) throws -> any DeduplicationStore {
        switch kind {
        case .memory: MemoryDeduplicationStore()
        case .sqlite: try SQLiteDeduplicationStore(path: location ?? temporaryPath())
        case .postgres: try PostgreSQLDeduplicationStore(connectionString: location ?? TestPostgres.database())
        }
    }

    static func sighting(_ key: String, _ source: String = "request", _ line: Int = 1,
                         content: ContentFingerprint? = nil) -> PostbackSighting {
        PostbackSighting(key: ExactString(key), source: source, line: line, content: content)
    }

    static let monday = Date(timeIntervalSince1970: 1_795_305_600.25)

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
        #expect(try store.deduplicate(Self.sighting("P1", "a", 4), at: Self.monday) == .firstSeen)
        let later = Self.monday.addingTimeInterval(3600)
        let answer = try store.deduplicate(Self.sighting("P1", "b", 9), at: later)
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
        let answers = try store.deduplicate(keys.enumerated().map { Self.sighting($1, "-", $0 + 1) },
                                            at: Self.monday) { $0 }
        #expect(answers == Array(repeating: .firstSeen, count: keys.count))
        let again = try store.deduplicate(keys.reversed().map { Self.sighting($0, "g") }, at: Self.monday) { $0 }
        #expect(again.map { $0.duplicateOf?.line } == [6, 5, 4, 3, 2, 1])
        #expect(again.allSatisfy { $0.duplicateOf?.source == "-" && $0.duplicateOf?.firstSeen == Self.monday })
    }

    @Test("A repeat within one call is a duplicate of its first occurrence there", arguments: kinds)
    func repeatWithinCall(_ kind: Kind) throws {
        let store = try Self.store(kind)
        let answers = try store.deduplicate(
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
            try store.deduplicate([Self.sighting("Z")], at: Self.monday) { _ in throw NotStored() }
        }
        #expect(try store.deduplicate(Self.sighting("Z"), at: Self.monday) == .firstSeen)
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
            let fromMemory = try memory.deduplicate(call, at: time) { $0 }
            let fromOther = try other.deduplicate(call, at: time) { $0 }
            #expect(fromMemory == fromOther, "call \(number)")
        }
        #expect(memory.count == keys.count)
    }

    @Test("Concurrent callers on one shared store: each key first seen exactly once", arguments: kinds)
    func concurrentCallers(_ kind: Kind) async throws {
        let store = try Self.store(kind)
        let keys = (0..<200).map { "key-\($0)" }
        let firsts = try await withThrowingTaskGroup(of: Int.self) { group in
            for task in 0..<8 {
                group.addTask {
                    var count = 0
                    for (line, key) in keys.shuffled().enumerated() {
                        let answer = try store.deduplicate(Self.sighting(key, "task\(task)", line + 1), at: Date())
                        if answer == .firstSeen { count += 1 }
                    }
                    return count
                }
            }
            return try await group.reduce(0, +)
        }
        #expect(firsts == keys.count)
    }

    @Test("Two stores on one file or database (two connections) count each key once", arguments: sharedKinds)
    func twoConnections(_ kind: Kind) async throws {
        let location = try Self.location(kind)
        let stores = [try Self.store(kind, at: location), try Self.store(kind, at: location)]
        let keys = (0..<300).map { "shared-\($0)" }
        let firsts = try await withThrowingTaskGroup(of: Int.self) { group in
            for (number, store) in stores.enumerated() {
                group.addTask {
                    var count = 0
                    for chunk in stride(from: 0, to: keys.count, by: 7) {
                        let sightings = keys[chunk..<min(chunk + 7, keys.count)]
                            .map { Self.sighting($0, "s\(number)") }
                        count += try store.deduplicate(sightings, at: Date()) { $0 }.filter { $0 == .firstSeen }.count
                    }
                    return count
                }
            }
            return try await group.reduce(0, +)
        }
        #expect(firsts == keys.count)
    }

    @Test("SQLite: a postback first seen more than the retention ago is first seen again, and gets pruned")
    func retention() throws {
        let path = try Self.temporaryPath()
        let store = try SQLiteDeduplicationStore(path: path, retentionDays: 10)
        let day = 86_400.0
        let old = (0..<600).map { Self.sighting("old-\($0)", "old", $0 + 1) }
        _ = try store.deduplicate(old, at: Self.monday) { $0 }
        #expect(try store.count() == 600)
        let nineDaysOn = Self.monday.addingTimeInterval(9 * day)
        #expect(try store.deduplicate(Self.sighting("old-1"), at: nineDaysOn).duplicateOf?.source == "old")
        #expect(try store.count() == 600, "nothing is expired yet, so nothing is pruned")
        let elevenDaysOn = Self.monday.addingTimeInterval(11 * day)
        #expect(try store.deduplicate(Self.sighting("old-599", "new", 1), at: elevenDaysOn) == .firstSeen)
        // Each call prunes a bounded share of the expired rows; a few calls remove them all.
        for call in 0..<3 {
            _ = try store.deduplicate(Self.sighting("new-\(call)"), at: elevenDaysOn)
        }
        #expect(try store.count() == 1 + 3, "the 600 expired rows are gone; old-599 came back as new")
        #expect(try store.deduplicate(Self.sighting("old-599"), at: elevenDaysOn).duplicateOf?.source == "new")
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

    @Test("""
        Regression: claim(_:at:confirming:) confirms one batch as it claims the next; a key confirmed in the same \
        call is a confirmed duplicate, not a pending one (PostgreSQL's one statement answered pending)
        """, arguments: kinds)
    func claimConfirming(_ kind: Kind) throws {
        let store = try Self.store(kind)
        #expect(try store.claim([Self.sighting("B1", "run", 1)], at: Self.monday) == [.firstSeen])
        let answers = try store.claim([Self.sighting("B2", "run", 2), Self.sighting("B1", "run", 3)],
                                      at: Self.monday, confirming: [ExactString("B1")])
        #expect(answers == [.firstSeen, .duplicate(of: DuplicateReference(source: "run", line: 1,
                                                                           firstSeen: Self.monday))], "\(answers)")
        let later = try store.claim([Self.sighting("B2", "other", 1)], at: Self.monday)
        #expect(later.first?.duplicateOf?.isPending == true, "B2 is claimed, not confirmed")
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

    @Test("Regression: taking over one claim of a dead owner's batch leaves the others to be taken over too")
    func deadOwnersBatch() throws {
        let path = try Self.temporaryPath()
        let store = try SQLiteDeduplicationStore(path: path)
        let connection = try SQLiteConnection(path: path, readOnly: false)
        connection.setBusyTimeout(milliseconds: 5000)
        let seen = Self.monday.millisecondsSince1970
        try connection.execute("""
            INSERT INTO owners (id, host, pid, lease_until) VALUES (5, 'elsewhere', 1, 1), (6, 'elsewhere', 1, \(
                Date().millisecondsSince1970 + 3_600_000));
            INSERT INTO postbacks (id, key, first_seen, source, line) VALUES (10, 'D1', \(seen), 'dead', 1),
                (11, 'D2', \(seen), 'dead', 2), (12, 'D3', \(seen), 'dead', 3), (13, 'L1', \(seen), 'live', 1),
                (14, 'L2', \(seen), 'live', 2);
            INSERT INTO claims (lo, hi, owner) VALUES (10, 12, 5), (13, 14, 6);
            """)
        #expect(try store.claim([Self.sighting("D2", "mine", 1)], at: Self.monday) == [.firstSeen])
        let rest = try store.claim(["D1", "D3", "L1", "L2", "D2"].map { Self.sighting($0, "mine", 2) },
                                   at: Self.monday)
        #expect(rest.map { $0.duplicateOf?.source } == [nil, nil, "live", "live", "mine"])
        #expect(rest.map { $0.duplicateOf?.isPending } == [nil, nil, true, true, true])
    }

    @Test("A released claim is forgotten: the next sighting is first seen", arguments: kinds)
    func releasedClaimIsFirstSeenAgain(_ kind: Kind) throws {
        let store = try Self.store(kind)
        #expect(try store.claim([Self.sighting("R", "a", 1)], at: Self.monday) == [.firstSeen])
        try store.release([ExactString("R")])
        #expect(try store.claim([Self.sighting("R", "b", 2)], at: Self.monday) == [.firstSeen])
        try store.confirm([ExactString("R")])
        try store.release([ExactString("R")])
        #expect(try store.deduplicate(Self.sighting("R", "c", 3), at: Self.monday).duplicateOf?.source == "b",
                "release drops claims only, never a confirmed key")
    }

    @Test("The async overloads answer as the synchronous calls do", arguments: kinds)
    func asyncOverloads(_ kind: Kind) async throws {
        let store = try Self.store(kind)
        let answers: [DeduplicationAnswer] = try await store.claim([Self.sighting("A1")], at: Self.monday)
        #expect(answers == [.firstSeen])
        try await store.confirm([ExactString("A1")])
        let again = try await store.deduplicate([Self.sighting("A1", "later", 2)], at: Self.monday) { answers in
            await Task.yield()
            return answers
        }
        #expect(again.first?.duplicateOf?.isPending == false)
    }

    /// A state file where another owner holds a claim on `key`.
    static func claimedByAnother(_ path: String, key: String, host: String, pid: Int64, leaseUntil: Int64) throws {
        let connection = try SQLiteConnection(path: path, readOnly: false)
        connection.setBusyTimeout(milliseconds: 5000)
        try connection.execute("""
            INSERT INTO owners (id, host, pid, lease_until) VALUES (77, '\(host)', \(pid), \(leaseUntil));
            INSERT INTO postbacks (key, first_seen, source, line)
                VALUES ('\(key)', \(Self.monday.millisecondsSince1970), 'other-run', 5);
            INSERT INTO claims (lo, hi, owner) SELECT id, id, 77 FROM postbacks WHERE key = '\(key)';
            """)
    }

    /// The id of a process that has exited (and been reaped).
    static func deadProcess() throws -> Int64 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/true")
        try process.run()
        process.waitUntilExit()
        return Int64(process.processIdentifier)
    }

    @Test("Regression: a claim whose owner died is taken over by the next sighting, which is first seen",
          arguments: ["process gone on this machine", "lease expired on another machine"])
    func deadOwnersClaimTakenOver(_ how: String) throws {
        let path = try Self.temporaryPath()
        let store = try SQLiteDeduplicationStore(path: path)
        let now = Date().millisecondsSince1970
        if how.hasPrefix("process") {
            try Self.claimedByAnother(path, key: "D", host: DeduplicationOwner.thisHost, pid: try Self.deadProcess(),
                                      leaseUntil: now + 3_600_000)
        } else {
            try Self.claimedByAnother(path, key: "D", host: "elsewhere", pid: 1, leaseUntil: now - 1)
        }
        #expect(try store.claim([Self.sighting("D", "mine", 9)], at: Self.monday) == [.firstSeen])
        try store.confirm([ExactString("D")])
        #expect(try store.deduplicate(Self.sighting("D", "later", 1)).duplicateOf?.source == "mine")
    }

    @Test("A live owner's claim (another machine, lease running) makes a sighting a pending duplicate")
    func liveOwnersClaimIsDuplicate() throws {
        let path = try Self.temporaryPath()
        let store = try SQLiteDeduplicationStore(path: path)
        try Self.claimedByAnother(path, key: "L", host: "elsewhere", pid: 1,
                                  leaseUntil: Date().millisecondsSince1970 + 3_600_000)
        let answer = try store.claim([Self.sighting("L", "mine", 9)], at: Self.monday)
        #expect(answer == [.duplicate(of: DuplicateReference(
            source: "other-run", line: 5, firstSeen: Self.monday, isPending: true))])
        try store.confirm([ExactString("L")])  // not ours: left alone
        #expect(try store.claim([Self.sighting("L", "mine", 10)], at: Self.monday).first?.duplicateOf?.isPending
                == true)
    }

    @Test("Regression: an owner stalled longer than its lease keeps its claims (the store's heartbeat renews them)")
    func heartbeatKeepsClaims() throws {
        let path = try Self.temporaryPath()
        let stalled = try SQLiteDeduplicationStore(path: path, leaseSeconds: 0.3)
        let other = try SQLiteDeduplicationStore(path: path, leaseSeconds: 0.3)
        #expect(try stalled.claim([Self.sighting("H", "stalled", 1)], at: Self.monday) == [.firstSeen])
        Thread.sleep(forTimeInterval: 1.2)  // four leases without a call from its caller
        #expect(try other.claim([Self.sighting("H", "other", 1)], at: Self.monday).first?.duplicateOf?.isPending
                == true)
    }

    @Test("Closing a store releases the claims it still holds", arguments: sharedKinds)
    func closingReleases(_ kind: Kind) throws {
        let location = try Self.location(kind)
        do {
            let store = try Self.store(kind, at: location)
            #expect(try store.claim([Self.sighting("Q", "closed", 1)], at: Self.monday) == [.firstSeen])
        }
        let next = try Self.store(kind, at: location)
        #expect(try next.claim([Self.sighting("Q", "next", 1)], at: Self.monday) == [.firstSeen])
        #expect(try next.deduplicate(Self.sighting("Q", "later", 2), at: Self.monday).duplicateOf?.source == "next")
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
        #expect(try store.deduplicate(Self.sighting("N")) == .firstSeen)
    }
}
