import Foundation
import Testing

/// The repository's documents as text, for the tests that hold them to the code.
enum Documents {
    static func text(_ path: String) throws -> String {
        String(decoding: try TestPaths.bytes(TestPaths.packageRoot.appendingPathComponent(path)), as: UTF8.self)
    }

    /// The lines of `text` from the line starting with `start` up to (not including) the next starting with `end`.
    static func section(_ text: String, from start: String, to end: String) throws -> String {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        let first = try #require(lines.firstIndex { $0.hasPrefix(start) }, "no line starts with \(start)")
        let last = lines[(first + 1)...].firstIndex { $0.hasPrefix(end) } ?? lines.endIndex
        return lines[first..<last].joined(separator: "\n")
    }
}
