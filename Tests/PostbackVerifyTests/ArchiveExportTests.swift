#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization
import Testing
@_spi(CommandLine) @_spi(Servers) @_spi(Stores) @testable import Attribution
@_spi(CommandLine) @_spi(Servers) @testable import AttributionStores
@testable import postback_verify

/// The received-postback archive and `postback-verify export` through the built binary, over a SQLite archive and
/// a PostgreSQL state (``TestPostgres``): every row once, in increasing cursor order, resumable with `--after`, also
/// while two writers commit out of id order.
@Suite("Received-postback archive and export", .serialized)
final class ArchiveExportTests {
    let scratch: CommandLineScratch

    init() throws {
        scratch = try CommandLineScratch()
    }

    deinit {
        scratch.remove()
    }

    /// Where a test's archive lives and how it is written: a SQLite file beside a state path, or a PostgreSQL
    /// database written by the store's one-transaction claim.
    enum Kind: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case sqlite
        case postgreSQL

        var testDescription: String { rawValue }
    }

    /// One archive to write to, and the `--state` that export is given for it.
    struct Archive {
        let state: String
        let append: @Sendable ([ArchivedPostback]) throws -> Void
    }

    func archive(_ kind: Kind) throws -> Archive {
        switch kind {
        case .sqlite:
            let state = scratch.url("state-\(UUID().uuidString).sqlite").path
            let file = try SQLiteReceivedArchive(path: SQLiteReceivedArchive.defaultPath(besideState: state))
            return Archive(state: state, append: { try file.append($0) })
        case .postgreSQL:
            let database = try TestPostgres.database()
            let store = try PostgreSQLDeduplicationStore(connectionString: database)
            return Archive(state: database, append: { rows in
                _ = try store.claim([], at: Date(), archiving: { _ in rows })
            })
        }
    }

    static func row(_ number: Int, record: String? = nil) -> ArchivedPostback {
        ArchivedPostback(
            received: 1_795_305_600_250 + Int64(number), request: "request-\(number)", route: "appattribution",
            verdict: number % 3 == 0 ? "invalid" : "valid", code: number % 3 == 0 ? "bad-signature" : nil,
            key: Array("KEY-\(number)".utf8), body: Array("{\"body\":\(number)}".utf8),
            record: Array((record ?? "{\"source\":\"request-\(number)\",\"n\":\(number)}").utf8))
    }

    /// Runs export and returns its lines as JSON objects, checking that it succeeded.
    func export(_ state: String, after cursor: String? = nil,
                sourceLocation: SourceLocation = #_sourceLocation) throws -> [[String: Any]] {
        let run = try CommandLineTests.run(["export", "--state", state] + (cursor.map { ["--after", $0] } ?? []))
        #expect(run.status == 0, "\(run.stderr)", sourceLocation: sourceLocation)
        #expect(run.stdout.isEmpty || run.stdout.hasSuffix("\n"), sourceLocation: sourceLocation)
        return run.records
    }

    /// What `read` returns once it holds `count` items, or after 30 seconds, whatever it holds then.
    ///
    /// A PostgreSQL archive shows a committed row only once every transaction older than its writer's has
    /// ended, anywhere on the server (``PostgresArchiveReader``). Tests in other suites run transactions on the
    /// same server at the same time, so a read just after a commit may be short for a moment; waiting for the
    /// rows (never for more than they are) keeps the assertions on what is read, not on when.
    static func settled<T: Collection>(_ count: Int, _ read: () throws -> T) throws -> T {
        let deadline = Date().addingTimeInterval(30)
        var result = try read()
        while result.count < count, Date() < deadline {
            Thread.sleep(forTimeInterval: 0.05)
            result = try read()
        }
        return result
    }

    static func cursor(_ line: [String: Any]) -> ArchiveCursor {
        ArchiveCursor(line["cursor"] as? String ?? "") ?? ArchiveCursor(transaction: nil, row: -1)
    }

    /// The rows' numbers (from their request ids), in the order printed.
    static func numbers(_ lines: [[String: Any]]) -> [Int] {
        lines.map { Int(($0["request"] as? String ?? "").dropFirst("request-".count)) ?? -1 }
    }

    // MARK: Cursors

    @Test("A cursor is a row id, or a transaction id and a row id: ASCII digits, no sign, no leading zero",
          arguments: ["", "-1", "+1", "01", "1.", ".1", "1.2.3", "1..2", " 1", "1 ", "\u{FF11}", "1e3", "0x1",
                      "99999999999999999999", "9223372036854775808", "1.9223372036854775808", "١"])
    func cursorRefused(_ text: String) {
        #expect(ArchiveCursor(text) == nil)
    }

    @Test("Cursors read back as written and order by transaction, then row")
    func cursorOrder() throws {
        let texts = ["0", "7", "812", "9223372036854775807", "0.1", "5071.812", "18446744073709551615.3"]
        for text in texts { #expect(try #require(ArchiveCursor(text)).description == text) }
        #expect(try #require(ArchiveCursor("5071.999")) < #require(ArchiveCursor("5072.1")))
        #expect(try #require(ArchiveCursor("5071.1")) < #require(ArchiveCursor("5071.2")))
        #expect(try !(#require(ArchiveCursor("5072.1")) < #require(ArchiveCursor("5071.999"))))
    }

    // MARK: Export through the binary

    @Test("Export prints every row once in increasing cursor order; --after resumes with exactly the rest",
          arguments: Kind.allCases)
    func exportResumes(_ kind: Kind) throws {
        try #require(kind == .sqlite || TestPostgres.enabled)
        let archive = try archive(kind)
        // More rows than one read (1,000) takes, in groups of several sizes.
        var written = 0
        for size in [1, 7, 600, 900, 3] {
            try archive.append((written..<written + size).map { Self.row($0) })
            written += size
        }
        let all = try Self.settled(written) { try export(archive.state) }
        #expect(Self.numbers(all) == Array(0..<written))
        let cursors = all.map(Self.cursor)
        #expect(zip(cursors, cursors.dropFirst()).allSatisfy { $0 < $1 }, "cursors increase")
        for line in all.prefix(4) {
            let number = Self.numbers([line])[0]
            let row = Self.row(number)
            #expect(line["body"] as? String == Data(row.body).base64EncodedString())
            #expect(line["key"] as? String == "KEY-\(number)")
            #expect(line["verdict"] as? String == row.verdict)
            #expect((line["code"] as? String) == row.code)
            #expect(line["received"] as? String == "2026-11-22T00:00:00.\(250 + number)Z")
            #expect((line["record"] as? [String: Any])?["n"] as? Int == number)
        }
        // Resuming after any line gives exactly the lines after it.
        for position in [0, 5, 999, 1000, written - 2, written - 1] {
            let rest = try Self.settled(written - position - 1) {
                try export(archive.state, after: all[position]["cursor"] as? String)
            }
            #expect(Self.numbers(rest) == Array(position + 1..<written), "after line \(position)")
        }
        // Rows written later come after the last cursor, once.
        try archive.append((written..<written + 5).map { Self.row($0) })
        let later = try Self.settled(5) { try export(archive.state, after: all.last?["cursor"] as? String) }
        #expect(Self.numbers(later) == Array(written..<written + 5))
    }

    @Test("Two writers committing at once, a consumer exporting with --after all along: each row once, none lost",
          arguments: Kind.allCases)
    func concurrentWriters(_ kind: Kind) throws {
        try #require(kind == .sqlite || TestPostgres.enabled)
        let first = try archive(kind)
        let second = kind == .sqlite
            ? Archive(state: first.state, append: { [file = try SQLiteReceivedArchive(
                path: SQLiteReceivedArchive.defaultPath(besideState: first.state))] in try file.append($0) })
            : try { () throws -> Archive in
                let store = try PostgreSQLDeduplicationStore(connectionString: first.state)
                return Archive(state: first.state, append: { rows in
                    _ = try store.claim([], at: Date(), archiving: { _ in rows })
                })
            }()
        let groups = 60
        let finished = FinishedWriters()
        let writers = [first, second].enumerated().map { writer, archive in
            Thread.detachNewThreadWithResult {
                defer { finished.increment() }
                for group in 0..<groups {
                    let base = (writer * groups + group) * 10
                    try archive.append((base..<base + 1 + group % 10).map { Self.row($0) })
                }
            }
        }
        var seen: [[String: Any]] = []
        var cursor: String?
        var writing = true
        while writing {
            writing = finished.count < writers.count
            let lines = try export(first.state, after: cursor)
            seen += lines
            cursor = lines.last?["cursor"] as? String ?? cursor
        }
        for writer in writers { try writer.get() }
        let total = (0..<groups).reduce(0) { $0 + 1 + $1 % 10 } * 2
        seen += try Self.settled(total - seen.count) { try export(first.state, after: cursor) }
        let expected = (0..<2).flatMap { writer in
            (0..<groups).flatMap { group in
                let base = (writer * groups + group) * 10
                return Array(base..<base + 1 + group % 10)
            }
        }
        #expect(Self.numbers(seen).sorted() == expected.sorted(), "every row once")
        let cursors = seen.map(Self.cursor)
        #expect(zip(cursors, cursors.dropFirst()).allSatisfy { $0 < $1 }, "cursors increase")
    }

    @Test("PostgreSQL: a row committed after a later-numbered one is not skipped by a consumer's cursor")
    func outOfIDOrder() throws {
        try #require(TestPostgres.enabled)
        let archive = try archive(.postgreSQL)
        try archive.append([Self.row(0)])
        // Transaction A takes its id and row ids first and stays open; B writes larger row ids and commits.
        let slow = try PostgresConnection(try PostgresConnectionString(archive.state)) { _ in }
        try slow.execute("BEGIN")
        try slow.execute("""
            INSERT INTO postback_verify.received_postbacks (received, request, route, verdict, body, record, kept)
            VALUES (1, 'request-1', 'appattribution', 'valid', '\\x7b7d', '{"n":1}', 'body')
            """)
        try archive.append([Self.row(2), Self.row(3)])
        let ids = try TestPostgres.execute(
            "SELECT id FROM postback_verify.received_postbacks ORDER BY id", on: archive.state)
        #expect(ids.rowCount == 3, "A's row is not visible yet")
        // While A is open: only what was committed before A began.
        let before = try Self.settled(1) { try export(archive.state) }
        #expect(Self.numbers(before) == [0])
        try slow.execute("COMMIT")
        let after = try Self.settled(3) { try export(archive.state, after: before.last?["cursor"] as? String) }
        #expect(Self.numbers(after) == [1, 2, 3], "A's row, though its id is smaller, then B's")
        let cursors = (before + after).map(Self.cursor)
        #expect(zip(cursors, cursors.dropFirst()).allSatisfy { $0 < $1 })
        // Ordered by id, A's row (id 2) would have come before B's rows (ids 3 and 4), behind a cursor at B's last.
        #expect(cursors[1].row < cursors[2].row)
    }

    @Test("Export escapes what a terminal must not get raw, and reads the stored record back strictly")
    func exportEscapes() throws {
        let archive = try archive(.sqlite)
        try archive.append([Self.row(1, record: "{\"source\":\"a\u{202E}b\\u001b[31m\",\"n\":1}")])
        let run = try CommandLineTests.run(["export", "--state", archive.state])
        #expect(run.status == 0)
        #expect(run.stdout.contains(#""source":"a\u202eb\u001b[31m""#), "\(run.stdout)")
        #expect(!run.stdout.unicodeScalars.contains { $0 == "\u{202E}" || $0 == "\u{1B}" })
        // A record that is not one JSON object: the archive is damaged (status 2), nothing after it printed.
        try archive.append([Self.row(2, record: "{\"n\":2}{\"n\":3}"), Self.row(3)])
        let damaged = try CommandLineTests.run(["export", "--state", archive.state, "--after", "1"])
        #expect(damaged.status == 2)
        #expect(damaged.stderr.contains("damaged"), "\(damaged.stderr)")
        #expect(damaged.stdout.isEmpty)
    }

    /// Regression test: export read records with the verifier's depth limit (16), and called the archive damaged
    /// at the first record whose unsigned member (itself up to 16 deep) sat under the record's own levels.
    @Test("Export reads a record that nests an unsigned member 16 levels deep")
    func deepRecord() throws {
        let archive = try archive(.sqlite)
        let deep = String(repeating: "[", count: 15) + "1" + String(repeating: "]", count: 15)
        try archive.append([Self.row(1, record: "{\"unsigned\":{\"members\":{\"x\":\(deep)}},\"n\":1}")])
        let lines = try export(archive.state)
        #expect(Self.numbers(lines) == [1])
    }

    @Test("Export refuses what is not an archive, untouched, and a cursor of the other kind", arguments: [
        ["--state", "STATE"],  // a state file given as --archive below
        ["--state", "MISSING"],
        ["--state", "STATE", "--after", "5.1"],
        ["--state", "STATE", "--after", "x"],
        ["--state", "STATE", "extra-path"],
        ["--after", "1"],
    ])
    func exportRefuses(_ arguments: [String]) throws {
        let state = scratch.url("state.sqlite").path
        _ = try scratch.run(["--state", state], stdin: "")  // a state file of postback-verify's
        let before = try Data(contentsOf: URL(fileURLWithPath: state))
        let substituted = arguments.map {
            $0 == "STATE" ? state : $0 == "MISSING" ? scratch.url("none.sqlite").path : $0
        }
        let run = try CommandLineTests.run(["export"] + substituted
                                           + (arguments == ["--state", "STATE"] ? ["--archive", state] : []))
        #expect(run.status == 2)
        #expect(run.stdout.isEmpty)
        #expect(run.stderr.hasPrefix("postback-verify export: error: "), "\(run.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: state)) == before)
    }

    // MARK: Rows and claims in one transaction

    @Test("PostgreSQL: a group's claims and rows commit together, confirmed; a failed insert leaves no claim")
    func claimsAndRowsTogether() throws {
        try #require(TestPostgres.enabled)
        let database = try TestPostgres.database()
        let store = try PostgreSQLDeduplicationStore(connectionString: database)
        let observer = try PostgreSQLDeduplicationStore(connectionString: database)
        let sightings = [TestSighting.sighting("K1"), TestSighting.sighting("K2")]
        var answered: [DeduplicationAnswer] = []
        let answers = try store.claim(sightings, at: TestSighting.monday) { answers in
            answered = answers
            return [Self.row(1), Self.row(2)]
        }
        #expect(answers == [.firstSeen, .firstSeen])
        #expect(answered == answers, "the rows are made from the claim's answers")
        let claims = try TestPostgres.execute("SELECT count(*) FROM postback_verify.claims", on: database)
        #expect(claims.int64(0, 0) == 0, "confirmed in the same transaction")
        let rows = try TestPostgres.execute("SELECT count(*) FROM postback_verify.received_postbacks", on: database)
        #expect(rows.int64(0, 0) == 2)
        // Another owner sees them as confirmed duplicates, not pending.
        let seen = try observer.claim([TestSighting.sighting("K1", "observer")],
                                      at: TestSighting.monday)
        #expect(seen.map { $0.duplicateOf?.isPending } == [false])

        // The insert fails (as a full disk or a lost privilege would): no claim, no row, no postback remembered.
        try TestPostgres.execute("""
            CREATE FUNCTION public.pbv_refuse() RETURNS trigger LANGUAGE plpgsql AS
            'BEGIN RAISE EXCEPTION ''disk full''; END'
            """, on: database)
        try TestPostgres.execute("""
            CREATE TRIGGER refuse BEFORE INSERT ON postback_verify.received_postbacks
            FOR EACH ROW EXECUTE FUNCTION public.pbv_refuse()
            """, on: database)
        #expect(throws: AttributionError.self) {
            _ = try store.claim([TestSighting.sighting("K3")], at: TestSighting.monday) { _ in
                [Self.row(3)]
            }
        }
        let left = try TestPostgres.execute("""
            SELECT (SELECT count(*) FROM postback_verify.postbacks WHERE key = '\\x4b33'::bytea),
                   (SELECT count(*) FROM postback_verify.claims),
                   (SELECT count(*) FROM postback_verify.received_postbacks)
            """, on: database)
        #expect([left.int64(0, 0), left.int64(0, 1), left.int64(0, 2)] == [0, 0, 2])
        try TestPostgres.execute("DROP TRIGGER refuse ON postback_verify.received_postbacks", on: database)
        // So the retry is first seen, by this store or another.
        #expect(try observer.claim([TestSighting.sighting("K3", "observer")],
                                   at: TestSighting.monday) == [.firstSeen])
    }

    @Test("PostgreSQL: a version-1 schema gains the archive when opened, its postbacks kept")
    func migratesVersion1() throws {
        try #require(TestPostgres.enabled)
        let database = try TestPostgres.database()
        let version1 = PostgresSchema.create.filter { !PostgresSchema.createArchive.contains($0) }
            .map { $0.replacingOccurrences(of: "VALUES (2)", with: "VALUES (1)") }
        for statement in version1 { try TestPostgres.execute(statement, on: database) }
        try TestPostgres.execute("""
            INSERT INTO postback_verify.postbacks (key, first_seen, source, line) VALUES ('\\x4b31', 1, 'a', 1)
            """, on: database)
        let refusal = try CommandLineTests.run(["export", "--state", database])
        #expect(refusal.status == 2)
        #expect(refusal.stderr.contains("schema version 1"), "\(refusal.stderr)")
        let store = try PostgreSQLDeduplicationStore(connectionString: database)
        #expect(try store.count() == 1)
        let version = try TestPostgres.execute("SELECT version FROM postback_verify.schema_version", on: database)
        #expect(version.int64(0, 0) == 2)
        #expect(try export(database).isEmpty)
    }
}

/// How many writer threads have ended.
final class FinishedWriters: @unchecked Sendable {
    private let lock = NSLock()
    private var finished = 0

    func increment() {
        lock.lock()
        finished += 1
        lock.unlock()
    }

    var count: Int {
        lock.lock()
        defer { lock.unlock() }
        return finished
    }
}

/// The two shell scripts docs/state.md gives for the archive (loading a warehouse, moving a SQLite archive into
/// PostgreSQL), run as written with `psql` against real databases.
@Suite("docs/state.md's archive scripts", .serialized, .enabled(if: TestPostgres.enabled))
final class ArchiveScriptTests {
    let scratch: CommandLineScratch

    init() throws {
        scratch = try CommandLineScratch()
    }

    deinit {
        scratch.remove()
    }

    /// The ```sh block after the marker `<!-- tested by ArchiveExportTests: NAME -->` in docs/state.md.
    static func script(_ name: String) throws -> String {
        let text = try String(contentsOf: TestPaths.packageRoot.appendingPathComponent("docs/state.md"), encoding: .utf8)
        let marker = "<!-- tested by ArchiveExportTests: \(name) -->\n```sh\n"
        let start = try #require(text.range(of: marker)).upperBound
        let end = try #require(text.range(of: "\n```\n", range: start..<text.endIndex)).lowerBound
        return String(text[start..<end]) + "\n"
    }

    /// `psql`'s directory: on PATH, or Debian's server directory.
    static func psqlDirectory() throws -> String {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        let candidates = path.split(separator: ":").map(String.init)
            + ((try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? [])
                .map { "/usr/lib/postgresql/\($0)/bin" }
        return try #require(candidates.first { FileManager.default.isExecutableFile(atPath: "\($0)/psql") },
                            "psql is needed (apt-get install postgresql-client)")
    }

    /// Runs `script` with bash in the scratch directory, the built binary and psql on PATH.
    func run(_ script: String, environment: [String: String] = [:]) throws -> (status: Int32, error: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = ["-c", script]
        process.currentDirectoryURL = scratch.directory
        var variables = ProcessInfo.processInfo.environment
        variables["PATH"] = try CommandLineTests.binary().deletingLastPathComponent().path + ":"
            + Self.psqlDirectory() + ":" + (variables["PATH"] ?? "/usr/bin:/bin")
        for (name, value) in environment { variables[name] = value }
        process.environment = variables
        let error = Pipe()
        process.standardError = error
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let message = error.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: message, as: UTF8.self))
    }

    /// A SQLite state path whose archive beside it holds `rows`.
    func sqliteArchive(_ rows: [ArchivedPostback]) throws -> (state: String, archive: SQLiteReceivedArchive) {
        let state = scratch.url("state.sqlite").path
        let archive = try SQLiteReceivedArchive(path: SQLiteReceivedArchive.defaultPath(besideState: state))
        try archive.append(rows)
        return (state, archive)
    }

    @Test("The loader loads each file the manifest names once: not again, then new files, never a damaged one")
    func loader() throws {
        let script = try Self.script("the loader")
        let (state, archive) = try sqliteArchive((0..<30).map {
            ArchiveExportTests.row($0, record: $0 == 7 ? "{\"source\":\"a\\u0000\",\"n\":7}" : nil)
        })
        let directory = scratch.url("export").path
        func exportFiles() throws {
            let run = try CommandLineTests.run(["export", "--state", state, "--to", directory])
            #expect(run.status == 0, "\(run.stderr)")
        }
        try exportFiles()
        try archive.append((30..<32).map { ArchiveExportTests.row($0) })
        try exportFiles()
        let warehouse = try TestPostgres.database()
        let environment = ["EXPORT": directory, "WAREHOUSE": warehouse]
        func loaded() throws -> [String] {
            let result = try TestPostgres.execute(
                "SELECT replace(line::text, '\\u0000', '\\ufffd')::json ->> 'request' FROM received_postbacks "
                + "ORDER BY position", on: warehouse)
            return (0..<result.rowCount).map { result.text($0, 0) }
        }
        let first = try run(script, environment: environment)
        #expect(first.status == 0, "\(first.error)")
        #expect(try loaded() == (0..<32).map { "request-\($0)" }, "both files, each row once")
        let again = try run(script, environment: environment)
        #expect(again.status == 0, "\(again.error)")
        #expect(try loaded().count == 32, "nothing new: nothing loaded")
        // A file whose bytes differ from the manifest's SHA-256: nothing of this run is loaded.
        try archive.append((32..<35).map { ArchiveExportTests.row($0) })
        try exportFiles()
        let third = URL(fileURLWithPath: directory).appendingPathComponent("postbacks-00000003.jsonl.gz")
        let good = try Data(contentsOf: third)
        var bad = good
        bad[bad.count / 2] ^= 0x01
        try bad.write(to: third)
        let refused = try run(script, environment: environment)
        #expect(refused.status != 0)
        #expect(refused.error.contains("did NOT match"), "sha256sum's word: \(refused.error)")
        #expect(try loaded().count == 32)
        try good.write(to: third)
        #expect(try run(script, environment: environment).status == 0)
        #expect(try loaded() == (0..<35).map { "request-\($0)" })
    }

    @Test("The move copies a SQLite archive into PostgreSQL: every row, byte for byte, after the rows already there")
    func move() throws {
        let rows = (0..<25).map { ArchiveExportTests.row($0) } + [
            ArchiveExportTests.row(25, record: "{\"source\":\"a\u{202E}b\\u0000\",\"n\":25}"),
            ArchivedPostback(received: 1, request: "no-key", route: "skadnetwork", verdict: "invalid",
                             code: "malformed-input", key: nil, body: [0, 0xFF, 0x80, 10], record: Array("{}".utf8),
                             kept: .differences),
        ]
        _ = try sqliteArchive(rows)
        let database = try TestPostgres.database()
        let earlier = try PostgreSQLDeduplicationStore(connectionString: database)
        _ = try earlier.claim([], at: Date(), archiving: { _ in [ArchiveExportTests.row(100)] })
        // Regression (CI, 2026-11-27): another test's transaction, open on the same server in another database
        // while the move ran, hid the moved rows from a read made at once. Here one is held open on purpose: the
        // moved rows wait for it, and the read that waits for them (`settled`) gets every one once it ends.
        let other = try PostgresConnection(try PostgresConnectionString(try TestPostgres.database())) { _ in }
        try other.execute("BEGIN")
        try other.execute("SELECT pg_catalog.pg_current_xact_id()")
        var script = try Self.script("the move")
        let firstLine = try #require(script.firstIndex(of: "\n"))
        #expect(script[..<firstLine].hasPrefix("export STATE="))
        script = "export STATE='\(database)'" + script[firstLine...]
        let moved = try run(script)
        #expect(moved.status == 0, "\(moved.error)")
        let reader = try PostgresArchiveReader(connectionString: database)
        #expect(try reader.rows(after: nil, limit: 100).map(\.postback) == [ArchiveExportTests.row(100)],
                "rows written after a transaction still open began are held back")
        nonisolated(unsafe) let held = other  // used by the thread below alone from here on
        let ending = Thread.detachNewThreadWithResult {
            Thread.sleep(forTimeInterval: 0.3)
            try held.execute("COMMIT")
        }
        let read = try ArchiveExportTests.settled(rows.count + 1) { try reader.rows(after: nil, limit: 100) }
        try ending.get()
        #expect(read.map(\.postback) == [ArchiveExportTests.row(100)] + rows.map { row in
            // The record as export wrote it: the same JSON, with what a terminal must not get raw escaped.
            var row = row
            row.record = Array(String(decoding: row.record, as: UTF8.self)
                .replacingOccurrences(of: "\u{202E}", with: "\\u202e").utf8)
            return row
        })
    }
}

/// `postback-verify export --help` names exactly the options export parses.
@Suite struct ExportHelpTests {
    @Test("Every option export --help names is one export parses, and each one it parses is named")
    func optionsAgree() throws {
        let options = try DocumentationConsistencyTests.section(HelpText.exportUsage, from: "OPTIONS:",
                                                                 to: "OUTPUT:")
        let named = DocumentationConsistencyTests.optionTokens(options)
        #expect(named == ["--state", "--archive", "--after", "--since", "--until", "--report", "--schema", "--to",
                          "--follow", "--roll-bytes", "--roll-seconds", "--poll-seconds", "-h", "--help"])
        for option in named {
            let value = ["--state": ["s.sqlite"], "--archive": ["a.sqlite"], "--after": ["1"],
                         "--since": ["2026-11-26"], "--until": ["2026-11-27T00:00:00Z"], "--report": ["r.json"],
                         "--schema": ["s.json"], "--to": ["d"], "--roll-bytes": ["128M"], "--roll-seconds": ["60"],
                         "--poll-seconds": ["0.5"]][option] ?? []
            #expect(throws: Never.self) { _ = try ExportCommand.parse([option] + value) }
        }
        #expect(throws: UsageError.self) { _ = try ExportCommand.parse(["--format", "jsonl"]) }
    }
}
