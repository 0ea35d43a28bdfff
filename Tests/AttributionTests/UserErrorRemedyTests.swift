import Foundation
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
        #expect(run.stdout == "postback-verify 1.0.0 (CLI contract version 1.2, docs/cli.md)\n")
        let contract = try String(contentsOf: TestPaths.packageRoot.appendingPathComponent("docs/cli.md"),
                                  encoding: .utf8)
        #expect(contract.contains("(version 1.2)"), "docs/cli.md states the version --version prints")
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
        #expect(CommandLineOptions.duration("30") == 30_000)
        #expect(CommandLineOptions.duration("30d") == 30 * 86_400_000)
    }
}
