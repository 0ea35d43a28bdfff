import Foundation
@_spi(CommandLine) @_spi(Servers) @_spi(Stores) @testable import Attribution

/// A sighting of a key, and the Monday the store tests claim it on.
enum TestSighting {
    static func sighting(_ key: String, _ source: String = "request", _ line: Int = 1,
                         content: ContentFingerprint? = nil) -> PostbackSighting {
        PostbackSighting(key: ExactString(key), source: source, line: line, content: content)
    }

    static let monday = Date(timeIntervalSince1970: 1_795_305_600.25)
}
