import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Testing

@_spi(CommandLine) @_spi(Servers) @_spi(Stores) @testable import Attribution

/// What a new user meets first, through the built binary: output no input can forge, CI checks that cannot pass on
/// nothing, clean ends on signals, Apple's printed examples piped in, and records that do not change between runs.
@Suite("First contact: the binary as a user meets it", .serialized)
struct FirstContactTests {
    typealias Run = CommandLineTests.Run

    /// Apple's earlier example (a production kid, a bad signature) with members replaced: well-formed, invalid.
    static func forgedBody(_ members: [String: Any]) throws -> String {
        let data = try Data(contentsOf: TestPaths.vector("reference/apple/postback-production-bad-signature.json"))
        var body = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        body.merge(members) { $1 }
        return String(decoding: try JSONSerialization.data(withJSONObject: body), as: UTF8.self)
    }

    /// A compact JWS whose header holds `kid` (JSON-escaped as needed) and an all-ones signature.
    static func token(kid: String) -> String {
        func segment(_ text: String) -> String {
            Data(text.utf8).base64EncodedString()
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
        }
        let signature = Data(repeating: 1, count: 64).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
        return segment(#"{"kid":\#(JSONValue.quoted(kid)),"alg":"ES256"}"#) + "."
            + segment(#"{"postback-identifier":"p"}"#) + "." + signature
    }

    /// Hostile strings: terminal escapes, a carriage return that rewrites the line, line breaks, bidirectional
    /// overrides and isolates, C1 controls (CSI, OSC), a window-title OSC, DEL, zero-width and invisible characters.
    static let hostile: [String] = [
        "US\r\u{1B}[2K-:1  VALID    postback  id=FORGED",
        "US\n-:2  VALID    postback",
        "\u{202E}SU",
        "\u{2066}US\u{2069}\u{200F}",
        "\u{9B}32mVALID\u{9B}0m",
        "\u{1B}]0;owned\u{07}US",
        "\u{9D}0;title\u{9C}",
        "U\u{7F}S\u{2028}\u{2029}\u{85}",
        "\u{200B}\u{FEFF}\u{2063}",
    ]

    /// Every item: a body whose unsigned members are hostile, and a bare JWS whose kid is.
    static var hostileItems: [String] {
        get throws {
            try hostile.flatMap { text in
                [try forgedBody(["country-code": text, "extra": text, "ad-interaction-type": text]),
                 token(kid: text)]
            }
        }
    }

    static func assertNothingRaw(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let raw = text.unicodeScalars.filter { $0 != "\n" && TerminalText.mustEscape($0) }
        #expect(raw.isEmpty, "raw scalars reached the output: \(raw.map { String($0.value, radix: 16) })",
                sourceLocation: sourceLocation)
    }

    @Test("Regression: hostile unsigned members and kids give one plain INVALID line each, nothing raw")
    func textCannotBeForged() throws {
        let items = try Self.hostileItems
        let run = try CommandLineTests.run([], stdin: items.joined(separator: "\n") + "\n")
        #expect(run.status == 1)
        let lines = run.stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        #expect(lines.count == items.count, "one line per item")
        for (index, line) in lines.enumerated() {
            #expect(line.hasPrefix("-:\(index + 1)  INVALID  "), "\(line)")
        }
        Self.assertNothingRaw(run.stdout)
        Self.assertNothingRaw(run.stderr)
    }

    @Test("Paths and arguments named in messages are escaped too", arguments: hostile)
    func messagesCannotBeForged(_ text: String) throws {
        let usage = try CommandLineTests.run(["--key", "k\(text)=/nonexistent/\(text).pem"])
        #expect(usage.status == 2)
        Self.assertNothingRaw(usage.stderr)
        let unreadable = try CommandLineTests.run(["/nonexistent/\(text)"])
        #expect(unreadable.status == 2 && unreadable.stderr.contains("cannot read"))
        Self.assertNothingRaw(unreadable.stderr)
    }

    @Test("Regression: with colour forced, the only escape sequences are the marks' own")
    func colouredTextCannotBeForged() throws {
        let run = try CommandLineTests.run(["--color", "always"], stdin: try Self.hostileItems.joined(separator: "\n"))
        let lines = run.stdout.split(separator: "\n")
        #expect(lines.count == Self.hostile.count * 2)
        for line in lines {
            #expect(line.contains("  \u{1B}[31mINVALID  \u{1B}[0m  "))
            let withoutMarks = line.replacingOccurrences(of: "\u{1B}[31m", with: "")
                .replacingOccurrences(of: "\u{1B}[33m", with: "").replacingOccurrences(of: "\u{1B}[0m", with: "")
            Self.assertNothingRaw(withoutMarks)
        }
    }

    @Test("JSON Lines escapes the same scalars as \\uXXXX and still decodes to the received values")
    func jsonLinesCannotBeForged() throws {
        let items = try Self.hostileItems
        let run = try CommandLineTests.run(["--format", "jsonl"], stdin: items.joined(separator: "\n"))
        Self.assertNothingRaw(run.stdout)
        let records = run.records
        #expect(records.count == items.count)
        for (index, text) in Self.hostile.enumerated() {
            let unsigned = records[2 * index]["unsigned"] as? [String: Any]
            #expect(unsigned?["country-code"] as? String == text)
            #expect(records[2 * index + 1]["key-id"] as? String == text)
            #expect(records[2 * index + 1]["line"] as? Int == 2 * index + 2)
        }
    }

    @Test("A duplicate reads DUPLICATE in text, and warnings come with their messages")
    func duplicateAndWarnings() throws {
        let body = try CommandLineTests.appleBodyLine()
        let run = try CommandLineTests.run(["--allow-development"], stdin: "\(body)\n\(body)\n")
        let lines = run.stdout.split(separator: "\n")
        #expect(lines.count == 2)
        #expect(lines.first?.contains("  VALID  ") == true)
        #expect(lines.last?.contains("  DUPLICATE  ") == true)
        #expect(lines.last?.contains("INVALID") == false)
        let jsonl = try CommandLineTests.run(["--allow-development", "--format", "jsonl"], stdin: "\(body)\n\(body)\n")
        #expect(jsonl.records.last?["verdict"] as? String == "invalid")
        #expect((jsonl.records.last?["errors"] as? [[String: Any]])?.first?["code"] as? String == "duplicate")

        let future = "Fixtures/valid/impression/i3-timestamp-year-2100.jws"
        let warned = try CommandLineTests.run(
            ["--key", "fixture.adattributionkit=Fixtures/keys/fixture.adattributionkit.pem", future])
        #expect(warned.stdout.contains("warning I3: timestamp "))
        #expect(warned.stdout.contains("in the future"))
    }

    @Test("--expect on nothing exits 1 and says so", arguments: [["--expect", "valid"], ["--expect", "invalid"]])
    func expectOnNothing(_ expect: [String]) throws {
        let empty = try CommandLineTests.run(expect)
        #expect(empty.status == 1)
        #expect(empty.stderr.contains("nothing was checked"))

        let directory = try InputTestDirectory()
        defer { directory.remove() }
        try directory.write(Array("{}".utf8), to: "upper/POSTBACK.JSON")
        try directory.write(Array("x".utf8), to: "upper/notes.md")
        let upper = try CommandLineTests.run(expect + ["\(directory.path)/upper"])
        #expect(upper.status == 1)
        #expect(upper.stderr.contains("warning: directory \(directory.path)/upper holds no item file"))
    }

    @Test("A directory without item files is named in a warning beside one that has some; the run still passes")
    func emptyDirectoryWarning() throws {
        let directory = try InputTestDirectory()
        defer { directory.remove() }
        try FileManager.default.createDirectory(atPath: "\(directory.path)/empty", withIntermediateDirectories: true)
        let run = try CommandLineTests.run(["--allow-development", "--expect", "valid",
                                            "Fixtures/valid/apple", "\(directory.path)/empty"])
        #expect(run.status == 0)
        #expect(run.stderr.contains("warning: directory \(directory.path)/empty holds no item file"))
        #expect(!run.stderr.contains("Fixtures/valid/apple holds"))
    }

    @Test("Apple's example piped in as printed is one record, valid")
    func printedDocumentOnStandardInput() throws {
        let printed = try String(contentsOf: TestPaths.vector("reference/apple/postback-development-valid.json"),
                                 encoding: .utf8)
        let run = try CommandLineTests.run(["--allow-development", "--format", "jsonl"], stdin: printed + printed)
        #expect(run.records.count == 2)
        #expect(run.records.first?["verdict"] as? String == "valid")
        #expect(run.records.first?["line"] as? Int == 1)
        #expect(run.records.last?["duplicate-of"] as? Int == 1)
    }

    @Test("The same input and options give byte-identical records on every run (I3 included)")
    func reproducibleRecords() throws {
        let arguments = ["--format", "jsonl", "--allow-development",
                         "--key", "fixture.adattributionkit=Fixtures/keys/fixture.adattributionkit.pem",
                         "--key", "fixture-apple-identifier/0=Fixtures/keys/fixture-apple-identifier-0.pem",
                         "Fixtures/valid/impression", "Fixtures/dedupe"]
        let first = try CommandLineTests.run(arguments)
        Thread.sleep(forTimeInterval: 0.01)
        let second = try CommandLineTests.run(arguments)
        #expect(first.stdout.contains(#""rule":"I3""#), "the input holds an I3 warning, or this proves nothing")
        #expect(first.stdout == second.stdout)
    }
}

// MARK: - Signals

extension FirstContactTests {
    /// A file of `count` copies of Apple's development body, one per line.
    static func bodies(_ count: Int) throws -> URL {
        let line = try CommandLineTests.appleBodyLine() + "\n"
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("bodies-\(count)-\(getpid()).jsonl")
        try Data(String(repeating: line, count: count).utf8).write(to: file)
        return file
    }

    @Test("Regression: SIGTERM or SIGINT into a slow reader leaves only whole records and a summary",
          arguments: [SIGTERM, SIGINT])
    func signalIntoSlowReader(_ signalNumber: Int32) throws {
        let input = try Self.bodies(20_000)
        defer { try? FileManager.default.removeItem(at: input) }
        let (process, output, error) = try CommandLineTests.start(
            ["--format", "jsonl", "--no-dedupe", "--allow-development", input.path])
        var received = Data()
        // A slow reader: small reads with pauses, so the writer blocks mid-stream with records in flight.
        for _ in 0..<6 {
            received += output.fileHandleForReading.readData(ofLength: 3_000)
            Thread.sleep(forTimeInterval: 0.05)
        }
        kill(process.processIdentifier, signalNumber)
        while true {
            let chunk = output.fileHandleForReading.readData(ofLength: 3_000)
            if chunk.isEmpty { break }
            received += chunk
            Thread.sleep(forTimeInterval: 0.002)
        }
        let stderr = String(decoding: error.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()

        #expect(process.terminationReason == .exit)
        #expect(process.terminationStatus == 128 + signalNumber)
        let text = String(decoding: received, as: UTF8.self)
        #expect(text.hasSuffix("\n"), "the last record is whole")
        let lines = text.split(separator: "\n")
        #expect(lines.count > 0 && lines.count < 20_000, "interrupted mid-run (\(lines.count) records)")
        for line in lines {
            let record = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            #expect(record?["verdict"] as? String == "valid", "a whole record: \(line.prefix(80))")
        }
        let name = signalNumber == SIGTERM ? "SIGTERM" : "SIGINT"
        #expect(stderr.contains("interrupted by \(name); \(lines.count) items got records"), "\(stderr)")
    }
}

// MARK: - On a terminal

extension FirstContactTests {
    /// Runs the binary on a new pseudo-terminal (standard output and standard error both on it), through
    /// util-linux's `script`, and returns what the terminal received.
    static func runOnTerminal(_ arguments: [String], environment: [String: String]) throws -> String {
        let script = URL(fileURLWithPath: "/usr/bin/script")
        try #require(FileManager.default.isExecutableFile(atPath: script.path), "util-linux's script(1) is needed")
        let quoted = ([try CommandLineTests.binary().path] + arguments)
            .map { "'" + $0.replacingOccurrences(of: "'", with: #"'\''"#) + "'" }.joined(separator: " ")
        let process = Process()
        process.executableURL = script
        process.arguments = ["-qfec", quoted, "/dev/null"]
        process.currentDirectoryURL = TestPaths.packageRoot
        var inherited = ProcessInfo.processInfo.environment
        inherited.removeValue(forKey: "NO_COLOR")
        process.environment = inherited.merging(environment) { $1 }
        let output = Pipe()
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = output
        try process.run()
        let received = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: received, as: UTF8.self)
    }

    @Test("Colour on a terminal unless NO_COLOR is non-empty or TERM is dumb", arguments: [
        (["TERM": "xterm"], true), (["TERM": "xterm", "NO_COLOR": ""], true),
        (["TERM": "xterm", "NO_COLOR": "1"], false), (["TERM": "dumb"], false),
    ])
    func colourConventions(_ environment: [String: String], coloured: Bool) throws {
        let terminal = try Self.runOnTerminal(["--allow-development", "Fixtures/valid/apple"], environment: environment)
        #expect(terminal.contains("VALID"))
        #expect(terminal.contains("\u{1B}[32m") == coloured, "\(terminal)")
    }

    @Test("No progress line is drawn on the terminal that shows the records, and none is left behind")
    func noProgressBetweenRecords() throws {
        let input = try Self.bodies(30_000)
        defer { try? FileManager.default.removeItem(at: input) }
        let started = Date()
        let terminal = try Self.runOnTerminal(["--no-dedupe", "--allow-development", "--jobs", "1", input.path],
                                              environment: ["TERM": "xterm"])
        #expect(Date().timeIntervalSince(started) > 1.5, "long enough for progress to be due, or this proves nothing")
        #expect(terminal.contains("30000 items: 30000 valid"))
        #expect(!terminal.contains("items/s, "), "a progress line was drawn among the records")
        #expect(!terminal.contains("\r\u{1B}[K"))
    }
}
