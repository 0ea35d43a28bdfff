#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing

/// Runs the built `postback-verify` binary, as a user would, and checks records and exit status.
@Suite("postback-verify command", .serialized)
struct CommandLineTests {
    struct Run {
        let status: Int32
        let stdout: String
        let stderr: String

        /// The JSON Lines records on standard output.
        var records: [[String: Any]] {
            stdout.split(separator: "\n").compactMap {
                try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
            }
        }
    }

    static func binary() throws -> URL {
        let candidates = [
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent(),
            Bundle.main.bundleURL,
            Bundle.main.bundleURL.deletingLastPathComponent(),
            TestPaths.packageRoot.appendingPathComponent(".build/debug"),
        ].map { $0.appendingPathComponent("postback-verify") }
        return try #require(candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) },
                            "build the postback-verify binary first (swift build)")
    }

    /// The binary started on `arguments` with its standard output and standard error on pipes.
    static func start(_ arguments: [String]) throws -> (process: Process, output: Pipe, error: Pipe) {
        let process = Process()
        process.executableURL = try binary()
        process.arguments = arguments
        process.currentDirectoryURL = TestPaths.packageRoot
        let output = Pipe(), error = Pipe()
        process.standardOutput = output
        process.standardError = error
        try process.run()
        return (process, output, error)
    }

    static func run(_ arguments: [String], stdin: String = "", environment: [String: String] = [:]) throws -> Run {
        let process = Process()
        process.executableURL = try binary()
        process.arguments = arguments
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        process.currentDirectoryURL = TestPaths.packageRoot
        let input = Pipe(), output = Pipe(), error = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = error
        try process.run()
        writeIgnoringClosedPipe(Data(stdin.utf8), to: input.fileHandleForWriting)
        try input.fileHandleForWriting.close()
        let out = output.fileHandleForReading.readDataToEndOfFile()
        let err = error.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Run(status: process.terminationStatus, stdout: String(decoding: out, as: UTF8.self),
                   stderr: String(decoding: err, as: UTF8.self))
    }

    /// Writes `data` to a child's standard input, which the child may have closed already: a run that refuses its
    /// state (or its options) exits before reading it. The write then fails with EPIPE, and the SIGPIPE it raises,
    /// blocked on this thread while it writes, is taken before the thread's signal mask is restored: it never
    /// reaches the test process, which SIGPIPE would kill (as it did, now and then, under load). Blocking rather
    /// than ignoring SIGPIPE leaves the disposition the children inherit untouched.
    static func writeIgnoringClosedPipe(_ data: Data, to handle: FileHandle) {
        var pipeSignal = sigset_t()
        sigemptyset(&pipeSignal)
        sigaddset(&pipeSignal, SIGPIPE)
        var previous = sigset_t()
        pthread_sigmask(SIG_BLOCK, &pipeSignal, &previous)
        defer {
            var now = timespec(tv_sec: 0, tv_nsec: 0)
            while sigtimedwait(&pipeSignal, nil, &now) == SIGPIPE {}
            pthread_sigmask(SIG_SETMASK, &previous, nil)
        }
        try? handle.write(contentsOf: data)
    }

    /// Apple's development example body on one line.
    static func appleBodyLine() throws -> String {
        let data = try Data(contentsOf: TestPaths.vector("reference/apple/postback-development-valid.json"))
        let object = try JSONSerialization.jsonObject(with: data)
        return String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self)
    }

    /// Regression: the whole test process died of SIGPIPE, now and then under load, when a run refused its state
    /// before reading the standard input a test was writing to it.
    @Test("A run that exits without reading its standard input does not take the test process down with it")
    func unreadStandardInput() throws {
        let missing = FileManager.default.temporaryDirectory
            .appendingPathComponent("postback-verify-missing-\(UUID().uuidString)/state.sqlite").path
        // Far more than a pipe holds (64 KiB) and than the run reads ahead before it stops.
        let input = String(repeating: String(repeating: "x", count: 99) + "\n", count: 40_000)
        let run = try Self.run(["--format", "jsonl", "--state", missing], stdin: input)
        #expect(run.status == 2)
        #expect(run.stderr.contains(missing))
    }

    @Test("stdin: one record per item in order, blank and comment lines skipped, duplicates marked")
    func standardInput() throws {
        let body = try Self.appleBodyLine()
        let input = "# a comment\n\(body)\n\n   \nnot a token\r\n\(body)\n{\"x\":1}"
        let run = try Self.run(["--format", "jsonl", "--allow-development"], stdin: input)
        #expect(run.status == 1)
        let records = run.records
        try #require(records.count == 4, "\(run.stdout)\n\(run.stderr)")
        #expect(records.map { $0["line"] as? Int } == [2, 5, 6, 7])
        #expect(records.map { $0["source"] as? String } == ["-", "-", "-", "-"])
        #expect(records.map { $0["verdict"] as? String } == ["valid", "invalid", "invalid", "invalid"])
        let codes = records.map { (($0["errors"] as? [[String: Any]])?.first?["code"]) as? String }
        #expect(codes == [nil, "malformed-input", "duplicate", "malformed-input"])
        #expect(records[2]["duplicate-of"] as? Int == 2)
        #expect(records[0]["environment"] as? String == "development")
        #expect(records[0]["signature"] as? String == "verified")
        #expect((records[0]["unsigned"] as? [String: Any])?["conversion-value"] as? Int == 24)
        #expect((records[0]["fields"] as? [String: Any])?["source-identifier"] as? String == "1234")
        #expect(records[1]["kind"] as? String == "unknown")
        #expect(run.stderr.contains("4 items"))
    }

    @Test("--no-dedupe leaves repeats valid")
    func noDedupe() throws {
        let body = try Self.appleBodyLine()
        let run = try Self.run(["--format", "jsonl", "--allow-development", "--no-dedupe", "--quiet"],
                               stdin: "\(body)\n\(body)\n")
        #expect(run.status == 0)
        #expect(run.records.map { $0["verdict"] as? String } == ["valid", "valid"])
        #expect(run.stderr.isEmpty)
    }

    @Test("files and directories: Apple's examples get their documented results")
    func appleFiles() throws {
        let apple = TestPaths.vector("reference/apple").path
        let run = try Self.run(["--format", "jsonl", apple])
        let byFile = Dictionary(uniqueKeysWithValues: run.records.map {
            (URL(fileURLWithPath: $0["source"] as? String ?? "").lastPathComponent,
             (($0["errors"] as? [[String: Any]])?.first?["code"] as? String) ?? "valid")
        })
        #expect(byFile == [
            "impression-example.jws": "unknown-key",
            "postback-development-valid.json": "untrusted-key",
            "postback-production-bad-signature.json": "bad-signature",
        ])
        #expect(run.status == 1)
        let expectInvalid = try Self.run(["--expect", "invalid", "--quiet", apple])
        #expect(expectInvalid.status == 0)
    }

    @Test("Regression: --expect invalid keeps the fast path, and names each valid postback as the general path does")
    func expectInvalidWithFastPath() throws {
        // --expect invalid used to turn the fast path off so that mismatches were worded by the general path; a
        // mismatch now reads the outcome, which both paths give alike.
        let stdin = try FloodTests.honest(3).joined(separator: "\n") + "\n"
        let arguments = ["--format", "jsonl"] + TestPostbackSigner.keyArguments
        let plain = try Self.run(arguments + ["-"], stdin: stdin)
        let fast = try Self.run(arguments + ["--expect", "invalid", "-"], stdin: stdin)
        let general = try Self.run(arguments + ["--expect", "invalid", "--no-fast-path", "-"], stdin: stdin)
        #expect(plain.status == 0 && plain.records.count == 3)
        #expect(fast.status == 1 && general.status == 1)
        #expect(fast.stdout == plain.stdout && general.stdout == plain.stdout)
        // The summary line carries the run's time; the mismatch lines are the same.
        func mismatches(_ run: Run) -> [Substring] { run.stderr.split(separator: "\n").filter { $0.contains("expected") } }
        #expect(mismatches(fast) == (1...3).map { "postback-verify: -:\($0): expected invalid, got valid" })
        #expect(mismatches(fast) == mismatches(general))
    }

    @Test("Apple's SKAdNetwork examples, all in one run, get their documented results")
    func appleSKAdNetworkDirectory() throws {
        let run = try Self.run(["--format", "jsonl", TestPaths.vector("reference/skadnetwork").path])
        let byFile = Dictionary(uniqueKeysWithValues: run.records.map {
            (URL(fileURLWithPath: $0["source"] as? String ?? "").lastPathComponent,
             (($0["errors"] as? [[String: Any]])?.first?["code"] as? String) ?? "valid")
        })
        #expect(byFile.count == 8)
        for (file, outcome) in byFile {
            #expect(outcome == (file.contains("-invalid") ? "bad-signature" : "valid"), "\(file)")
        }
        #expect(run.records.allSatisfy { $0["kind"] as? String == "skadnetwork" })
    }

    @Test("an unreadable path is reported, the others still processed, exit 2")
    func unreadablePath() throws {
        let good = TestPaths.vector("reference/apple/impression-example.jws").path
        let run = try Self.run(["--format", "jsonl", "/nonexistent/input.jsonl", good])
        #expect(run.status == 2)
        #expect(run.stderr.contains("/nonexistent/input.jsonl"))
        #expect(run.records.count == 1)
    }

    @Test("usage errors exit 2 with a message on stderr", arguments: [
        ["--format", "xml"], ["--bogus"], ["--key", "nokey"], ["--jobs", "0"], ["--expect", "maybe"],
        ["--key", "k=/nonexistent.pem"],
        ["--key",
         "apple-cas-identifier/0=Tests/AttributionTests/Vectors/reference/apple/keys/apple-cas-identifier-0.pem"],
        ["--key", "old=Tests/AttributionTests/Vectors/reference/apple/keys/skadnetwork-p192.pem"],
    ])
    func usageErrors(_ arguments: [String]) throws {
        let run = try Self.run(arguments)
        #expect(run.status == 2)
        #expect(run.stderr.contains("error"))
        #expect(run.stdout.isEmpty)
    }

    @Test("a write error on stdout ends with a clear message and exit 2")
    func writeError() throws {
        let process = Process()
        process.executableURL = try Self.binary()
        process.arguments = ["--format", "jsonl", TestPaths.vector("reference/apple").path]
        let error = Pipe()
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: "/dev/full"))
        process.standardError = error
        try process.run()
        let stderr = String(decoding: error.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 2)
        #expect(stderr.contains("cannot write standard output"))
    }

    @Test("output closed early (| head -1) ends quietly and fast")
    func closedOutput() throws {
        let line = try Self.appleBodyLine() + "\n"
        let input = FileManager.default.temporaryDirectory.appendingPathComponent("closed-output.jsonl")
        try Data(String(repeating: line, count: 20_000).utf8).write(to: input)
        defer { try? FileManager.default.removeItem(at: input) }
        let started = Date()
        let (process, output, error) = try Self.start(
            ["--format", "jsonl", "--no-dedupe", "--allow-development", input.path])
        _ = output.fileHandleForReading.availableData
        try output.fileHandleForReading.close()
        let stderr = String(decoding: error.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(Date().timeIntervalSince(started) < 10)
        #expect(stderr.isEmpty, "\(stderr)")
        #expect(process.terminationReason == .uncaughtSignal || process.terminationStatus == 2)
    }

    @Test("a 64 MiB line without a newline is one malformed-input record, and the next file still counts")
    func hugeLine() throws {
        let huge = FileManager.default.temporaryDirectory.appendingPathComponent("huge-line.txt")
        try Data(repeating: UInt8(ascii: "a"), count: 64 * 1024 * 1024).write(to: huge)
        defer { try? FileManager.default.removeItem(at: huge) }
        let next = TestPaths.vector("reference/apple/impression-example.jws").path
        let run = try Self.run(["--format", "jsonl", huge.path, next])
        #expect(run.records.count == 2)
        let first = try #require(run.records.first)
        #expect((first["errors"] as? [[String: Any]])?.first?["code"] as? String == "malformed-input")
        #expect((first["errors"] as? [[String: Any]])?.first?["rule"] as? String == "J1")
        #expect(first["line"] as? Int == 1)
        #expect(run.records.last?["kind"] as? String == "impression")
        #expect(run.stderr.contains("2 items"))
    }

    @Test("--help and --version print to stdout and exit 0")
    func helpAndVersion() throws {
        let help = try Self.run(["--help"])
        #expect(help.status == 0)
        #expect(help.stdout.contains("USAGE:"))
        #expect(help.stdout.contains("--allow-development"))
        let version = try Self.run(["--version"])
        #expect(version.status == 0)
        #expect(version.stdout.hasPrefix("postback-verify "))
    }

    @Test("no items is exit 0 with a summary saying so")
    func noItems() throws {
        let run = try Self.run([], stdin: "\n# nothing\n")
        #expect(run.status == 0)
        #expect(run.stdout.isEmpty)
        #expect(run.stderr.contains("no items"))
    }

    @Test("text format: one line per item with a clear mark")
    func textFormat() throws {
        let body = try Self.appleBodyLine()
        let run = try Self.run(["--allow-development", "--quiet"], stdin: "\(body)\ngarbage\n")
        let lines = run.stdout.split(separator: "\n")
        #expect(lines.count == 2)
        #expect(lines.first?.hasPrefix("-:1  VALID") == true)
        #expect(lines.last?.contains("INVALID") == true)
        #expect(lines.last?.contains("malformed-input") == true)
        #expect(!run.stdout.contains("\u{1B}["), "no colour when stdout is not a terminal")
    }
}

extension CommandLineTests {
    @Test("The fast path and --no-fast-path write the same records and summary, repeats included", arguments: [1, 2, 4])
    func fastPathMatchesGeneralPath(jobs: Int) throws {
        let plain = "Fixtures/valid/postback/compact-one-line-body.json"
        let arguments = [
            "--format", "jsonl", "--jobs", String(jobs), "--allow-development",
            "--key", "fixture.adattributionkit=Fixtures/keys/fixture.adattributionkit.pem",
            "--key", "fixture-apple-identifier/0=Fixtures/keys/fixture-apple-identifier-0.pem",
            // The same body three times: the first is new, the others are D1 duplicates.
            plain, "Fixtures/valid/postback", "Fixtures/invalid/postback", "Fixtures/dedupe", plain,
            "Tests/AttributionTests/Vectors/reference/apple",
        ]
        let fast = try Self.run(arguments)
        let general = try Self.run(arguments + ["--no-fast-path"])
        #expect(fast.status == general.status)
        #expect(fast.stdout == general.stdout)
        let summary = { (run: Run) in run.stderr.replacingOccurrences(of: #"; [0-9.]+ s, [0-9]+ items/s"#, with: "",
                                                                        options: .regularExpression) }
        #expect(summary(fast) == summary(general))
        let records = fast.stdout.split(separator: "\n")
        #expect(records.count > 100)
        #expect(records.filter { $0.contains(#""verdict":"valid""#) }.count > 30)
        #expect(records.filter { $0.contains(#""duplicate-of":1"#) }.count >= 2)
    }
}
