#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
@_spi(CommandLine) @_spi(Servers) @_spi(Stores) @testable import Attribution
@_spi(CommandLine) @_spi(Servers) @testable import AttributionStores

/// `--state` (docs/cli.md section 6) through the built binary: deduplication that reaches across
/// runs and processes, and the state file's refusals. Postbacks are signed here with the test-only fixture key.
@Suite("postback-verify --state", .serialized)
struct StateCommandLineTests {
    let signer: TestPostbackSigner
    let scratch: CommandLineScratch

    init() throws {
        signer = try TestPostbackSigner()
        scratch = try CommandLineScratch()
    }

    var statePath: String { scratch.url("state.sqlite").path }

    static func records(_ data: Data) -> [[String: Any]] {
        String(decoding: data, as: UTF8.self).split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
    }

    static func firstCode(_ record: [String: Any]) -> String? {
        ((record["errors"] as? [[String: Any]])?.first?["code"]) as? String
    }

    // MARK: Across runs

    @Test("A postback valid in one run is a duplicate in the next, naming the first run's record and start")
    func remembersAcrossRuns() throws {
        let bodies = try signer.bodies(count: 3, seed: 1)
        let first = try scratch.input("first.jsonl", [bodies[0], bodies[1]])
        let second = try scratch.input("second.jsonl", [bodies[2], bodies[1]])
        let before = Date()
        let one = try scratch.run(["--format", "jsonl", "--quiet", "--state", statePath, first])
        let after = Date()
        #expect(one.status == 0, "\(one.stderr)")
        #expect(one.records.map { $0["verdict"] as? String } == ["valid", "valid"])
        #expect(FileManager.default.fileExists(atPath: statePath))

        let two = try scratch.run(["--format", "jsonl", "--quiet", "--state", statePath, second])
        #expect(two.status == 1)
        let records = two.records
        try #require(records.count == 2, "\(two.stdout)\n\(two.stderr)")
        #expect(records[0]["verdict"] as? String == "valid")
        #expect(records[0]["duplicate-of"] == nil)
        #expect(Self.firstCode(records[1]) == "duplicate")
        #expect(records[1]["duplicate-of"] as? Int == 2)
        #expect(records[1]["duplicate-of-source"] as? String == first)
        let runText = try #require(records[1]["duplicate-of-run"] as? String)
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let runStart = try #require(formatter.date(from: runText), "not RFC 3339: \(runText)")
        #expect(runStart >= before.addingTimeInterval(-0.001) && runStart <= after, "\(runText)")

        // The text form says so too, with where and when.
        let text = try scratch.run(["--quiet", "--color", "never", "--state", statePath, second])
        let lines = text.stdout.split(separator: "\n")
        try #require(lines.count == 2)
        #expect(lines[1].contains("DUPLICATE") && lines[1].contains("duplicate (D1)"))
        #expect(lines[1].contains("\(first):2") && lines[1].contains(runText))
    }

    @Test("--retention 0 forgets every postback an earlier run saw")
    func retentionForgets() throws {
        let body = try signer.body(postbackIdentifier: "9D1C0A52-7A3B-4E8D-B3B1-0C2D7E4F5A61")
        let file = try scratch.input("one.jsonl", [body])
        let one = try scratch.run(["--quiet", "--state", statePath, file])
        #expect(one.status == 0)
        Thread.sleep(forTimeInterval: 0.01)  // the next run must start at a later millisecond
        let kept = try scratch.run(["--quiet", "--state", statePath, "--retention", "1", file])
        #expect(kept.status == 1, "within one day: a duplicate")
        let forgotten = try scratch.run(["--format", "jsonl", "--quiet", "--state", statePath, "--retention", "0", file])
        #expect(forgotten.status == 0, "\(forgotten.stdout)")
        #expect(forgotten.records.first?["verdict"] as? String == "valid")
    }

    @Test("Without --state a duplicate names its line and source but no run: records depend on the input alone")
    func withoutStateNoRunTime() throws {
        let body = try signer.body(postbackIdentifier: "7E0C4B1A-2D3F-4A5B-9C8D-1E2F3A4B5C6D")
        let file = try scratch.input("twice.jsonl", [body, body])
        let one = try scratch.run(["--format", "jsonl", "--quiet", file])
        let two = try scratch.run(["--format", "jsonl", "--quiet", file])
        try #require(one.records.count == 2)
        #expect(one.records[1]["duplicate-of"] as? Int == 1)
        #expect(one.records[1]["duplicate-of-source"] as? String == file)
        #expect(one.records[1]["duplicate-of-run"] == nil)
        #expect(one.stdout == two.stdout)
    }

    // MARK: Code points, not canonical equivalence

    @Test("Regression: postback-identifiers A+U+030A and U+00C5 are two postbacks, in memory and in the state",
          arguments: [false, true])
    func canonicallyEquivalentIdentifiersAreDistinct(withState: Bool) throws {
        let decomposed = try signer.body(postbackIdentifier: "A\u{030A}")
        let precomposed = try signer.body(postbackIdentifier: "\u{00C5}")
        let file = try scratch.input("equivalent.jsonl", [decomposed, precomposed])
        let state = withState ? ["--state", statePath] : []
        let run = try scratch.run(["--format", "jsonl", "--quiet"] + state + [file])
        #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
        #expect(run.records.map { $0["verdict"] as? String } == ["valid", "valid"])
        #expect(run.records.allSatisfy { $0["duplicate-of"] == nil })
        if withState {
            // Each is remembered under its own bytes: a second run finds each a duplicate of itself.
            let again = try scratch.run(["--format", "jsonl", "--quiet", "--state", statePath, file])
            #expect(again.records.map { $0["duplicate-of"] as? Int } == [1, 2])
        }
    }

    @Test("Regression: SKAdNetwork transaction-ids A+U+030A and U+00C5 are two postbacks, in memory and in the state",
          arguments: [false, true])
    func canonicallyEquivalentTransactionsAreDistinct(withState: Bool) throws {
        let decomposed = try signer.skAdNetworkBody(transactionID: "A\u{030A}-transaction")
        let precomposed = try signer.skAdNetworkBody(transactionID: "\u{00C5}-transaction")
        let file = try scratch.input("skadnetwork.jsonl", [decomposed, precomposed, precomposed])
        let state = withState ? ["--state", statePath] : []
        let run = try scratch.run(["--format", "jsonl", "--quiet"] + state + [file])
        #expect(run.records.map { $0["kind"] as? String } == ["skadnetwork", "skadnetwork", "skadnetwork"])
        #expect(run.records.map { $0["verdict"] as? String } == ["valid", "valid", "invalid"], "\(run.stdout)")
        #expect(run.records.map { $0["duplicate-of"] as? Int } == [nil, nil, 2])
    }

    // MARK: The guarantees

    @Test("""
        Regression: a run killed with SIGKILL while its reader stalls, then the same input again: exactly the records \
        the reader took are duplicates, nothing lost, no duplicate of an unseen record
        """)
    func killedRunLosesNothing() throws {
        let count = 2000
        let file = try scratch.input("retries.jsonl", try signer.bodies(count: count, seed: 2))
        let process = Process()
        process.executableURL = try CommandLineTests.binary()
        process.arguments = TestPostbackSigner.keyArguments + ["--format", "jsonl", "--quiet", "--state", statePath,
                                                               file]
        process.currentDirectoryURL = TestPaths.packageRoot
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        // Read past the first batch, then stop reading: the writer is then blocked on the full pipe mid-batch.
        var received = Data()
        while received.filter({ $0 == UInt8(ascii: "\n") }).count < 300 {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            received.append(chunk)
        }
        // While it waits for the reader, the run confirms what the reader took (its flush looks every 50 ms).
        Thread.sleep(forTimeInterval: 0.5)
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        #expect(process.terminationReason == .uncaughtSignal, "the run finished before it was killed")
        // Only whole lines reached the consumer; a torn last line is a record nobody received.
        if let lastNewline = received.lastIndex(of: UInt8(ascii: "\n")) {
            received = received[...lastNewline]
        }
        let firstRun = Self.records(received)
        #expect(firstRun.count >= 300)
        #expect(firstRun.allSatisfy { $0["verdict"] as? String == "valid" })
        let receivedValid = Set(firstRun.compactMap { $0["line"] as? Int })

        let again = try scratch.run(["--format", "jsonl", "--quiet", "--state", statePath, file])
        let secondRun = again.records
        try #require(secondRun.count == count, "\(again.stderr)")
        var duplicates: Set<Int> = []
        for record in secondRun {
            let line = try #require(record["line"] as? Int)
            if let first = record["duplicate-of"] as? Int {
                duplicates.insert(first)
                #expect(first == line, "each postback appears once in the input")
                #expect(record["duplicate-of-source"] as? String == file)
            } else {
                #expect(record["verdict"] as? String == "valid", "line \(line)")
            }
        }
        // The killed run's unconfirmed claims (records written into the pipe, never read) were taken over.
        #expect(duplicates == receivedValid, "duplicates are exactly the records the reader took")
    }

    @Test("Three runs at once on one new state file, overlapping inputs: every postback valid exactly once")
    func concurrentRunsCountOnce() throws {
        let bodies = try signer.bodies(count: 1200, seed: 3)
        let inputs: [[Int]] = [
            Array(0..<800),
            Array((400..<1200).reversed()),
            Array(stride(from: 0, to: 1200, by: 2)) + Array(stride(from: 1, to: 1200, by: 2)),
        ]
        var files: [String] = []
        for (number, order) in inputs.enumerated() {
            files.append(try scratch.input("run\(number).jsonl", order.map { bodies[$0] }))
        }
        let outputs = (0..<inputs.count).map { scratch.url("out\($0).jsonl") }
        let processes = try (0..<inputs.count).map { number in
            try scratch.start(["--format", "jsonl", "--quiet", "--jobs", "1", "--state", statePath, files[number]],
                              output: outputs[number])
        }
        for process in processes { process.waitUntilExit() }
        var validCount = [Int](repeating: 0, count: bodies.count)
        var validAt: [String: Int] = [:]  // "source:line" of each valid record -> postback
        var all: [(record: [String: Any], postback: Int)] = []
        for number in inputs.indices {
            #expect(processes[number].terminationStatus <= 1, "run \(number)")
            let records = Self.records(try Data(contentsOf: outputs[number]))
            try #require(records.count == inputs[number].count, "run \(number)")
            for record in records {
                let postback = inputs[number][(record["line"] as? Int ?? 0) - 1]
                all.append((record, postback))
                if record["verdict"] as? String == "valid" {
                    validCount[postback] += 1
                    validAt["\(files[number]):\(record["line"] as? Int ?? 0)"] = postback
                }
            }
        }
        #expect(validCount.allSatisfy { $0 == 1 }, "valid counts other than 1: \(validCount.filter { $0 != 1 })")
        for (record, postback) in all where record["verdict"] as? String != "valid" {
            #expect(Self.firstCode(record) == "duplicate")
            let first = "\(record["duplicate-of-source"] as? String ?? ""):\(record["duplicate-of"] as? Int ?? 0)"
            #expect(validAt[first] == postback, "a duplicate must name the valid record of the same postback")
        }
    }

    @Test("""
        Regression: three runs on one state, one piped into a consumer that stalls: the other two (and a run of \
        malformed lines) finish without waiting for it, and every postback is valid exactly once
        """)
    func stalledConsumerHoldsUpNobody() throws {
        // More than the 8 batches (2,048 postbacks) a run claims in one transaction when they are read ahead, so
        // the stalled run's first claim leaves later ones for the others.
        let count = 3200
        let bodies = try signer.bodies(count: count, seed: 4)
        let orders: [[Int]] = [Array(0..<count), Array((0..<count).reversed()), Array(count / 4..<count * 3 / 4)]
        var files: [String] = []
        for (number, order) in orders.enumerated() {
            files.append(try scratch.input("stall\(number).jsonl", order.map { bodies[$0] }))
        }
        let malformed = try scratch.input("malformed.jsonl", (0..<600).map { "{\"jws-string\":\"not a token \($0)\"}" })
        // Run 0 writes into a pipe nobody reads yet: it claims its first batch and blocks on the full pipe.
        let stalled = Process()
        stalled.executableURL = try CommandLineTests.binary()
        stalled.arguments = TestPostbackSigner.keyArguments
            + ["--format", "jsonl", "--quiet", "--state", statePath, files[0]]
        stalled.currentDirectoryURL = TestPaths.packageRoot
        let pipe = Pipe()
        stalled.standardOutput = pipe
        stalled.standardError = FileHandle.nullDevice
        try stalled.run()
        defer { if stalled.isRunning { kill(stalled.processIdentifier, SIGKILL) } }
        // Wait until it holds claims (its owner row is in the state).
        for _ in 0..<200 where (try? ownerCount()) ?? 0 == 0 { Thread.sleep(forTimeInterval: 0.05) }
        #expect(try ownerCount() == 1, "the stalled run claimed its first batch")

        let outputs = (0..<3).map { scratch.url("stall-out\($0).jsonl") }
        let others = try [1, 2].map { number in
            try scratch.start(["--format", "jsonl", "--quiet", "--state", statePath, files[number]], output: outputs[number])
        } + [try scratch.start(["--format", "jsonl", "--quiet", "--state", statePath, malformed], output: outputs[0])]
        let deadline = Date().addingTimeInterval(30)
        while others.contains(where: \.isRunning) && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        let stillRunning = others.filter(\.isRunning).count
        #expect(stillRunning == 0, "a run waited for the stalled one")
        #expect(stalled.isRunning, "the stalled run is still waiting for its reader")
        #expect(others.allSatisfy { $0.terminationStatus <= 1 }, "\(others.map(\.terminationStatus))")
        let malformedRecords = Self.records(try Data(contentsOf: outputs[0]))
        #expect(malformedRecords.count == 600)

        // Now the consumer reads: the stalled run finishes.
        let stalledOutput = pipe.fileHandleForReading.readDataToEndOfFile()
        stalled.waitUntilExit()
        #expect(stalled.terminationStatus == 1, "the others claimed its later batches first: duplicates")
        var validCount = [Int](repeating: 0, count: bodies.count)
        for (number, data) in [(0, stalledOutput), (1, try Data(contentsOf: outputs[1])),
                               (2, try Data(contentsOf: outputs[2]))] {
            let records = Self.records(data)
            try #require(records.count == orders[number].count, "run \(number)")
            for record in records where record["verdict"] as? String == "valid" {
                validCount[orders[number][(record["line"] as? Int ?? 0) - 1]] += 1
            }
        }
        #expect(validCount.allSatisfy { $0 == 1 }, "valid counts other than 1: \(validCount.filter { $0 != 1 })")
    }

    /// Owners registered in the state (runs holding or having held claims, not yet closed).
    func ownerCount() throws -> Int64 {
        let statement = try SQLiteConnection(path: statePath, readOnly: true).prepare("SELECT count(*) FROM owners")
        return try statement.step() ? statement.int64(0) : 0
    }

    @Test("""
        Regression: `--state ... | head -1` remembers only the records head took out of the pipe, not all 30; the \
        next run reports the others valid
        """)
    func headRemembersWhatItRead() throws {
        let file = try scratch.input("thirty.jsonl", try signer.bodies(count: 30, seed: 5))
        let binary = try CommandLineTests.binary().path
        let quoted = ([binary] + TestPostbackSigner.keyArguments + ["--format", "jsonl", "--quiet", "--state",
                                                                    statePath, file])
            .map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
        let shell = Process()
        shell.executableURL = URL(fileURLWithPath: "/bin/sh")
        shell.arguments = ["-c", quoted + " | head -n 1 > /dev/null"]
        shell.currentDirectoryURL = TestPaths.packageRoot
        try shell.run()
        shell.waitUntilExit()
        let again = try scratch.run(["--format", "jsonl", "--quiet", "--state", statePath, file])
        try #require(again.records.count == 30)
        let duplicates = again.records.compactMap { $0["duplicate-of"] as? Int }
        #expect(duplicates.count < 30, "head took one buffer of records, not all of them")
        #expect(duplicates == Array(Array(1...30).prefix(duplicates.count)),
                "the remembered records are the first ones, those head read")
    }

    @Test("Regression: three runs creating one new state file at once: none finds it half made and refuses it")
    func concurrentCreation() throws {
        let file = try scratch.input("few.jsonl", try signer.bodies(count: 20, seed: 6))
        for round in 0..<8 {
            let path = scratch.url("new-\(round).sqlite").path
            let outputs = (0..<3).map { scratch.url("create-\(round)-\($0).jsonl") }
            let processes = try outputs.map { output in
                try scratch.start(["--format", "jsonl", "--quiet", "--jobs", "1", "--state", path, file], output: output)
            }
            for process in processes { process.waitUntilExit() }
            #expect(processes.map(\.terminationStatus).sorted() == [0, 1, 1], "round \(round)")
        }
    }

    // MARK: Refusals

    /// A state file that is not ours, damaged, or too new, made the way it would be met.
    struct BadState: Sendable, CustomTestStringConvertible {
        let testDescription: String
        let make: @Sendable (String) throws -> Void
    }

    static let badStates: [BadState] = [
        BadState(testDescription: "random bytes") { path in
            var random = SplitMix64(seed: 12)
            try Data((0..<8192).map { _ in UInt8.random(in: 0...255, using: &random) })
                .write(to: URL(fileURLWithPath: path))
        },
        BadState(testDescription: "a text file") { path in
            try Data("{\"jws-string\":\"not a database\"}\n".utf8).write(to: URL(fileURLWithPath: path))
        },
        BadState(testDescription: "another application's SQLite database") { path in
            let other = try SQLiteConnection(path: path, readOnly: false)
            try other.execute("CREATE TABLE postbacks (key TEXT PRIMARY KEY); INSERT INTO postbacks VALUES ('x')")
        },
        BadState(testDescription: "a SQLite database with no table") { path in
            try SQLiteConnection(path: path, readOnly: false).execute("PRAGMA user_version = 7")
        },
        BadState(testDescription: "our schema at a newer version") { path in
            try makeState(path, rows: 10)
            try SQLiteConnection(path: path, readOnly: false).execute(
                "UPDATE postback_verify_schema SET version = \(StateSchema.version + 1)")
        },
        BadState(testDescription: "our schema with a version that is not a number") { path in
            try makeState(path, rows: 10)
            try SQLiteConnection(path: path, readOnly: false)
                .execute("UPDATE postback_verify_schema SET version = 'x'")
        },
        BadState(testDescription: "our version table without the postbacks table") { path in
            try makeState(path, rows: 0)
            try SQLiteConnection(path: path, readOnly: false).execute("DROP TABLE postbacks")
        },
        BadState(testDescription: "damaged: a page in the middle overwritten") { path in
            try makeState(path, rows: 5000)
            let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
            let size = try handle.seekToEnd()
            try handle.seek(toOffset: size / 2 / 4096 * 4096)
            try handle.write(contentsOf: Data(repeating: 0x5A, count: 4096))
            try handle.close()
        },
        BadState(testDescription: "damaged: truncated") { path in
            try makeState(path, rows: 5000)
            let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
            try handle.truncate(atOffset: try handle.seekToEnd() / 2 / 4096 * 4096)
            try handle.close()
        },
    ]

    /// A genuine state file with `rows` postbacks, written by the library, then checkpointed into the main file
    /// (the write-ahead log a run leaves behind folded in and removed), as a state at rest looks.
    static func makeState(_ path: String, rows: Int) throws {
        do {
            let state = try StateDatabase(path: path, retentionDays: 10)
            let sightings = (0..<rows).map {
                PostbackSighting(key: ExactString(UUID().uuidString), source: "made.jsonl", line: $0 + 1)
            }
            _ = try state.claim(sightings, at: Date())
            try state.confirm(sightings.map(\.key))
            state.close()
        }
        try SQLiteConnection(path: path, readOnly: false).execute("PRAGMA wal_checkpoint(TRUNCATE)")
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
    }

    @Test("A state file that is not ours, damaged or newer: exit 2, named on stderr, left byte for byte",
          arguments: badStates)
    func badStateRefused(_ bad: BadState) throws {
        try bad.make(statePath)
        let before = try Data(contentsOf: URL(fileURLWithPath: statePath))
        let body = try signer.body(postbackIdentifier: "5B7D7C1E-1B0F-4F44-9C1B-5B8E0A0B6C2D")
        let run = try scratch.run(["--format", "jsonl", "--state", statePath], stdin: body + "\n")
        #expect(run.status == 2)
        #expect(run.stdout.isEmpty, "no record before the state is accepted")
        #expect(run.stderr.contains(statePath), "\(run.stderr)")
        #expect(run.stderr.hasPrefix("postback-verify: error: "), "\(run.stderr)")
        let after = try Data(contentsOf: URL(fileURLWithPath: statePath))
        #expect(after == before, "the state file was changed")
    }

    /// Look-alikes of a state file, made by another program in SQLite's default (rollback journal) mode: each
    /// differs from what postback-verify creates in one table, column, index, constraint or collation.
    static let lookAlikes: [BadState] = {
        let version2 = StateSchema.createVersion2
        let version3 = StateSchema.create
        func made(_ statements: String) -> @Sendable (String) throws -> Void {
            precondition(statements != version2 && statements != version3 && statements != StateSchema.createVersion1,
                         "a look-alike must differ from the real schema")
            return { path in
                let connection = try SQLiteConnection(path: path, readOnly: false)
                try connection.execute(statements)
                try connection.execute(
                    "INSERT INTO postbacks (id, key, first_seen, source, line) VALUES (1, 'k', 1, 's', 1)")
            }
        }
        return [
            BadState(testDescription: "Regression: our version table, a postbacks table without the unique key",
                     make: made(StateSchema.createVersion1.replacingOccurrences(
                        of: " COLLATE BINARY UNIQUE", with: ""))),
            BadState(testDescription: "Regression: version 1 with a case-insensitive unique key (COLLATE NOCASE)",
                     make: made(StateSchema.createVersion1.replacingOccurrences(of: "BINARY", with: "NOCASE"))),
            BadState(testDescription: "version 2 with a case-insensitive unique key (COLLATE NOCASE)",
                     make: made(version2.replacingOccurrences(of: "BINARY", with: "NOCASE"))),
            BadState(testDescription: "version 2 with the key compared NOCASE but a bytewise unique index",
                     make: made(version2.replacingOccurrences(
                        of: "key TEXT NOT NULL COLLATE BINARY UNIQUE,", with: "key TEXT NOT NULL COLLATE NOCASE,")
                        + "CREATE UNIQUE INDEX postbacks_key ON postbacks (key COLLATE BINARY);")),
            BadState(testDescription: "version 2 plus a trigger",
                     make: made(version2 + "CREATE TRIGGER forget AFTER INSERT ON postbacks BEGIN "
                                + "DELETE FROM postbacks; END;")),
            BadState(testDescription: "version 2 plus an index",
                     make: made(version2 + "CREATE INDEX postbacks_seen ON postbacks (first_seen);")),
            BadState(testDescription: "version 2 without the owners table",
                     make: made(version2 + "DROP TABLE owners;")),
            BadState(testDescription: "version 2 with a column of another type",
                     make: made(version2.replacingOccurrences(of: "pid INTEGER NOT NULL", with: "pid TEXT NOT NULL"))),
            BadState(testDescription: "version 2 with the owners table's id not the row id",
                     make: made(version2.replacingOccurrences(of: "    id INTEGER PRIMARY KEY,\n    host",
                                                              with: "    id INTEGER NOT NULL,\n    host"))),
            BadState(testDescription: "version 1 with one more column",
                     make: made(StateSchema.createVersion1.replacingOccurrences(
                        of: "line INTEGER NOT NULL", with: "line INTEGER NOT NULL, note TEXT"))),
            BadState(testDescription: "version 2 as a WITHOUT ROWID table",
                     make: made(version2.replacingOccurrences(of: "    content BLOB\n);",
                                                              with: "    content BLOB\n) WITHOUT ROWID;"))),
            BadState(testDescription: "version 3 as a WITHOUT ROWID table",
                     make: made(version3.replacingOccurrences(of: "    content BLOB\n);",
                                                              with: "    content BLOB\n) WITHOUT ROWID;"))),
            BadState(testDescription: "version 3 with a hash that is not unique",
                     make: made(version3.replacingOccurrences(of: "hash INTEGER UNIQUE,", with: "hash INTEGER,")
                                + "CREATE INDEX postbacks_hash ON postbacks (hash);")),
            BadState(testDescription: "version 3 with a case-insensitive key (COLLATE NOCASE)",
                     make: made(version3.replacingOccurrences(of: "COLLATE BINARY", with: "COLLATE NOCASE"))),
            BadState(testDescription: "version 3 keyed by the key again (a unique key, no hash)",
                     make: made(version3.replacingOccurrences(
                        of: "key TEXT NOT NULL COLLATE BINARY,\n    hash INTEGER UNIQUE,",
                        with: "key TEXT NOT NULL COLLATE BINARY UNIQUE,\n    hash INTEGER,"))),
            BadState(testDescription: "version 3 plus an index on the key",
                     make: made(version3 + "CREATE INDEX postbacks_key ON postbacks (key);")),
            BadState(testDescription: "version 3 with the hash as TEXT",
                     make: made(version3.replacingOccurrences(of: "hash INTEGER UNIQUE,", with: "hash TEXT UNIQUE,"))),
        ]
    }()

    @Test("Regression: a look-alike state is refused with status 2 before any write: bytes kept, no journal or log",
          arguments: lookAlikes)
    func lookAlikeRefusedUntouched(_ lookAlike: BadState) throws {
        try lookAlike.make(statePath)
        let siblings = { try FileManager.default.contentsOfDirectory(atPath: self.scratch.directory.path).sorted() }
        let before = try Data(contentsOf: URL(fileURLWithPath: statePath))
        let filesBefore = try siblings()
        let body = try signer.body(postbackIdentifier: "3C1D5E7F-9A2B-4C6D-8E0F-1A3B5C7D9E2F")
        let run = try scratch.run(["--format", "jsonl", "--state", statePath], stdin: body + "\n")
        #expect(run.status == 2)
        #expect(run.stdout.isEmpty, "no record before the state is accepted")
        #expect(run.stderr.hasPrefix("postback-verify: error: ") && run.stderr.contains(statePath), "\(run.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: statePath)) == before, "the state file was changed")
        #expect(try siblings() == filesBefore, "a journal, log or shared-memory file was made beside it")
    }

    @Test("A version-1 state file from the previous release is migrated: its postbacks stay duplicates")
    func versionOneMigrated() throws {
        let body = try signer.body(postbackIdentifier: "6A2F0C1E-5B3D-4E7A-9C8B-0D1E2F3A4B5C")
        let file = try scratch.input("one.jsonl", [body])
        do {
            let old = try SQLiteConnection(path: statePath, readOnly: false)
            try old.execute(StateSchema.createVersion1 + """
                INSERT INTO postbacks (key, first_seen, source, line)
                    VALUES ('6A2F0C1E-5B3D-4E7A-9C8B-0D1E2F3A4B5C', 1795305600000, 'old.jsonl', 4);
                """)
        }
        let run = try scratch.run(["--format", "jsonl", "--quiet", "--state", statePath, file])
        #expect(run.status == 1)
        #expect(run.records.first?["duplicate-of-source"] as? String == "old.jsonl")
        #expect(run.records.first?["duplicate-of-run"] as? String == "2026-11-22T00:00:00.000Z")
        let version = try SQLiteConnection(path: statePath, readOnly: true).prepare(
            "SELECT version FROM postback_verify_schema")
        #expect(try version.step() && version.int64(0) == StateSchema.version)
        // The migrated file is a state of this version from now on: the next run takes it as it is.
        let next = try scratch.run(["--format", "jsonl", "--quiet", "--state", statePath, file])
        #expect(next.status == 1, "\(next.stderr)")
        #expect(next.records.first?["duplicate-of-source"] as? String == "old.jsonl")
    }

    /// Its postbacks stay duplicates, and their conflict digests are kept: D2 still names what differs.
    @Test("A version-2 state file (the previous release's, made by its SQL) is migrated through the binary")
    func versionTwoMigrated() throws {
        let identifier = "1D2C3B4A-5F6E-4D7C-8B9A-0F1E2D3C4B5A"
        let first = try signer.body(postbackIdentifier: identifier)
        var record = try #require(try JSONSerialization.jsonObject(with: Data(first.utf8)) as? [String: Any])
        record["conversion-value"] = 62
        let changed = String(decoding: try JSONSerialization.data(withJSONObject: record, options: [.sortedKeys]),
                             as: UTF8.self)
        // The first sighting's digest, as a run of this release computes it.
        let scratchState = scratch.url("digest.sqlite").path
        let seed = try scratch.run(["--format", "jsonl", "--quiet", "--state", scratchState,
                                    try scratch.input("first.jsonl", [first])])
        #expect(seed.status == 0)
        let digest = try SQLiteConnection(path: scratchState, readOnly: true).prepare(
            "SELECT hex(content) FROM postbacks WHERE key = '\(identifier)'")
        #expect(try digest.step())
        let content = digest.text(0)
        #expect(!content.isEmpty)
        do {
            let old = try SQLiteConnection(path: statePath, readOnly: false)
            try old.execute(StateSchema.createVersion2 + """
                INSERT INTO postbacks (key, first_seen, source, line, content)
                    VALUES ('\(identifier)', 1795305600000, 'old.jsonl', 4, x'\(content)');
                PRAGMA journal_mode = WAL;
                """)
        }
        let run = try scratch.run(["--format", "jsonl", "--quiet", "--state", statePath,
                                   try scratch.input("changed.jsonl", [changed])])
        #expect(run.status == 1, "\(run.stderr)")
        let duplicate = try #require(run.records.first)
        #expect(duplicate["duplicate-of-source"] as? String == "old.jsonl")
        #expect(duplicate["duplicate-of-run"] as? String == "2026-11-22T00:00:00.000Z")
        let differs = duplicate["duplicate-differs"] as? [String: Any]
        #expect(differs?["unsigned"] as? [String] == ["conversion-value"], "\(run.stdout)")
        let version = try SQLiteConnection(path: statePath, readOnly: true).prepare(
            "SELECT version FROM postback_verify_schema")
        #expect(try version.step() && version.int64(0) == StateSchema.version)
        let same = try scratch.run(["--format", "jsonl", "--quiet", "--state", statePath,
                                    try scratch.input("same.jsonl", [first])])
        #expect(same.status == 1)
        #expect(same.records.first?["duplicate-of-source"] as? String == "old.jsonl")
        #expect(same.records.first?["duplicate-differs"] == nil)
    }

    @Test("D2 through the binary: a later sighting with other unsigned members is a duplicate naming them")
    func conflictNamed() throws {
        let identifier = "0B1C2D3E-4F5A-4B6C-8D7E-9F0A1B2C3D4E"
        let first = try signer.body(postbackIdentifier: identifier)
        let record = try #require(try JSONSerialization.jsonObject(with: Data(first.utf8)) as? [String: Any])
        var changed = record
        changed["conversion-value"] = 63
        changed["country-code"] = "FR"
        let second = String(decoding: try JSONSerialization.data(withJSONObject: changed, options: [.sortedKeys]),
                            as: UTF8.self)
        let one = try scratch.run(["--format", "jsonl", "--quiet", "--state", statePath, try scratch.input("a.jsonl", [first])])
        #expect(one.status == 0)
        for (name, lines, expected) in [("same.jsonl", [first], nil), ("changed.jsonl", [second], ["conversion-value",
                                                                                               "country-code"])] {
            let run = try scratch.run(["--format", "jsonl", "--quiet", "--state", statePath, try scratch.input(name, lines)])
            let duplicate = try #require(run.records.first)
            #expect(Self.firstCode(duplicate) == "duplicate")
            let differs = duplicate["duplicate-differs"] as? [String: Any]
            #expect((differs?["unsigned"] as? [String]) == expected, "\(run.stdout)")
            #expect(expected == nil || differs?["signed-payload"] as? Bool == false)
            let warnings = (duplicate["warnings"] as? [[String: Any]] ?? []).map { $0["rule"] as? String }
            #expect(warnings == (expected == nil ? [] : ["D2"]))
        }
    }

    @Test("A state in a missing or read-only directory: exit 2, named on stderr")
    func unusableDirectory() throws {
        let missing = scratch.url("no/such/dir/state.sqlite").path
        var paths = [missing]
        if geteuid() == 0 {
            // Permissions do not stop root; /proc refuses new files to everyone.
            paths.append("/proc/postback-verify-\(UUID().uuidString).sqlite")
        } else {
            let readOnly = scratch.url("read-only")
            try FileManager.default.createDirectory(at: readOnly, withIntermediateDirectories: false)
            try FileManager.default.setAttributes([.posixPermissions: 0o555], ofItemAtPath: readOnly.path)
            paths.append(readOnly.appendingPathComponent("state.sqlite").path)
        }
        let body = try signer.body(postbackIdentifier: "0F1E2D3C-4B5A-4978-8695-A4B3C2D1E0F9")
        for path in paths {
            let run = try scratch.run(["--state", path], stdin: body + "\n")
            #expect(run.status == 2, "\(path)")
            #expect(run.stderr.contains(path), "\(run.stderr)")
            #expect(run.stdout.isEmpty)
            #expect(!FileManager.default.fileExists(atPath: path))
        }
    }

    @Test("Option mistakes around --state are usage errors", arguments: [
        ["--retention", "3"],
        ["--state", "x.sqlite", "--no-dedupe"],
        ["--state", "x.sqlite", "--retention", "ten"],
        ["--state", "x.sqlite", "--retention", "-1"],
        ["--state", ""],
        ["--state", "-"],
    ])
    func optionMistakes(_ arguments: [String]) throws {
        let run = try CommandLineTests.run(arguments + ["-"], stdin: "")
        #expect(run.status == 2)
        #expect(run.stderr.hasPrefix("postback-verify: error: "), "\(run.stderr)")
        for name in ["x.sqlite", "-"] {
            #expect(!FileManager.default.fileExists(atPath: TestPaths.packageRoot.appendingPathComponent(name).path))
        }
    }
}
