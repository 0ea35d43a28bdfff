/// One item of input: a line of a line-oriented source, or a whole `.json` file, with where it came from.
///
/// Records are keyed by `source` and `line` (docs/cli.md section 3), so both travel with the bytes.
@_spi(CommandLine) public struct InputItem: Sendable {
    /// The path as given on the command line or derived from a directory, or `-` for standard input.
    @_spi(CommandLine) @_spi(Stores) public let source: String
    /// The 1-based line where the item stands; `1` for a whole `.json` file.
    @_spi(CommandLine) @_spi(Stores) public let line: Int
    /// The item's bytes, or only their count when the item is over the size cap.
    @_spi(CommandLine) @_spi(Stores) public let content: Content

    /// Creates an item from its source, line and content.
    @_spi(CommandLine) public init(source: String, line: Int, content: Content) {
        self.source = source
        self.line = line
        self.content = content
    }
}

extension InputItem: Hashable {}

extension InputItem {
    /// What an item holds: its bytes, or, past the size cap, only how many there were.
    ///
    /// Bytes stay bytes: NUL and invalid UTF-8 reach the decoders untouched, which reject them with a reason.
    @_spi(CommandLine) public enum Content: Sendable, Hashable {
        /// An input, or part of one, that the reader recognised as not what the command reads (a compressed or
        /// binary file, JSON Lines in a `*.json` file, a printed document in a file read line by line): one
        /// item, rejected (J1) with `reason`, which says what it looks like and what to do.
        case refused(reason: String)
        /// The item's bytes with the line terminator (`\n` or `\r\n`) removed.
        ///
        /// The items of a batch slice one shared array, so indices start at `startIndex`, not at 0.
        case bytes(ArraySlice<UInt8>)
        /// An item over the cap, read past without being held in memory (CLI contract, "Guarantees").
        case oversized(byteCount: Int)

        /// The bytes held in memory: the item's, or none for an oversized or refused item.
        @_spi(CommandLine) public var storedByteCount: Int {
            switch self {
            case .bytes(let bytes): bytes.count
            case .oversized, .refused: 0
            }
        }
    }
}
