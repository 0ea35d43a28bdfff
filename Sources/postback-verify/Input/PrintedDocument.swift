@_spi(CommandLine) import Attribution
/// A JSON document printed over several lines, the way Apple's pages print postbacks, being joined into one item.
/// Standard input only: in files, `*.json` is already one item and every other file is one item per line.
///
/// The rule, which never joins a line that is an item of its own:
/// - a line that is exactly `{` (spaces and tabs around it allowed) opens a document;
/// - each following line that is empty or starts with a space or a tab (the indented members) belongs to it;
/// - a line that starts with `}` closes it: the lines from `{` to `}` are one item, numbered by the `{` line;
/// - any other line (a JSON Lines item starts with `{"`, a comment with `#`, neither with a blank) ends the document
///   where it stands, as one item (invalid, so nothing is lost and nothing is swallowed), and is read as usual;
/// - so does the end of input.
/// Line lengths do not change the rule: a member line over the item cap makes the document one item over the cap.
///
/// A document over the item cap stops being held and is counted, like a long line.
struct PrintedDocument {
    let line: Int
    private var bytes: [UInt8]
    private var byteCount: Int
    private let maximumItemBytes: Int

    init(line: Int, opening: ByteCursor, maximumItemBytes: Int) {
        self.line = line
        self.bytes = Array(opening)
        self.byteCount = opening.count
        self.maximumItemBytes = maximumItemBytes
    }

    static func opens(_ line: ByteCursor) -> Bool {
        var braces = 0
        for byte in line where byte != LineKind.space && byte != LineKind.tab {
            guard byte == UInt8(ascii: "{") else { return false }
            braces += 1
        }
        return braces == 1
    }

    /// Whether a line starting with `first` (nil: an empty line) belongs to an open document.
    static func continues(first: UInt8?) -> Bool {
        guard let first else { return true }
        return first == LineKind.space || first == LineKind.tab
    }

    /// Whether a line starting with `first` closes an open document.
    static func closes(first: UInt8?) -> Bool {
        first == UInt8(ascii: "}")
    }

    /// Adds a line (with the line feed that separated it from the previous one).
    mutating func append(_ line: ByteCursor) {
        byteCount += 1 + line.count
        guard byteCount <= maximumItemBytes else {
            bytes = []
            return
        }
        bytes.append(LineKind.newline)
        bytes.append(contentsOf: line)
    }

    /// Adds a line over the item cap, which was counted rather than held: the document is then over the cap too.
    mutating func appendOversized(byteCount lineByteCount: Int) {
        byteCount += 1 + lineByteCount
        bytes = []
    }

    /// The document as one item: its bytes, or only its size past the cap.
    func emit(into batch: inout ItemBatch) {
        if byteCount > maximumItemBytes {
            batch.appendOversized(line: line, byteCount: byteCount)
        } else {
            ByteCursor.over(bytes) { batch.append(line: line, bytes: $0) }
        }
    }
}
