@_spi(CommandLine) import Attribution
@_spi(CommandLine) import AttributionStores

/// `--state PATH|URL` and `--archive PATH`, which every command reading a receiver's stored postbacks takes
/// (`export`, `outbox`): one reading of both, so their checks and messages cannot drift apart.
enum ArchiveOptions {
    /// Reads `name` into `state` or `archivePath` when it is one of the two options; false for any other option.
    static func parse(_ name: String, state: inout StateLocation?, archivePath: inout String?,
                      value: () throws(UsageError) -> String) throws(UsageError) -> Bool {
        switch name {
        case "--state":
            guard state == nil else { throw UsageError("--state given twice") }
            let text = try value()
            state = try UsageError.wrapping { () throws(AttributionError) in try StateLocation(text) }
        case "--archive":
            guard archivePath == nil else { throw UsageError("--archive given twice") }
            let path = try value()
            guard !path.isEmpty else { throw UsageError("--archive needs a file path") }
            archivePath = path
        default:
            return false
        }
        return true
    }
}
