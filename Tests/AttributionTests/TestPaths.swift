import Foundation

/// Where the package and the shared reference material are, found from this file's path so tests run from any
/// working directory: `<root>/Tests/AttributionTests/TestPaths.swift`, with `../shared` beside `<root>`.
enum TestPaths {
    static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let shared = packageRoot.deletingLastPathComponent().appendingPathComponent("shared")
    static let fixtures = packageRoot.appendingPathComponent("Fixtures")

    static func sharedFile(_ relativePath: String) -> URL {
        shared.appendingPathComponent(relativePath)
    }

    static func bytes(_ url: URL) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: url))
    }
}
