#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
@_spi(CommandLine) @_spi(Servers) @_spi(Stores) @testable import Attribution
@_spi(CommandLine) @_spi(Servers) @testable import AttributionStores

/// `--state postgresql://...` through the built binary against a real PostgreSQL server (``TestPostgres``):
/// several runs on one database, runs killed with SIGKILL, the server restarted mid-run, a stalled reader, and the
/// password's ways in. Postbacks are signed here with the test-only fixture key.
@Suite("postback-verify --state on PostgreSQL", .serialized, .enabled(if: TestPostgres.enabled))
final class PostgresCommandLineTests {
    let signer: TestPostbackSigner
    let scratch: CommandLineScratch

    init() throws {
        signer = try TestPostbackSigner()
        scratch = try CommandLineScratch()
    }

    deinit {
        scratch.remove()
    }

    /// The whole lines of `data` as JSON records (a torn last line is a record nobody received).
    static func records(_ data: Data) -> [[String: Any]] {
        var data = data
        if let lastNewline = data.lastIndex(of: UInt8(ascii: "\n")) {
            data = data[...lastNewline]
        } else {
            data = Data()
        }
        return StateCommandLineTests.records(data)
    }

    /// Checks the promise over every record delivered, by every run: each postback has at least one valid record
    /// (nothing lost), at most `maximumValid` of them, and every duplicate names a delivered valid record of the
    /// same postback (never a record nobody received).
    ///
    /// `killed` names the runs that were killed, each with its input's order and how many records it delivered: a
    /// sighting made while such a run was live and had claimed a postback is a duplicate of that run's record, which
    /// it may then never have written (`docs/state.md`, "Never a duplicate of a record its owner gave up on"). Such
    /// a duplicate must come from one of the first `alongsideKilled` runs of `delivered` (those that ran while the
    /// killed ones were live) and name a line past what that run delivered, holding the same postback.
    static func checkNothingLost(
        _ delivered: [(file: String, records: [[String: Any]], order: [Int])], postbacks: Int, maximumValid: Int,
        killed: [String: (order: [Int], delivered: Int)] = [:], alongsideKilled: Int = 0,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        var validCount = [Int](repeating: 0, count: postbacks)
        var validAt: [String: Int] = [:]
        for (file, records, order) in delivered {
            for record in records where record["verdict"] as? String == "valid" {
                let postback = order[(record["line"] as? Int ?? 0) - 1]
                validCount[postback] += 1
                validAt["\(file):\(record["line"] as? Int ?? 0)"] = postback
            }
        }
        let lost = validCount.indices.filter { validCount[$0] == 0 }
        #expect(lost.isEmpty, "postbacks never reported valid: \(lost.prefix(10))", sourceLocation: sourceLocation)
        let over = validCount.indices.filter { validCount[$0] > maximumValid }
        #expect(over.isEmpty, "postbacks valid more than \(maximumValid) times: \(over.prefix(10))",
                sourceLocation: sourceLocation)
        for (run, (_, records, order)) in delivered.enumerated() {
            for record in records where record["verdict"] as? String != "valid" {
                let postback = order[(record["line"] as? Int ?? 0) - 1]
                #expect(StateCommandLineTests.firstCode(record) == "duplicate", sourceLocation: sourceLocation)
                let firstSource = record["duplicate-of-source"] as? String ?? ""
                let firstLine = record["duplicate-of"] as? Int ?? 0
                let first = "\(firstSource):\(firstLine)"
                if validAt[first] != postback, run < alongsideKilled, let owner = killed[firstSource],
                   firstLine > owner.delivered, firstLine <= owner.order.count, owner.order[firstLine - 1] == postback {
                    continue  // named while its owner was live; the owner was killed before writing it
                }
                #expect(validAt[first] == postback,
                        "a duplicate of \(first), which is not a delivered valid record of the same postback",
                        sourceLocation: sourceLocation)
            }
        }
    }

    // MARK: Several runs

    /// Postbacks remembered, and calls not yet confirmed.
    static func stateCounts(_ database: String) throws -> (postbacks: Int64, claims: Int64) {
        let rows = try TestPostgres.execute(
            "SELECT (SELECT count(*) FROM postback_verify.postbacks), (SELECT count(*) FROM postback_verify.claims)",
            on: database)
        return (rows.int64(0, 0), rows.int64(0, 1))
    }

    @Test("Four runs at once on one database, overlapping inputs: every postback valid exactly once")
    func concurrentRunsCountOnce() throws {
        let database = try TestPostgres.database()
        let bodies = try signer.bodies(count: 1200, seed: 31)
        let orders: [[Int]] = [
            Array(0..<800),
            Array((400..<1200).reversed()),
            Array(stride(from: 0, to: 1200, by: 2)) + Array(stride(from: 1, to: 1200, by: 2)),
            Array(stride(from: 1199, through: 0, by: -3)) + Array(0..<300),
        ]
        let files = try orders.enumerated().map { try scratch.input("run\($0).jsonl", $1.map { bodies[$0] }) }
        let outputs = orders.indices.map { scratch.url("out\($0).jsonl") }
        let processes = try orders.indices.map {
            try scratch.start(["--format", "jsonl", "--quiet", "--jobs", "1", "--state", database, files[$0]],
                              output: outputs[$0])
        }
        for process in processes { process.waitUntilExit() }
        var delivered: [(file: String, records: [[String: Any]], order: [Int])] = []
        for index in orders.indices {
            // 0 when a run happened to see none of its postbacks first elsewhere; 1 with duplicates; never 2.
            #expect(processes[index].terminationStatus <= 1, "run \(index)")
            let records = Self.records(try Data(contentsOf: outputs[index]))
            try #require(records.count == orders[index].count, "run \(index)")
            delivered.append((files[index], records, orders[index]))
        }
        Self.checkNothingLost(delivered, postbacks: bodies.count, maximumValid: 1)
        // The database remembers each once, all confirmed.
        // A run's last confirm is sent as it ends, without waiting: the server may finish it a moment later.
        var rows = try Self.stateCounts(database)
        for _ in 0..<200 where rows.claims != 0 {
            Thread.sleep(forTimeInterval: 0.05)
            rows = try Self.stateCounts(database)
        }
        #expect(rows.postbacks == 1200)
        #expect(rows.claims == 0, "no claim left unconfirmed")
    }

    /// Regression: the command line confirmed read claims at once when 1,024 were waiting, while one claim takes up
    /// to 8 batches (2,048 keys): every large claim was confirmed in two parts, and the first part cost the server
    /// an update of each of its rows (`claim` cleared one by one), a third of what the state cost a run.
    @Test("A run over a file confirms each claim whole, with the next claim: no postback's row is updated one by one")
    func fileClaimsConfirmedWhole() throws {
        let database = try TestPostgres.database()
        let bodies = try signer.bodies(count: 2600, seed: 34)
        let file = try scratch.input("whole.jsonl", bodies)
        _ = try scratch.run(["--state", database], stdin: "")  // creates the schema
        // The run's first claim waits on a table lock while the workers verify every batch, so that it claims as
        // many batches as it may at once (8: 2,048 keys), as a fast run does on a busy machine.
        let blocker = try PostgresConnection(try PostgresConnectionString(database)) { _ in }
        try blocker.execute("BEGIN")
        try blocker.execute("LOCK TABLE postback_verify.owners IN EXCLUSIVE MODE")
        let output = scratch.url("whole-out.jsonl")
        let process = try scratch.start(["--format", "jsonl", "--quiet", "--jobs", "2", "--state", database, file],
                                        output: output)
        var waiting = false
        for _ in 0..<400 where !waiting {
            Thread.sleep(forTimeInterval: 0.025)
            waiting = try TestPostgres.execute(
                "SELECT count(*) FROM pg_catalog.pg_stat_activity WHERE wait_event_type = 'Lock' "
                + "AND datname = pg_catalog.current_database()", on: database).int64(0, 0) > 0
        }
        #expect(waiting, "the run's first claim waits for the lock")
        Thread.sleep(forTimeInterval: 2)
        try blocker.execute("COMMIT")
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        let records = Self.records(try Data(contentsOf: output))
        #expect(records.count == bodies.count)
        #expect(records.allSatisfy { $0["verdict"] as? String == "valid" })
        var rows = try Self.stateCounts(database)
        for _ in 0..<200 where rows.claims != 0 {
            Thread.sleep(forTimeInterval: 0.05)
            rows = try Self.stateCounts(database)
        }
        #expect(rows.postbacks == Int64(bodies.count))
        #expect(rows.claims == 0, "every claim confirmed")
        // A call confirmed whole keeps its token on its rows (its one `claims` row deleted); a call confirmed in
        // part has those rows' `claim` cleared.
        let cleared = try TestPostgres.execute(
            "SELECT count(*) FROM postback_verify.postbacks WHERE claim IS NULL", on: database)
        #expect(cleared.int64(0, 0) == 0, "rows confirmed one by one")
    }

    @Test("Runs killed with SIGKILL at random moments, then every input again: nothing lost, no duplicate of an unseen record")
    func killedRunsLoseNothing() throws {
        let database = try TestPostgres.database()
        let bodies = try signer.bodies(count: 3000, seed: 32)
        var random = SplitMix64(seed: 33)
        let orders: [[Int]] = (0..<3).map { run in
            var order = Array(0..<3000)
            if run > 0 { order.shuffle(using: &random) }
            return order
        }
        let files = try orders.enumerated().map { try scratch.input("kill\($0).jsonl", $1.map { bodies[$0] }) }
        var delivered: [(file: String, records: [[String: Any]], order: [Int])] = []
        // Round one: three runs at once; each killed after a random pause (some may finish first).
        let outputs = orders.indices.map { scratch.url("killed\($0).jsonl") }
        let processes = try orders.indices.map {
            try scratch.start(["--format", "jsonl", "--quiet", "--jobs", "1", "--state", database, files[$0]],
                              output: outputs[$0])
        }
        for process in processes {
            Thread.sleep(forTimeInterval: Double.random(in: 0.05...0.4, using: &random))
            kill(process.processIdentifier, SIGKILL)
        }
        var killed: [String: (order: [Int], delivered: Int)] = [:]
        for (index, process) in processes.enumerated() {
            process.waitUntilExit()
            let records = Self.records(try Data(contentsOf: outputs[index]))
            if process.terminationReason == .uncaughtSignal { killed[files[index]] = (orders[index], records.count) }
            delivered.append((files[index], records, orders[index]))
        }
        #expect(!killed.isEmpty, "at least one run was killed mid-way")
        // Round two: every input again, one run after another.
        for index in orders.indices {
            let output = scratch.url("again\(index).jsonl")
            let process = try scratch.start(["--format", "jsonl", "--quiet", "--state", database, files[index]],
                                            output: output)
            process.waitUntilExit()
            #expect(process.terminationStatus <= 1)
            let records = Self.records(try Data(contentsOf: output))
            try #require(records.count == orders[index].count)
            delivered.append((files[index], records, orders[index]))
        }
        // A killed run's claims were taken over, so a postback may be valid once more per killed run (in a killed
        // run's delivered records, in another killed run that took its claim over, and in a later run), never zero
        // times.
        Self.checkNothingLost(delivered, postbacks: bodies.count, maximumValid: 1 + killed.count, killed: killed,
                              alongsideKilled: orders.count)
        let unconfirmed = try TestPostgres.execute(
            "SELECT count(*) FROM postback_verify.postbacks p JOIN postback_verify.claims c ON c.token = p.claim",
            on: database)
        #expect(unconfirmed.int64(0, 0) == 0)
    }

    @Test("""
        Regression: the server restarted mid-run: the run reconnects and goes on (a lost connection is not death), \
        and nothing is lost
        """)
    func serverRestartedMidRun() throws {
        // A server of its own: the others' tests keep theirs.
        let server = try TestPostgres.start(watching: getpid())
        defer { try? TestPostgres.control("stop", server.directory) }
        let state = server.connectionString
        let bodies = try signer.bodies(count: 1000, seed: 34)
        let file = try scratch.input("restart.jsonl", bodies)

        let process = Process()
        process.executableURL = try CommandLineTests.binary()
        process.arguments = TestPostbackSigner.keyArguments + ["--format", "jsonl", "--quiet", "--state", state, "-"]
        process.currentDirectoryURL = TestPaths.packageRoot
        let input = Pipe(), output = Pipe(), error = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = error
        try process.run()
        // The first 600 postbacks, and their records, then the server goes down (as in a crash) and comes back.
        input.fileHandleForWriting.write(Data((bodies[..<600].joined(separator: "\n") + "\n").utf8))
        var received = Data()
        while received.filter({ $0 == UInt8(ascii: "\n") }).count < 600 {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            received.append(chunk)
        }
        try TestPostgres.control("halt", server.directory)
        try TestPostgres.control("resume", server.directory)
        input.fileHandleForWriting.write(Data((bodies[600...].joined(separator: "\n") + "\n").utf8))
        try input.fileHandleForWriting.close()
        received.append(output.fileHandleForReading.readDataToEndOfFile())
        let message = String(decoding: error.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(message)")
        let first = Self.records(received)
        #expect(first.count == 1000, "\(first.count) records")

        // The server is back: the same input again.
        let again = try scratch.run(["--format", "jsonl", "--quiet", "--state", state, file])
        try #require(again.records.count == 1000, "\(again.stderr)")
        Self.checkNothingLost([("-", first, Array(0..<1000)), (file, again.records, Array(0..<1000))],
                              postbacks: 1000, maximumValid: 2)
        // The duplicates of the second run are of records the first run delivered, under its source "-".
        #expect(again.records.filter { $0["duplicate-of"] != nil }.allSatisfy {
            $0["duplicate-of-source"] as? String == "-" })
    }

    @Test("A run whose reader stalls holds up no other run on the same database; once read, each postback counts once")
    func stalledReaderHoldsUpNoOne() throws {
        let database = try TestPostgres.database()
        let bodies = try signer.bodies(count: 1200, seed: 35)
        let stalledFile = try scratch.input("stalled.jsonl", bodies)
        let otherOrders: [[Int]] = [Array((0..<1200).reversed()), Array(stride(from: 0, to: 1200, by: 2))]
        let otherFiles = try otherOrders.enumerated().map { try scratch.input("other\($0).jsonl", $1.map { bodies[$0] }) }

        // The stalled run: its records go into a pipe nobody reads until the others are done.
        let stalled = Process()
        stalled.executableURL = try CommandLineTests.binary()
        stalled.arguments = TestPostbackSigner.keyArguments + ["--format", "jsonl", "--quiet", "--jobs", "1",
                                                               "--state", database, stalledFile]
        stalled.currentDirectoryURL = TestPaths.packageRoot
        let pipe = Pipe()
        stalled.standardOutput = pipe
        stalled.standardError = FileHandle.nullDevice
        try stalled.run()
        Thread.sleep(forTimeInterval: 1)  // it claims, fills the pipe, and blocks

        let began = Date()
        let outputs = otherOrders.indices.map { scratch.url("other-out\($0).jsonl") }
        let others = try otherOrders.indices.map {
            try scratch.start(["--format", "jsonl", "--quiet", "--state", database, otherFiles[$0]], output: outputs[$0])
        }
        for process in others { process.waitUntilExit() }
        let seconds = Date().timeIntervalSince(began)
        #expect(seconds < 20, "the other runs took \(seconds) s")
        #expect(stalled.isRunning, "the stalled run is still waiting for its reader")

        let stalledOutput = pipe.fileHandleForReading.readDataToEndOfFile()
        stalled.waitUntilExit()
        var delivered: [(file: String, records: [[String: Any]], order: [Int])] = [
            (stalledFile, Self.records(stalledOutput), Array(0..<1200)),
        ]
        #expect(delivered[0].records.count == 1200)
        for index in otherOrders.indices {
            #expect(others[index].terminationStatus <= 1)
            let records = Self.records(try Data(contentsOf: outputs[index]))
            #expect(records.count == otherOrders[index].count)
            delivered.append((otherFiles[index], records, otherOrders[index]))
        }
        Self.checkNothingLost(delivered, postbacks: 1200, maximumValid: 1)
    }

    // MARK: Connection strings, passwords, refusals

    @Test("Over TCP the password comes from PGPASSWORD or a password file (PGPASSFILE), and never reaches the output")
    func passwordFromEnvironment() throws {
        let server = try TestPostgres.server.get()
        try #require(!server.tcpURL.isEmpty && !server.password.isEmpty, "the server has no TCP address")
        let name = "pbv_test_tcp_" + UUID().uuidString.prefix(8).lowercased()
        try TestPostgres.execute("CREATE DATABASE \(name)", on: server.connectionString)
        let port = try #require(URLComponents(string: server.tcpURL)?.port)
        let url = "postgresql://postgres@127.0.0.1:\(port)/\(name)"
        let body = try signer.body(postbackIdentifier: "3C0F4A8E-5B6D-4E7F-8A9B-0C1D2E3F4A5B")
        let file = try scratch.input("tcp.jsonl", [body])
        var environment = ProcessInfo.processInfo.environment
        environment.removeValue(forKey: "PGPASSWORD")
        environment["PGPASSFILE"] = "/nonexistent"

        // No password: refused, with the remedy.
        let none = scratch.url("none.jsonl")
        let noPassword = Process()
        noPassword.executableURL = try CommandLineTests.binary()
        noPassword.arguments = TestPostbackSigner.keyArguments + ["--quiet", "--state", url, file]
        noPassword.currentDirectoryURL = TestPaths.packageRoot
        noPassword.environment = environment
        let error = Pipe()
        noPassword.standardError = error
        noPassword.standardOutput = try FileHandle(forWritingTo: {
            _ = FileManager.default.createFile(atPath: none.path, contents: nil); return none }())
        try noPassword.run()
        let refused = String(decoding: error.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        noPassword.waitUntilExit()
        #expect(noPassword.terminationStatus == 2)
        #expect(refused.contains("PGPASSWORD or ~/.pgpass"), "\(refused)")

        /// One run over `file` with `environment`: its status and its first record.
        func runWith(_ environment: [String: String], output name: String) throws -> (Int32, [String: Any]) {
            let output = scratch.url(name)
            let process = try scratch.start(["--format", "jsonl", "--quiet", "--state", url, file], output: output,
                                            environment: environment)
            process.waitUntilExit()
            return (process.terminationStatus, Self.records(try Data(contentsOf: output)).first ?? [:])
        }

        // PGPASSWORD.
        var withVariable = environment
        withVariable["PGPASSWORD"] = server.password
        let (firstStatus, firstRecord) = try runWith(withVariable, output: "first.jsonl")
        #expect(firstStatus == 0)
        #expect(firstRecord["verdict"] as? String == "valid")

        // A password file, mode 0600 as libpq requires.
        let passfile = scratch.url("pgpass")
        try Data("127.0.0.1:\(port):\(name):postgres:\(server.password)\n".utf8).write(to: passfile)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: passfile.path)
        var withFile = environment
        withFile["PGPASSFILE"] = passfile.path
        let (secondStatus, secondRecord) = try runWith(withFile, output: "second.jsonl")
        #expect(secondStatus == 1, "a duplicate of the first run's record")
        #expect(StateCommandLineTests.firstCode(secondRecord) == "duplicate")

        // A wrong password inside the URL: refused, and not printed.
        let wrong = "Wr0ng-\(UUID().uuidString.prefix(6))"
        let leaked = try scratch.run(["--state", url.replacingOccurrences(of: "postgres@", with: "postgres:\(wrong)@"), file])
        #expect(leaked.status == 2)
        #expect(!leaked.stderr.contains(wrong) && !leaked.stdout.contains(wrong), "\(leaked.stderr)")
        #expect(leaked.stderr.contains("password authentication failed"), "\(leaked.stderr)")
    }

    @Test("A database whose postback_verify schema is not ours: exit 2 before any record, named, left as it was")
    func foreignSchemaRefused() throws {
        let database = try TestPostgres.database()
        try TestPostgres.execute("CREATE SCHEMA postback_verify", on: database)
        try TestPostgres.execute("CREATE TABLE postback_verify.postbacks (key text PRIMARY KEY, seen date)",
                                 on: database)
        try TestPostgres.execute("INSERT INTO postback_verify.postbacks VALUES ('theirs', '2026-01-01')",
                                 on: database)
        let before = try TestPostgres.snapshot(database)
        let body = try signer.body(postbackIdentifier: "6A1B2C3D-4E5F-4A6B-8C7D-9E0F1A2B3C4D")
        let run = try scratch.run(["--format", "jsonl", "--state", database], stdin: body + "\n")
        #expect(run.status == 2)
        #expect(run.stdout.isEmpty)
        #expect(run.stderr.hasPrefix("postback-verify: error: "), "\(run.stderr)")
        #expect(run.stderr.contains("is not postback-verify's") && run.stderr.contains("left as it is"),
                "\(run.stderr)")
        #expect(try TestPostgres.snapshot(database) == before)
    }

    @Test("A path that looks like a keyword string is a SQLite file when written with a directory")
    func pathWithEquals() throws {
        let body = try signer.body(postbackIdentifier: "7B2C3D4E-5F6A-4B7C-9D8E-0F1A2B3C4D5E")
        // Relative to the package root, where runs start.
        let path = "./host=\(scratch.directory.lastPathComponent).sqlite"
        let created = TestPaths.packageRoot.appendingPathComponent(path).path
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: created + suffix) } }
        let run = try scratch.run(["--quiet", "--state", path], stdin: body + "\n")
        #expect(run.status == 0, "\(run.stderr)")
        #expect(FileManager.default.fileExists(atPath: created))
    }
}
