import Foundation
import Testing

/// Receiver/README.md's option table and `postback-receiver --help` name the same options, as the command line's
/// README, docs/cli.md and `--help` are held to its parser (the root package's DocumentationConsistencyTests).
/// Through the built binary: `swift build --package-path Receiver --build-tests` builds it beside this bundle.
@Suite("Receiver documentation agrees with the binary")
struct ReceiverDocumentationTests {
    /// The package's directory (Receiver/), from this file's path.
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    static func binary() throws -> URL {
        let candidates = [
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent(),
            Bundle.main.bundleURL,
            Bundle.main.bundleURL.deletingLastPathComponent(),
            packageRoot.appendingPathComponent(".build/debug"),
        ].map { $0.appendingPathComponent("postback-receiver") }
        return try #require(candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) },
                            "build the receiver first (swift build --package-path Receiver --build-tests)")
    }

    /// Every option-looking token (`--name`) in a text.
    static func optionTokens(_ text: some StringProtocol) -> Set<String> {
        let pattern = try! NSRegularExpression(pattern: #"(?<![\w-])(--[a-z][a-z0-9-]*[a-z0-9])(?![\w-])"#)
        let text = String(text)
        let range = NSRange(text.startIndex..., in: text)
        return Set(pattern.matches(in: text, range: range).map { String(text[Range($0.range, in: text)!]) })
    }

    /// The README's `## Options` section, up to the next `## ` heading.
    static func readmeOptions() throws -> Substring {
        let readme = try String(contentsOf: packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
        let start = try #require(readme.range(of: "\n## Options\n"))
        let end = readme[start.upperBound...].range(of: "\n## ")?.lowerBound ?? readme.endIndex
        return readme[start.upperBound..<end]
    }

    /// What `--help` prints on standard output.
    static func help() throws -> String {
        let process = Process()
        process.executableURL = try binary()
        process.arguments = ["--help"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        return text
    }

    @Test("Every option --help lists is in Receiver/README.md's option table, and nothing else is")
    func optionTablesAgree() throws {
        let help = try Self.help()
        let options = try #require(help.range(of: "OPTIONS:"), "--help has an OPTIONS section")
        let listed = Self.optionTokens(help[options.upperBound...]).subtracting(["--help"])
        let documented = Self.optionTokens(try Self.readmeOptions()).subtracting(["--help"])
        #expect(listed.count > 10, "\(listed.sorted())")
        #expect(listed.subtracting(documented).isEmpty,
                "in --help, not in the README's table: \(listed.subtracting(documented).sorted())")
        #expect(documented.subtracting(listed).isEmpty,
                "in the README's table, not in --help: \(documented.subtracting(listed).sorted())")
    }
}
