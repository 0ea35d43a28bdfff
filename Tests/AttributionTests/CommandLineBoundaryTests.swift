import Foundation
import Testing

/// Issue 18 item 1, issue 34 item 2: the command line uses the library through its public API, one batch entry point
/// and its values. Every top-level `@_spi(CommandLine)` type of the library that the command line's sources name is
/// one that docs/design.md lists ("One line between the library and the command line"), and every one listed is such
/// a type the command line does name, so the document says exactly what crosses.
@Suite("The command line's side of the library")
struct CommandLineBoundaryTests {
    /// The Swift files under `directory` (a path from the package root), each with its comments left out.
    static func sources(_ directory: String) throws -> [(path: String, code: String)] {
        let root = TestPaths.packageRoot.appendingPathComponent(directory)
        let enumerator = try #require(FileManager.default.enumerator(atPath: root.path))
        return try enumerator.compactMap { $0 as? String }.filter { $0.hasSuffix(".swift") }.sorted().map { path in
            let text = String(decoding: try TestPaths.bytes(root.appendingPathComponent(path)), as: UTF8.self)
            let code = text.split(separator: "\n", omittingEmptySubsequences: false).map { line in
                // Comments only: a line's `//` that opens one (a URL in a string keeps the rest of its line).
                guard let range = line.range(of: "//"), !line[..<range.lowerBound].contains("\"") else {
                    return String(line)
                }
                return String(line[..<range.lowerBound])
            }.joined(separator: "\n")
            return (path, code)
        }
    }

    /// The names of the library's top-level `@_spi(CommandLine)` types (nested ones are named through them).
    static func libraryPackageTypes() throws -> Set<String> {
        let declaration = try NSRegularExpression(
            pattern: #"^(?:@\w+(?:\([^)]*\))?\s+)*@_spi\(CommandLine\)\s+(?:@\w+(?:\([^)]*\))?\s+)*public\s+"#
                + #"(?:final\s+)?"#
                + #"(?:struct|class|enum|protocol|actor|typealias)\s+(\w+)"#,
            options: [.anchorsMatchLines])
        var names: Set<String> = []
        for (_, code) in try sources("Sources/Attribution") {
            for match in declaration.matches(in: code, range: NSRange(code.startIndex..., in: code)) {
                names.insert(String(code[Range(match.range(at: 1), in: code)!]))
            }
        }
        return names
    }

    /// The `@_spi(CommandLine)` types docs/design.md lists as the command line's.
    static func listed() throws -> Set<String> {
        let design = try Documents.text("docs/design.md")
        let section = try Documents.section(
            design, from: "## One line between the library and the command line", to: "## ")
        let row = try NSRegularExpression(pattern: #"^\| `(\w+)` \|"#, options: [.anchorsMatchLines])
        return Set(row.matches(in: section, range: NSRange(section.startIndex..., in: section)).map {
            String(section[Range($0.range(at: 1), in: section)!])
        })
    }

    @Test("The command line names no SPI type of the library but the entry point and its values, as listed")
    func boundary() throws {
        let packageTypes = try Self.libraryPackageTypes()
        // The scan finds the library's types: not vacuous.
        #expect(packageTypes.isSuperset(
            of: ["BatchVerifier", "VerifiedBatch", "InputItem", "ByteCursor", "JSONValue"]))
        var named: [String: Set<String>] = [:]
        for (path, code) in try Self.sources("Sources/postback-verify") {
            for name in packageTypes where code.range(of: #"\b\#(name)\b"#, options: .regularExpression) != nil {
                named[name, default: []].insert(path)
            }
        }
        let listed = try Self.listed()
        #expect(listed.isSubset(of: packageTypes), "listed but not an SPI type: \(listed.subtracting(packageTypes))")
        let unlisted = Set(named.keys).subtracting(listed)
        #expect(unlisted.isEmpty,
                "named by the command line but not listed: \(unlisted.map { "\($0) in \(named[$0]!.sorted())" })")
        #expect(listed.subtracting(named.keys).isEmpty, "listed but not used: \(listed.subtracting(named.keys))")
        #expect(listed.contains("BatchVerifier"))
    }
}
