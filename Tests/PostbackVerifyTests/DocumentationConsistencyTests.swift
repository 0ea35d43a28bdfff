import Foundation
import Testing

@_spi(CommandLine) @_spi(Servers) @_spi(Stores) @testable import Attribution
@testable import postback_verify

/// Issue 18 item 5: no document contradicts another, and every citation points at something that exists.
/// `--help`, the README's option table and docs/cli.md are held to the parser's options; every "spec section N"
/// in code and docs to a section of docs/spec.md; the rule catalogue of docs/spec.md to `RuleID`.
@Suite("Documentation agrees with the code and with itself")
struct DocumentationConsistencyTests {

    /// The lines of `text` from the line starting with `start` up to (not including) the next starting with `end`.
    static func section(_ text: String, from start: String, to end: String) throws -> String {
        try Documents.section(text, from: start, to: end)
    }

    /// Every option-looking token (`--name`, `-x`) in a text, by a simple scan.
    static func optionTokens(_ text: String) -> Set<String> {
        let pattern = try! NSRegularExpression(pattern: #"(?<![\w-])(--[a-z][a-z0-9-]*[a-z0-9]|-[a-zA-Z])(?![\w-])"#)
        let range = NSRange(text.startIndex..., in: text)
        return Set(pattern.matches(in: text, range: range).map { String(text[Range($0.range, in: text)!]) })
    }

    /// The three places a user reads the options: `--help`'s OPTIONS, the README's option table, docs/cli.md's.
    static func optionDocuments() throws -> [(name: String, text: String)] {
        [("--help", try section(HelpText.usage, from: "OPTIONS:", to: "EXIT STATUS:")),
         ("README.md", try section(Documents.text("README.md"), from: "### Options", to: "### ")),
         ("docs/cli.md", try section(Documents.text("docs/cli.md"), from: "## 1. Invocation", to: "## 2."))]
    }

    @Test("Every option the parser knows is named in --help, the README's table and docs/cli.md")
    func everyOptionDocumented() throws {
        for (document, text) in try Self.optionDocuments() {
            let tokens = Self.optionTokens(text)
            for option in CommandLineOptions.names {
                for spelling in option.spellings {
                    #expect(tokens.contains(spelling), "\(document) does not name \(spelling)")
                }
            }
        }
    }

    @Test("Every option named in --help, the README's table and docs/cli.md is one the parser knows")
    func nothingDocumentedThatIsNotThere() throws {
        for (document, text) in try Self.optionDocuments() {
            // `--NAME=VALUE` describes the syntax; `--formt` is docs/cli.md's example of a mistyped option.
            for token in Self.optionTokens(text) where !["--NAME", "--formt"].contains(token) {
                #expect(CommandLineOptions.isKnown(token), "\(document) names \(token), which the parser refuses")
            }
        }
    }

    @Test("Every name in the parser's option list is accepted by the parser")
    func everyNameParses() throws {
        let values = ["--format": "jsonl", "--key": "k=p", "--expect": "valid", "-j": "2", "--jobs": "2",
                      "--max-impression-age": "30d", "--color": "never", "--colour": "never",
                      "--retention": "5", "--state": "/tmp/x", "--skadnetwork-key-p256": "p",
                      "--skadnetwork-key-p192": "p", "--schema": "Fixtures/schema/example-schema.json",
                      "--report": "/tmp/report.json", "--label": "upload"]
        for option in CommandLineOptions.names {
            for spelling in option.spellings {
                var arguments = [spelling]
                if option.takesValue { arguments.append(try #require(values[spelling], "a value for \(spelling)")) }
                if spelling == "--retention" { arguments += ["--state", "/tmp/x"] }
                do {
                    _ = try CommandLineOptions.parse(arguments)
                } catch {
                    Issue.record("\(spelling) is in the option list but the parser says: \(error.message)")
                }
            }
        }
    }

    /// Files whose comments and text may cite the specification.
    static func citingFiles() throws -> [String] {
        let root = TestPaths.packageRoot.path
        var files = ["README.md"]
        for folder in ["Sources", "Tests/AttributionTests", "docs", "Fixtures", "Fuzz", "Benchmarks", "Examples"] {
            guard let walker = FileManager.default.enumerator(atPath: "\(root)/\(folder)") else { continue }
            for case let path as String in walker where !path.hasPrefix("Vectors")
                && [".swift", ".md", ".py", ".sh", ".json"].contains(where: { path.hasSuffix($0) }) {
                files.append("\(folder)/\(path)")
            }
        }
        return files
    }

    /// The section numbers of a Markdown document: `## 7. Title` gives 7, `### 5.1 Title` gives 5.1.
    static func sectionNumbers(_ document: String) throws -> Set<String> {
        let pattern = try NSRegularExpression(pattern: #"(?m)^#{2,3} ([0-9]+(?:\.[0-9]+)?)\.? "#)
        let range = NSRange(document.startIndex..., in: document)
        return Set(pattern.matches(in: document, range: range).map {
            String(document[Range($0.range(at: 1), in: document)!])
        })
    }

    @Test("Every \"spec section N\" and \"docs/cli.md section N\" in code and docs names a section that exists")
    func citationsResolve() throws {
        let spec = try Self.sectionNumbers(try Documents.text("docs/spec.md"))
        let cli = try Self.sectionNumbers(try Documents.text("docs/cli.md"))
        #expect(spec.isSuperset(of: ["2", "3", "4", "5.1", "5.2", "7", "9", "10", "11"]))
        // "spec section 9", "spec §5.2", "Spec sections 5-7", "specification's section 7", "the spec's tables (§5-7)"
        let specCitation = try NSRegularExpression(pattern:
            #"(?i)spec(?:ification)?(?:'s)?(?: tables \(| )(?:sections? |§ ?)([0-9]+(?:\.[0-9]+)?)(?:-([0-9]+))?"#)
        let cliCitation = try NSRegularExpression(pattern: #"docs/cli\.md,? sections? ([0-9]+)"#)
        var count = 0
        for file in try Self.citingFiles() {
            let text = try Documents.text(file)
            let range = NSRange(text.startIndex..., in: text)
            let citations = [(specCitation, spec, "docs/spec.md"), (cliCitation, cli, "docs/cli.md")]
            for (pattern, sections, document) in citations {
                for match in pattern.matches(in: text, range: range) {
                    count += 1
                    for group in 1..<match.numberOfRanges {
                        guard let found = Range(match.range(at: group), in: text) else { continue }
                        let number = String(text[found])
                        #expect(sections.contains(number),
                                "\(file) cites \(document) section \(number), which does not exist")
                    }
                }
            }
        }
        #expect(count > 60, "the scan finds the citations (\(count)), or it proves nothing")
    }

    @Test("docs/spec.md's rule catalogue lists every rule with its class and code")
    func catalogueMatchesCode() throws {
        let catalogue = try Self.section(try Documents.text("docs/spec.md"), from: "## 7.", to: "## 8.")
        for rule in RuleID.allCases {
            let row = try #require(catalogue.split(separator: "\n").first { $0.hasPrefix("| \(rule.rawValue) |") },
                                   "no catalogue row for \(rule)")
            let expected = rule.code.map { "| reject `\($0.rawValue)` |" } ?? "| warn |"
            #expect(row.hasSuffix(expected), "\(rule): \(row)")
        }
    }

    @Test("Every document that states Apple's retries says nine times over at most nine days")
    func retriesAgree() throws {
        let statement = try NSRegularExpression(
            pattern: #"(?i)(?:up to|retries?[^.]{0,40}?)\s+(\w+)\s+times\s+over\s+(?:at most|about|up to)?\s*"#
                + #"(\w+)\s+days"#)
        var count = 0
        for file in try Self.citingFiles() where file.hasSuffix(".md") || file.hasSuffix(".swift") {
            let text = try Documents.text(file)
            for match in statement.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                count += 1
                let times = String(text[Range(match.range(at: 1), in: text)!]).lowercased()
                let days = String(text[Range(match.range(at: 2), in: text)!]).lowercased()
                #expect(["nine", "9"].contains(times) && ["nine", "9"].contains(days),
                        "\(file): \(String(text[Range(match.range, in: text)!]))")
            }
        }
        #expect(count >= 3, "the scan finds the statements (\(count)), or it proves nothing")
    }

    @Test("--version states the contract version docs/cli.md has")
    func contractVersionAgrees() throws {
        let title = try #require(try Documents.text("docs/cli.md").split(separator: "\n").first)
        let version = try #require(title.firstRange(of: "(version ").map {
            title[$0.upperBound...].prefix { $0 != ")" }
        })
        #expect(HelpText.version.contains("(CLI contract version \(version), docs/cli.md)"))
    }
}
