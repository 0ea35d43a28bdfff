import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Testing

@_spi(CommandLine) @_spi(Servers) @_spi(Stores) @testable import Attribution

/// Issue 33 item 4: the traps a new user met on first contact, each with its regression test, through the built
/// binary: the fixtures' own keys, a pretty-printed body on standard input, and `--schema` on a file it cannot read.
@Suite("First contact without traps", .serialized)
struct FirstContactTrapTests {
    typealias Run = CommandLineTests.Run

    // MARK: - Fixture keys

    /// The fixture kids and their public key files, read from Fixtures/README.md's key table (`| `kid` |
    /// `keys/FILE.pem` | ...`), not from the code under test; the SKAdNetwork rows name no kid a token carries.
    static func fixtureKeys() throws -> [(keyID: String, path: String)] {
        let readme = try Documents.text("Fixtures/README.md")
        let table = try DocumentationConsistencyTests.section(readme, from: "## Keys", to: "Postback payloads")
        let row = try NSRegularExpression(pattern: #"^\| `([^`]+)` \| `(keys/[^`]+\.pem)` \|"#,
                                          options: .anchorsMatchLines)
        let matches = row.matches(in: table, range: NSRange(table.startIndex..., in: table))
        return matches.map { match in
            (String(table[Range(match.range(at: 1), in: table)!]),
             "Fixtures/" + String(table[Range(match.range(at: 2), in: table)!]))
        }
    }

    /// A documented command: its words (continuation lines joined, the comment dropped) and the comment.
    struct DocumentedCommand: CustomStringConvertible {
        let words: [String]
        let comment: String
        var description: String { words.joined(separator: " ") }
    }

    /// Every `postback-verify` command of a document's `sh` blocks that names a path under `Fixtures/`.
    static func fixtureCommands(in path: String) throws -> [DocumentedCommand] {
        var commands: [DocumentedCommand] = []
        var inShell = false
        var pending = ""
        let text = try Documents.text(path)
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("```") {
                inShell = line == "```sh"
                continue
            }
            guard inShell else { continue }
            if line.hasSuffix("\\") {
                pending += line.dropLast() + " "
                continue
            }
            let whole = pending + line
            pending = ""
            let parts = whole.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)
            var words = parts[0].split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
            if words.starts(with: ["swift", "run"]) { words.removeFirst(2) }
            guard words.first == "postback-verify", words.contains(where: { $0.hasPrefix("Fixtures/") }) else {
                continue
            }
            commands.append(DocumentedCommand(words: Array(words.dropFirst()),
                                              comment: parts.count > 1 ? String(parts[1]) : ""))
        }
        return commands
    }

    @Test("Regression (fixture keys): README.md shows a command over Fixtures/valid, and it runs green as written")
    func readmeFixtureCommandRunsGreen() throws {
        let commands = try Self.fixtureCommands(in: "README.md")
        let overValid = commands.filter { $0.words.last == "Fixtures/valid" }
        try #require(!overValid.isEmpty, "README.md shows no command over Fixtures/valid")
        for command in overValid {
            #expect(command.words.contains("--expect"), "\(command): it must say what green means")
            let run = try CommandLineTests.run(command.words)
            #expect(run.status == 0, "\(command): status \(run.status): \(run.stderr.suffix(300))")
            #expect(run.stderr.contains(" invalid;") && !run.stderr.contains(" 0 valid"), "\(run.stderr)")
        }
    }

    @Test("Regression (fixture keys): every documented command over the fixtures exits as its document says",
          arguments: ["README.md", "Fixtures/README.md"])
    func documentedFixtureCommands(_ document: String) throws {
        let commands = try Self.fixtureCommands(in: document).filter {
            $0.words.contains("--expect") || $0.comment.contains("exit status 1 is expected")
        }
        try #require(commands.count >= (document == "README.md" ? 1 : 6), "\(document): \(commands)")
        for command in commands {
            let expected: Int32 = command.comment.contains("exit status 1 is expected") ? 1 : 0
            let run = try CommandLineTests.run(command.words)
            #expect(run.status == expected, "\(document): \(command): status \(run.status): \(run.stderr.suffix(300))")
            let fixtureKidRefused = run.stdout.contains("test-only fixture kid")
            #expect(!fixtureKidRefused, "\(document): \(command): a fixture kid was not trusted")
        }
    }

    @Test("Regression (fixture keys): without --key a fixture kid is refused, its record naming --key and the file")
    func fixtureKidNamesItsKeyFile() throws {
        let keys = try Self.fixtureKeys()
        try #require(keys.count == 2, "Fixtures/README.md's key table: \(keys)")
        let run = try CommandLineTests.run(["--format", "jsonl", "--allow-development", "Fixtures/valid"])
        #expect(run.status == 1, "nothing is trusted automatically")
        var namedByKid: [String: Int] = [:]
        for record in run.records {
            guard let error = (record["errors"] as? [[String: Any]])?.first,
                  error["code"] as? String == "unknown-key" else { continue }
            #expect(record["verdict"] as? String == "invalid" && record["signature"] as? String == "not-checked")
            let kid = try #require(record["key-id"] as? String)
            let message = try #require(error["message"] as? String)
            let key = try #require(keys.first { $0.keyID.utf8.elementsEqual(kid.utf8) }, "not a fixture kid: \(kid)")
            #expect(message.contains("--key \(key.keyID)=\(key.path) "), "\(message)")
            namedByKid[kid, default: 0] += 1
        }
        #expect(Set(namedByKid.keys) == Set(keys.map(\.keyID)), "both fixture kids occur: \(namedByKid)")
        for key in keys {
            let file = TestPaths.packageRoot.appendingPathComponent(key.path).path
            #expect(FileManager.default.fileExists(atPath: file), "the file the message names exists: \(key.path)")
        }
    }

    @Test("Regression (fixture keys): a kid that only resembles a fixture kid gets the general remedy, and no file",
          arguments: ["Fixture.adattributionkit", "fixture.adattributionkit ", "fixture-apple-identifier/1",
                      "fixture-apple-identifier\u{2215}0", "example.adattributionkit"])
    func lookAlikeKidGetsGeneralRemedy(_ kid: String) throws {
        let run = try CommandLineTests.run(["--format", "jsonl", "-"], stdin: FirstContactTests.token(kid: kid) + "\n")
        let error = try #require((run.records.first?["errors"] as? [[String: Any]])?.first)
        #expect(error["code"] as? String == "unknown-key")
        let message = try #require(error["message"] as? String)
        #expect(message.contains("load its public key with --key KID=PATH"), "\(message)")
        #expect(!message.contains("Fixtures/keys"), "\(message)")
    }

    // MARK: - A pretty-printed body on standard input

    /// Apple's example body printed with its first member on the `{` line, as some printers and hand edits leave
    /// it: `{"jws-string": "...",` then one indented member per line, then `}`.
    static func bodyWithMemberOnOpeningLine() throws -> (text: String, lines: Int) {
        let data = try Data(contentsOf: TestPaths.vector("reference/apple/postback-development-valid.json"))
        let body = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let token = try #require(body["jws-string"] as? String)
        let others = body.keys.filter { $0 != "jws-string" }.sorted()
        var lines = [#"{"jws-string": "\#(token)","#]
        for (index, key) in others.enumerated() {
            let json = try JSONSerialization.data(withJSONObject: body[key]!, options: .fragmentsAllowed)
            let value = String(decoding: json, as: UTF8.self)
            lines.append("  \"\(key)\": \(value)" + (index == others.count - 1 ? "" : ","))
        }
        lines.append("}")
        return (lines.joined(separator: "\n") + "\n", lines.count)
    }

    /// The records' first errors' messages.
    static func messages(_ run: Run) -> [String] {
        run.records.map { ($0["errors"] as? [[String: Any]])?.first?["message"] as? String ?? "" }
    }

    @Test("Regression (pretty-printed body on stdin): a line per record, each naming the remedy, which works")
    func memberOnOpeningLineOnStandardInput() throws {
        let (printed, lineCount) = try Self.bodyWithMemberOnOpeningLine()
        try #require(lineCount >= 4)
        let run = try CommandLineTests.run(["--format", "jsonl", "--allow-development"], stdin: printed)
        #expect(run.status == 1)
        #expect(run.records.map { $0["line"] as? Int } == Array(1...lineCount), "one record per line, in order")
        for (record, message) in zip(run.records, Self.messages(run)) {
            let error = (record["errors"] as? [[String: Any]])?.first
            #expect(error?["code"] as? String == "malformed-input" && error?["rule"] as? String == "J1")
            #expect(message.contains("line 1 starts a JSON document printed over several lines"), "\(message)")
            #expect(message.contains("give each body on one line (jq -c . FILE | postback-verify)"), "\(message)")
            #expect(message.contains("or as a *.json file"), "\(message)")
        }
        // The remedies: the same body compact on one line, and as a *.json file, are each one valid item.
        let data = try Data(contentsOf: TestPaths.vector("reference/apple/postback-development-valid.json"))
        let compact = String(decoding: try JSONSerialization.data(withJSONObject: try JSONSerialization.jsonObject(
            with: data)), as: UTF8.self)
        let piped = try CommandLineTests.run(["--format", "jsonl", "--allow-development"], stdin: compact + "\n")
        #expect(piped.status == 0 && piped.records.count == 1)
        let directory = try InputTestDirectory()
        defer { directory.remove() }
        let file = try directory.write(Array(printed.utf8), to: "postback.json")
        let asFile = try CommandLineTests.run(["--format", "jsonl", "--allow-development", file])
        #expect(asFile.status == 0 && asFile.records.count == 1)
    }

    @Test("Regression (pretty-printed body on stdin): blank lines give no record; items around it keep their verdicts")
    func memberOnOpeningLineKeepsOtherItems() throws {
        let (printed, lineCount) = try Self.bodyWithMemberOnOpeningLine()
        let body = try CommandLineTests.appleBodyLine()
        var lines = printed.split(separator: "\n").map(String.init)
        lines.insert("", at: 2)
        lines.insert("  # a note", at: 3)
        let input = [#"{"jws-string": "cut short","#, body]  // a line cut short, then an ordinary item
            + lines + ["  " + body, body, "# end"]
        let run = try CommandLineTests.run(["--format", "jsonl", "--allow-development", "--no-dedupe"],
                                           stdin: input.joined(separator: "\n") + "\n")
        let documentLines = [3, 4] + Array(7...(lineCount + 4))  // the printed body moved down 2, with 2 lines added
        let expectedLines = [1, 2] + documentLines + [lineCount + 5, lineCount + 6]
        #expect(run.records.map { $0["line"] as? Int } == expectedLines)
        let messages = Self.messages(run)
        let verdicts = run.records.map { $0["verdict"] as? String }
        #expect(verdicts.first == "invalid" && !messages[0].contains("jq"), "cut short alone: its own error")
        #expect(verdicts[1] == "valid")
        for index in 2..<(2 + documentLines.count) {
            #expect(messages[index].contains("line 3 starts a JSON document printed over several lines"),
                    "\(messages[index])")
        }
        #expect(verdicts.suffix(2) == ["valid", "valid"], "the indented whole body and the JSON Lines item")
    }

    @Test("Regression (pretty-printed body in a *.jsonl file): each record says to name it *.json or use one line")
    func memberOnOpeningLineInFile() throws {
        let (printed, lineCount) = try Self.bodyWithMemberOnOpeningLine()
        let directory = try InputTestDirectory()
        defer { directory.remove() }
        let file = try directory.write(Array(printed.utf8), to: "postbacks.jsonl")
        let run = try CommandLineTests.run(["--format", "jsonl", "--allow-development", file])
        #expect(run.records.count == lineCount)
        for message in Self.messages(run) {
            #expect(message.contains("this file is read one item per line: name it *.json (one document per file), "
                + "or give each body on one line (jq -c . FILE)"), "\(message)")
        }
    }

    // MARK: - --schema on a file it cannot read

    /// Runs the binary through `wrapper` (a command that runs the rest of its arguments, such as setpriv), from
    /// the package root with standard input empty, to its end.
    static func run(through wrapper: [String], _ arguments: [String]) throws -> Run {
        guard let command = wrapper.first else {
            return try CommandLineTests.run(arguments)
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: command)
        process.arguments = Array(wrapper.dropFirst()) + [try CommandLineTests.binary().path] + arguments
        process.currentDirectoryURL = TestPaths.packageRoot
        let output = Pipe(), error = Pipe()
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = output
        process.standardError = error
        try process.run()
        let out = output.fileHandleForReading.readDataToEndOfFile()
        let err = error.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Run(status: process.terminationStatus, stdout: String(decoding: out, as: UTF8.self),
                   stderr: String(decoding: err, as: UTF8.self))
    }

    @Test("Regression (--schema): a file that cannot be read is named in words with its path; status 2", arguments: [
              ("directory", "is a directory; give the schema's JSON file itself"),
              ("missing", "cannot read the file: no such file (check the path"),
              ("through-a-file", "cannot read the file: a part of the path before the file name is not a directory"),
              ("read-fails", "cannot read the file: Input/output error"),
          ])
    func schemaUnreadable(_ kind: String, says: String) throws {
        let directory = try InputTestDirectory()
        defer { directory.remove() }
        let plain = try directory.write(Array("{}".utf8), to: "plain.json")
        let path = switch kind {
        case "directory": directory.path
        case "missing": "\(directory.path)/no-schema.json"
        case "through-a-file": "\(plain)/schema.json"
        default: "/proc/self/mem"  // reading its first page fails for real (EIO), even as root
        }
        let run = try CommandLineTests.run(["--schema", path, "-"])
        #expect(run.status == 2)
        #expect(run.stdout.isEmpty)
        #expect(run.stderr.hasPrefix("postback-verify: error: --schema \(path): \(says)"), "\(run.stderr)")
        for foundation in ["NSCocoaErrorDomain", "error 256", "operation could not be completed"] {
            #expect(!run.stderr.contains(foundation), "\(run.stderr)")
        }
    }

    @Test("Regression (--schema): a file the user may not read says permission denied (run as nobody when root)")
    func schemaPermissionDenied() throws {
        let directory = try InputTestDirectory()
        defer { directory.remove() }
        let path = try directory.write(try TestPaths.bytes(TestPaths.fixtures.appendingPathComponent(
            "schema/example-schema.json")), to: "schema.json")
        #expect(chmod(path, 0) == 0)
        #expect(chmod(directory.path, 0o755) == 0)
        // Root reads any file whatever its mode: the same binary then runs as nobody, as setpriv(1) sets it.
        let asNobody = ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
        if geteuid() == 0 {
            try #require(FileManager.default.isExecutableFile(atPath: asNobody[0]), "util-linux's setpriv is needed")
        }
        let run = try Self.run(through: geteuid() == 0 ? asNobody : [], ["--schema", path, "-"])
        #expect(run.status == 2)
        #expect(run.stderr.hasPrefix("postback-verify: error: --schema \(path): cannot read the file: permission "
            + "denied (make it readable by the user this runs as)"), "\(run.stderr)")
    }

    @Test("Regression (--schema): a FIFO no program writes to does not hang the start; it reads as empty")
    func schemaFIFODoesNotHang() throws {
        let directory = try InputTestDirectory()
        defer { directory.remove() }
        let path = "\(directory.path)/schema.fifo"
        #expect(mkfifo(path, 0o644) == 0)
        // Under timeout(1), so that the regression fails the test (status 124) instead of hanging the suite.
        let run = try Self.run(through: ["/usr/bin/timeout", "10"], ["--schema", path, "-"])
        #expect(run.status == 2)
        #expect(run.stderr.hasPrefix("postback-verify: error: --schema \(path): line 1: "), "\(run.stderr)")
    }

    @Test("Regression (--schema): the path in the message is escaped", arguments: FirstContactTests.hostile)
    func schemaPathEscaped(_ text: String) throws {
        let run = try CommandLineTests.run(["--schema", "/nonexistent/\(text)", "-"])
        #expect(run.status == 2)
        #expect(run.stderr.contains("cannot read the file: no such file"), "\(run.stderr)")
        FirstContactTests.assertNothingRaw(run.stderr)
    }
}
