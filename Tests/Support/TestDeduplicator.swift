import Foundation
@_spi(CommandLine) @_spi(Servers) @_spi(Stores) @testable import Attribution

/// Rule D1 one result at a time, as the command line applies it without `--state`: through the one store protocol
/// (a ``MemoryDeduplicationStore``), each sighting claimed and confirmed at once.
struct TestDeduplicator {
    let store = MemoryDeduplicationStore()
    /// Stamped on every first occurrence; nil: references carry no time (as the CLI without a state).
    let runStarted: Date?

    init(runStarted: Date? = nil) {
        self.runStarted = runStarted
    }

    /// How many distinct valid postbacks were seen.
    var count: Int { store.count }

    /// Applies D1 (and D2) to `result`, the item at `source`:`line`.
    func apply(to result: inout VerificationResult, source: String, line: Int) {
        guard let sighting = PostbackSighting(result, source: source, line: line) else { return }
        let answer = try! store.claimAndConfirm(sighting, at: runStarted ?? Date())
        if let first = answer.duplicateOf {
            result.markDuplicate(of: runStarted == nil ? first.withoutTime : first, content: sighting.content)
        }
    }
}
