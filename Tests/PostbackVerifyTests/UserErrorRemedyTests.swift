@_spi(CommandLine) @_spi(Servers) @_spi(Stores) @testable import Attribution
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Testing

@testable import postback_verify

/// Issue 18 item 6: every error a user can cause names its remedy. Through the built binary: what a user sees.
@Suite("Errors a user causes name the remedy", .serialized)
struct UserErrorRemedyTests {
    typealias Run = CommandLineTests.Run

    static let expectedKey = "expected an EC P-256 public key, PEM (-----BEGIN PUBLIC KEY-----) or DER"

    @Test("An unknown kid names --key KID=PATH")
    func unknownKid() throws {
        let run = try CommandLineTests.run(["--format", "jsonl", "Fixtures/invalid/apple/impression-example.jws"])
        let error = try #require((run.records.first?["errors"] as? [[String: Any]])?.first)
        #expect(error["code"] as? String == "unknown-key")
        #expect((error["message"] as? String)?.contains("load its public key with --key KID=PATH") == true)
    }

    @Test("An untrusted development key says it is Apple's development key and production must not trust it")
    func developmentKey() throws {
        let run = try CommandLineTests.run(["Fixtures/valid/apple/postback-development-valid.json"])
        #expect(run.status == 1)
        #expect(run.stdout.contains("untrusted-key (J4): apple-development-identifier/1 is Apple's development key"))
        #expect(run.stdout.contains("production traffic must not trust it"))
        #expect(!run.stdout.contains("--allow-development"), "the record must not advise trusting it")
    }

    /// Key files a user could give by mistake, and what the message must say (and never say).
    static let keyFiles: [(name: String, contents: String?, says: [String])] = [
        ("missing.pem", nil, ["cannot read the key file: No such file or directory"]),
        ("text.pem", "hello, this is not a key\n", ["the file is text with no PEM block; \(expectedKey)"]),
        ("empty.pem", "", ["the file is empty; \(expectedKey)"]),
        ("base64.pem", "MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEWdp8GPcGqmhgzEFj9Z2nSpQVddayaPe4FMzqM9wib1+aHaaIzoHoLN9zW4K8y4SPy"
            + "kE3YVK3sVqW6Af0lfx3gg==\n", ["bare base64 without PEM lines", "-----BEGIN PUBLIC KEY-----"]),
        ("damaged.pem", "-----BEGIN PUBLIC KEY-----\nMFkw!!\n-----END PUBLIC KEY-----\n",
         ["a damaged PEM block", expectedKey]),
        ("certificate.pem", "-----BEGIN CERTIFICATE-----\nMFkwEwYH\n-----END CERTIFICATE-----\n",
         ["a certificate; give its public key (`openssl x509 -pubkey -noout -in FILE`)"]),
        ("binary.der", "\u{01}\u{02}\u{03}garbage", ["the file is binary but not DER", expectedKey]),
        ("truncated.der", "\u{30}\u{59}\u{30}\u{13}", ["not a DER SubjectPublicKeyInfo", expectedKey]),
    ]

    @Test("A key file that cannot be used says what it is and what is expected, no libcrypto internals",
          arguments: keyFiles.indices)
    func keyFile(_ index: Int) throws {
        let (name, contents, says) = Self.keyFiles[index]
        let directory = try InputTestDirectory()
        defer { directory.remove() }
        let path = "\(directory.path)/\(name)"
        if let contents {
            try directory.write(Array(contents.utf8), to: name)
        }
        let run = try CommandLineTests.run(["--key", "my.adnetwork=\(path)", "Fixtures/valid/apple"])
        #expect(run.status == 2)
        #expect(run.stdout.isEmpty)
        #expect(run.stderr.hasPrefix("postback-verify: error: key file \(path) (for kid my.adnetwork) cannot be used: "))
        for text in says {
            #expect(run.stderr.contains(text), "\(run.stderr)")
        }
        for word in ["asn1", "routines", "libcrypto", "PEM_read", "d2i"] {
            #expect(!run.stderr.contains(word), "\(run.stderr)")
        }
    }

    @Test("A private key is refused with the command that gives its public key; a directory with the OS reason")
    func privateKeyAndDirectory() throws {
        let key = try CommandLineTests.run(["--key", "k=Fixtures/keys/fixture.adattributionkit.private.pem", "-"])
        #expect(key.status == 2)
        #expect(key.stderr.contains("a private key (EC PRIVATE KEY); give the public key (`openssl pkey -pubout`)")
            || key.stderr.contains("a private key (PRIVATE KEY); give the public key (`openssl pkey -pubout`)"),
            "\(key.stderr)")
        let directory = try CommandLineTests.run(["--skadnetwork-key-p256", "Fixtures", "-"])
        #expect(directory.status == 2)
        #expect(directory.stderr.contains("(for --skadnetwork-key-p256) cannot be used: cannot read the key file: "
            + "Is a directory"), "\(directory.stderr)")
    }

    @Test("-V and --version print the version and the contract version of docs/cli.md", arguments: ["-V", "--version"])
    func version(_ option: String) throws {
        let run = try CommandLineTests.run([option])
        #expect(run.status == 0)
        #expect(run.stdout == "postback-verify 1.0.0 (CLI contract version 1.9, docs/cli.md)\n")
        let contract = try String(contentsOf: TestPaths.packageRoot.appendingPathComponent("docs/cli.md"),
                                  encoding: .utf8)
        #expect(contract.contains("(version 1.9)"), "docs/cli.md states the version --version prints")
    }

    @Test("A mistyped option suggests the nearest one", arguments: [
        ("--formt", "--format"), ("-format", "--format"), ("--quite", "--quiet"), ("--allow-develpment", "--allow-development"),
        ("--stat=/tmp/x", "--state"), ("--explian", "--explain"), ("--no-dedup", "--no-dedupe"), ("--jbos", "--jobs"),
        ("--max-impresion-age", "--max-impression-age"), ("--retension", "--retention"),
    ])
    func nearestOption(_ typed: String, suggested: String) throws {
        let run = try CommandLineTests.run([typed, "-"])
        #expect(run.status == 2)
        #expect(run.stderr.hasPrefix("postback-verify: error: unknown option \(typed) (did you mean \(suggested)?)\n"),
                "\(run.stderr)")
    }

    @Test("An option like no other gets no guess", arguments: ["--xyzzy", "-x", "--verbose", "--output"])
    func noGuess(_ typed: String) throws {
        let run = try CommandLineTests.run([typed])
        #expect(run.status == 2)
        #expect(run.stderr.hasPrefix("postback-verify: error: unknown option \(typed)\n"), "\(run.stderr)")
    }

    @Test("--help is aligned: every description starts in one column, continuation lines too")
    func helpAligned() throws {
        let run = try CommandLineTests.run(["--help"])
        #expect(run.status == 0)
        let lines = run.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        let start = try #require(lines.firstIndex { $0.hasPrefix("ARGUMENTS:") })
        let end = try #require(lines.firstIndex { $0.hasPrefix("EXIT STATUS:") })
        let column = 26
        for line in lines[(start + 1)..<end] where !line.isEmpty {
            let text = Array(line)
            if text.count > 2 && text[2] != " " {
                // An option (or PATH) line: a description on the same line starts at the column.
                var index = 2
                while index < text.count && !(text[index] == " " && index + 1 < text.count && text[index + 1] == " ") {
                    index += 1
                }
                while index < text.count && text[index] == " " { index += 1 }
                #expect(index == text.count || index == column, "misaligned: \(line)")
            } else {
                #expect(text.count > column && text.prefix(column).allSatisfy { $0 == " " } && text[column] != " ",
                        "misaligned continuation: \(line)")
            }
        }
    }

    @Test("--help says the unit of --max-impression-age, and a bare number means seconds")
    func impressionAgeUnit() throws {
        let help = try CommandLineTests.run(["--help"]).stdout
        #expect(help.contains("d (days)") && help.contains("a bare number is\n"))
        // Unwrapped first: comparing an Optional<UInt64> inside #expect trips AddressSanitizer (a 9-byte read of
        // the 8-byte payload in the runtime's AnyHashable conversion), not our code.
        let bare = try #require(VerificationPolicy.milliseconds(inDuration: "30"))
        let days = try #require(VerificationPolicy.milliseconds(inDuration: "30d"))
        #expect(bare == 30_000)
        #expect(days == 30 * 86_400_000)
    }

    @Test("--max-impression-age refuses what is not a duration", arguments: [
        "", "d", "30x", "+30", "-30", "3 0", "30dd", "\u{0661}\u{0662}", "１２", "99999999999999999999",
        "213503982336d", "18446744073709552s",
    ])
    func impressionAgeRefused(text: String) {
        #expect(VerificationPolicy.milliseconds(inDuration: text) == nil)
    }
}

// MARK: - Inputs that are not what their name says

extension UserErrorRemedyTests {
    /// Apple's example body, compact, on one line.
    static func body() throws -> String { try CommandLineTests.appleBodyLine() }

    /// Apple's example as Apple's page prints it (over several lines).
    static func printed() throws -> String {
        try String(contentsOf: TestPaths.vector("reference/apple/postback-development-valid.json"), encoding: .utf8)
    }

    /// Runs the binary on one file holding `bytes` and returns the run.
    static func run(file name: String, _ bytes: [UInt8], options: [String] = ["--format", "jsonl"]) throws -> Run {
        let directory = try InputTestDirectory()
        defer { directory.remove() }
        let path = try directory.write(bytes, to: name)
        return try CommandLineTests.run(["--allow-development"] + options + [path])
    }

    /// The only record of a run, and its first error's message.
    static func onlyMessage(_ run: Run) throws -> String {
        try #require(run.records.count == 1, "one record: \(run.stdout)")
        let error = try #require((run.records[0]["errors"] as? [[String: Any]])?.first)
        #expect(error["code"] as? String == "malformed-input" && error["rule"] as? String == "J1")
        #expect(run.records[0]["line"] as? Int == 1)
        #expect(run.status == 1)
        #expect(run.stderr.contains("1 item: 0 valid, 1 invalid"))
        return try #require(error["message"] as? String)
    }

    @Test("A *.json file holding JSON Lines is one record that says to rename it *.jsonl or pipe it",
          arguments: [3, 40])  // 40 lines: over the item cap, only its start is read
    func jsonLinesInJSONFile(_ lines: Int) throws {
        let text = String(repeating: try Self.body() + "\n", count: lines)
        let message = try Self.onlyMessage(try Self.run(file: "postbacks.json", Array(text.utf8)))
        #expect(message.contains("the file holds JSON Lines ("))
        #expect(message.contains(lines == 3 ? "(3 lines" : "(at least "))
        #expect(message.contains("rename it *.jsonl, or pipe it (postback-verify < FILE)"))
        // The same lines in a *.jsonl file are each a valid item.
        let renamed = try Self.run(file: "postbacks.jsonl", Array(text.utf8), options: ["--no-dedupe", "--quiet"])
        #expect(renamed.status == 0 && renamed.stdout.split(separator: "\n").count == lines)
    }

    @Test("A *.json file holding one printed document is still one item, valid")
    func printedJSONFileStillOneItem() throws {
        let run = try Self.run(file: "printed.json", Array(try Self.printed().utf8))
        #expect(run.status == 0 && run.records.first?["verdict"] as? String == "valid")
    }

    @Test("A text file holding a printed document is one record that says to name it *.json or pipe it")
    func printedDocumentInTextFile() throws {
        let printed = try Self.printed()
        let lineCount = printed.split(separator: "\n").count
        try #require(lineCount > 2)
        // A JSON Lines item after the document is read as usual.
        let body = try Self.body()
        let run = try Self.run(file: "postback.txt", Array((printed + body + "\n").utf8))
        #expect(run.records.count == 2, "\(run.stdout)")
        let error = try #require((run.records.first?["errors"] as? [[String: Any]])?.first)
        #expect(error["message"] as? String == "lines 1-\(lineCount) hold one JSON document printed over several "
            + "lines, but this file is read one item per line: name it *.json (one document per file), or pipe it "
            + "(postback-verify < FILE)")
        #expect(run.records.last?["verdict"] as? String == "valid")
        #expect(run.records.last?["line"] as? Int == lineCount + 1)
        // Piped, the same document is one valid item.
        let piped = try CommandLineTests.run(["--allow-development", "--format", "jsonl"], stdin: printed)
        #expect(piped.status == 0 && piped.records.count == 1)
    }

    /// Compressed inputs by their format's magic number, and the command the message must name.
    static let compressed: [(format: String, magic: [UInt8], command: String)] = [
        ("gzip", [0x1F, 0x8B, 0x08, 0x00], "gzip -dc"),
        ("zstd", [0x28, 0xB5, 0x2F, 0xFD, 0x04], "zstd -dc"),
        ("xz", [0xFD, 0x37, 0x7A, 0x58, 0x5A, 0x00, 0x00], "xz -dc"),
        ("bzip2", Array("BZh91AY&SY".utf8), "bzip2 -dc"),
        ("zip", [0x50, 0x4B, 0x03, 0x04, 0x14], "unzip -p"),
    ]

    @Test("A compressed file is one record naming the command that decompresses it, however many lines it has",
          arguments: compressed.indices)
    func compressedFile(_ index: Int) throws {
        let (format, magic, command) = Self.compressed[index]
        // Many "lines" of data after the magic number: once, one J1 per line.
        var bytes = magic
        for index in 0..<2_000 { bytes += [UInt8(truncatingIfNeeded: index), 0x0A, 0x7B, 0x22] }
        let message = try Self.onlyMessage(try Self.run(file: "postbacks.\(format).txt", bytes))
        #expect(message.hasPrefix("the file is "))
        #expect(message.contains("not text: decompress it first (\(command) FILE | postback-verify)"), "\(message)")
        let piped = try CommandLineTests.run(["--format", "jsonl"], stdin: String(decoding: bytes, as: UTF8.self))
        if format == "zip" || format == "bzip2" {  // magic numbers that survive the UTF-8 round trip of stdin
            #expect(try Self.onlyMessage(piped).hasPrefix("standard input is "))
        }
    }

    @Test("A gzip file on standard input is one record")
    func compressedStandardInput() throws {
        let gzip = Process()
        gzip.executableURL = URL(fileURLWithPath: "/bin/sh")
        let directory = try InputTestDirectory()
        defer { directory.remove() }
        let plain = try directory.write(Array(String(repeating: try Self.body() + "\n", count: 100).utf8), to: "p.jsonl")
        gzip.arguments = ["-c", "gzip -c '\(plain)' | '\(try CommandLineTests.binary().path)' --format jsonl"]
        let output = Pipe()
        gzip.standardOutput = output
        gzip.standardError = FileHandle.nullDevice
        try gzip.run()
        let records = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        gzip.waitUntilExit()
        #expect(records.split(separator: "\n").count == 1)
        #expect(records.contains("standard input is gzip-compressed, not text: decompress it first "
            + "(... | gzip -dc | postback-verify)"))
    }

    @Test("A binary file is one record; a text file with one damaged line keeps its other items")
    func binaryFile() throws {
        var binary: [UInt8] = [0x7F, 0x45, 0x4C, 0x46, 0x02, 0x01, 0x01, 0x00]
        for index in 0..<4_000 { binary.append(UInt8(truncatingIfNeeded: index &* 7)) }
        let message = try Self.onlyMessage(try Self.run(file: "a.out.txt", binary))
        #expect(message.hasPrefix("the file is binary (NUL bytes, and no line starts like a postback body or a JWS)"))

        let line = Array((try Self.body() + "\n").utf8)
        let damaged = [0x00, 0x00, 0x0A] + line
        let run = try Self.run(file: "damaged.jsonl", damaged)
        #expect(run.records.count == 2)
        #expect(run.records.last?["verdict"] as? String == "valid", "the genuine line is not lost")
    }
}

// MARK: - The exit status docs/cli.md promises for a closed output

extension UserErrorRemedyTests {
    @Test("A closed output ends the run by SIGPIPE, quietly: the shell's status 141 (docs/cli.md section 4)")
    func closedOutput() throws {
        let input = try FirstContactTests.bodies(20_000)
        defer { try? FileManager.default.removeItem(at: input) }
        let (process, output, error) = try CommandLineTests.start(
            ["--format", "jsonl", "--no-dedupe", "--allow-development", input.path])
        _ = output.fileHandleForReading.readData(ofLength: 1_000)
        try output.fileHandleForReading.close()  // the reader goes away, as `| head -1` does
        let stderr = error.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationReason == .uncaughtSignal)
        #expect(process.terminationStatus == SIGPIPE, "128 + \(process.terminationStatus) in a shell")
        #expect(stderr.isEmpty, "quiet: \(String(decoding: stderr, as: UTF8.self))")
    }
}
