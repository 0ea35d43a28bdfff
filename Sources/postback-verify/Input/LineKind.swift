@_spi(CommandLine) import Attribution
/// How a line counts once its terminator is removed: skipped (blank or comment) or an item.
///
/// docs/cli.md section 2: blank means empty or only spaces and tabs; a comment's first non-blank byte is `#`.
enum LineKind: Sendable, Equatable {
    case blank
    case comment
    case item

    /// Classifies a whole line by its first byte that is not a space or a tab.
    init(of line: ByteCursor) {
        for byte in line where byte != LineKind.space && byte != LineKind.tab {
            self = byte == LineKind.hash ? .comment : .item
            return
        }
        self = .blank
    }

    static let space = UInt8(ascii: " ")
    static let tab = UInt8(ascii: "\t")
    static let hash = UInt8(ascii: "#")
    static let carriageReturn = UInt8(ascii: "\r")
    static let newline = UInt8(ascii: "\n")
}
