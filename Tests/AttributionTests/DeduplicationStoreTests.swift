import Foundation
import Testing
@testable import Attribution

/// The ``DeduplicationStore``s a server shares between requests: in memory and in a SQLite file, with the same
/// answers, "first seen" or "duplicate of (when, where)", and the same promises.
@Suite("Deduplication stores")
struct DeduplicationStoreTests {
    enum Kind: String, CaseIterable, Sendable {
        case memory
        case sqlite
    }

    static func temporaryPath() throws -> String {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("postback-verify-store-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory.appendingPathComponent("state.sqlite").path
    }

    static func store(_ kind: Kind, path: String? = nil) throws -> any DeduplicationStore {
        switch kind {
        case .memory: MemoryDeduplicationStore()
        case .sqlite: try SQLiteDeduplicationStore(path: path ?? temporaryPath())
        }
    }

    static func sighting(_ key: String, _ source: String = "request", _ line: Int = 1) -> PostbackSighting {
        PostbackSighting(key: DeduplicationKey(key), source: source, line: line)
    }

    static let monday = Date(timeIntervalSince1970: 1_795_305_600.25)

    @Test("First seen, then a duplicate naming where and when", arguments: Kind.allCases)
    func firstThenDuplicate(_ kind: Kind) throws {
        let store = try Self.store(kind)
        #expect(try store.deduplicate(Self.sighting("P1", "a", 4), at: Self.monday) == .firstSeen)
        let later = Self.monday.addingTimeInterval(3600)
        let answer = try store.deduplicate(Self.sighting("P1", "b", 9), at: later)
        #expect(answer == .duplicate(of: DuplicateReference(source: "a", line: 4, firstSeen: Self.monday)))
        #expect(answer.duplicateOf?.firstSeen?.timeIntervalSince1970 == 1_795_305_600.25)
    }

    @Test("Regression: keys A+U+030A and U+00C5 (and SKAdNetwork ones) are two postbacks", arguments: Kind.allCases)
    func equivalentKeysAreDistinct(_ kind: Kind) throws {
        let store = try Self.store(kind)
        let answers = try store.deduplicate(
            [Self.sighting("A\u{030A}", "-", 1), Self.sighting("\u{00C5}", "-", 2),
             Self.sighting("A\u{030A}\u{1F}0", "-", 3), Self.sighting("\u{00C5}\u{1F}0", "-", 4)],
            at: Self.monday) { $0 }
        #expect(answers == [.firstSeen, .firstSeen, .firstSeen, .firstSeen])
        let again = try store.deduplicate(Self.sighting("\u{00C5}", "-", 5), at: Self.monday)
        #expect(again.duplicateOf?.line == 2)
    }

    @Test("A repeat within one call is a duplicate of its first occurrence there", arguments: Kind.allCases)
    func repeatWithinCall(_ kind: Kind) throws {
        let store = try Self.store(kind)
        let answers = try store.deduplicate(
            [Self.sighting("X", "f", 1), Self.sighting("Y", "f", 2), Self.sighting("X", "f", 3)],
            at: Self.monday) { $0 }
        #expect(answers == [.firstSeen, .firstSeen,
                            .duplicate(of: DuplicateReference(source: "f", line: 1, firstSeen: Self.monday))])
    }

    struct NotStored: Error {}

    @Test("Nothing is remembered when the store step throws (insert after store)", arguments: Kind.allCases)
    func nothingRememberedWhenStoreFails(_ kind: Kind) throws {
        let store = try Self.store(kind)
        #expect(throws: NotStored.self) {
            try store.deduplicate([Self.sighting("Z")], at: Self.monday) { _ in throw NotStored() }
        }
        #expect(try store.deduplicate(Self.sighting("Z"), at: Self.monday) == .firstSeen)
    }

    @Test("Memory and SQLite give the same answers to the same sightings")
    func sameAnswers() throws {
        var random = SplitMix64(seed: 5)
        let keys = ["K", "\u{212A}", "A\u{030A}", "\u{00C5}", "e\u{301}", "\u{E9}", "plain"]
        let calls = (0..<40).map { call in
            (0..<Int.random(in: 1...6, using: &random)).map { line in
                Self.sighting(keys.randomElement(using: &random)!, "call\(call)", line + 1)
            }
        }
        let memory = MemoryDeduplicationStore()
        let sqlite = try SQLiteDeduplicationStore(path: Self.temporaryPath())
        for (number, call) in calls.enumerated() {
            let time = Self.monday.addingTimeInterval(Double(number))
            let fromMemory = try memory.deduplicate(call, at: time) { $0 }
            let fromSQLite = try sqlite.deduplicate(call, at: time) { $0 }
            #expect(fromMemory == fromSQLite, "call \(number)")
        }
        #expect(memory.count == keys.count)
    }

    @Test("Concurrent callers on one shared store: each key first seen exactly once", arguments: Kind.allCases)
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

    @Test("Two SQLite stores on one file (two connections) count each key once")
    func twoConnections() async throws {
        let path = try Self.temporaryPath()
        let stores = [try SQLiteDeduplicationStore(path: path), try SQLiteDeduplicationStore(path: path)]
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
         StateError.Code.notOurs),
    ])
    func refusal(contents: String, code: StateError.Code) throws {
        let path = try Self.temporaryPath()
        try Data(contents.utf8).write(to: URL(fileURLWithPath: path))
        #expect(throws: StateError(code, "")) { try SQLiteDeduplicationStore(path: path) }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data(contents.utf8))
    }

    @Test("SQLite: an empty file is a new state")
    func emptyFileIsNew() throws {
        let path = try Self.temporaryPath()
        _ = FileManager.default.createFile(atPath: path, contents: Data())
        let store = try SQLiteDeduplicationStore(path: path)
        #expect(try store.deduplicate(Self.sighting("N")) == .firstSeen)
    }
}
