import Foundation

/// Where the package and its test data are, found from this file's path so tests run from any working directory:
/// the nearest folder above `<root>/Tests/Support/TestPaths.swift` that holds `Package.swift` (each test target
/// compiles this file through its own `Support` link to `Tests/Support`, so the depth is not fixed). External
/// reference data (Apple's and RFC 7515's vectors, Wycheproof, JSONTestSuite) lives in
/// `Tests/AttributionTests/Vectors/`, each folder with its licence and provenance; nothing is read from outside the
/// repository.
enum TestPaths {
    static let packageRoot: URL = {
        var directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        while directory.path != "/" {
            if FileManager.default.fileExists(atPath: directory.appendingPathComponent("Package.swift").path) {
                return directory
            }
            directory.deleteLastPathComponent()
        }
        fatalError("no Package.swift above \(#filePath)")
    }()
    static let vectors = packageRoot.appendingPathComponent("Tests/AttributionTests/Vectors")
    static let fixtures = packageRoot.appendingPathComponent("Fixtures")

    /// A file under `Tests/AttributionTests/Vectors/`, e.g. `reference/apple/impression-example.jws`.
    static func vector(_ relativePath: String) -> URL {
        vectors.appendingPathComponent(relativePath)
    }

    static func bytes(_ url: URL) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: url))
    }
}
