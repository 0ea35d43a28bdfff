@_spi(CommandLine) import Attribution
/// A JSON document printed over several lines whose first member shares the opening line (`{"jws-string": ...,`),
/// as some printers and hand edits leave it: not joined into one item, because only a lone `{` opens a
/// ``PrintedDocument``, yet each of its lines gets a record naming the remedy instead of a parse error per line.
///
/// Each line stays one item (docs/cli.md section 2), and only lines that can never be a valid item on their own
/// are taken for the document, so no genuine item's verdict is replaced:
/// - the opening line starts with `{` (after spaces and tabs) and does not end with `}`: a JSON object that is
///   cut short, never a whole item;
/// - each following line that is empty, or starts with a space or a tab and then with anything but `{`, belongs to
///   it (an indented JWS is malformed anyway; an indented `{...}` may be a whole item, so it ends the document);
/// - a line starting with `}` belongs to it and closes it;
/// - any other line ends it and is read as usual.
/// Until a second line belongs to it, the opening line is held (at most the item cap): a line cut short followed by
/// an ordinary item is one item as before, with its own parse error.
struct UnjoinedDocument {
    /// The opening line's number, which every record of the document names.
    let line: Int
    /// The opening line's bytes while no other line has joined it; nil once its record was emitted.
    private var opening: [UInt8]?

    init(line: Int, opening: ByteCursor) {
        self.line = line
        self.opening = Array(opening)
    }

    /// Whether `line` (held, at most the item cap) opens such a document. Every line read goes through here, so
    /// the usual ones leave at once: a whole JSON object by its last byte, a token by its first.
    static func opens(_ line: ByteCursor) -> Bool {
        var end = line.endIndex
        while end > 0 && (line[end - 1] == LineKind.space || line[end - 1] == LineKind.tab) {
            end -= 1
        }
        guard end > 0, line[end - 1] != UInt8(ascii: "}") else {
            return false
        }
        var start = 0
        while start < end && (line[start] == LineKind.space || line[start] == LineKind.tab) {
            start += 1
        }
        return end - start > 1 && line[start] == UInt8(ascii: "{")
    }

    /// Whether `line` belongs to the open document: see the type's rule.
    static func continues(_ line: ByteCursor) -> Bool {
        guard let first = line.first else {
            return true
        }
        if PrintedDocument.closes(first: first) {
            return true
        }
        guard first == LineKind.space || first == LineKind.tab else {
            return false
        }
        return line.first { $0 != LineKind.space && $0 != LineKind.tab } != UInt8(ascii: "{")
    }

    /// Adds a line that belongs to the document. An item line gets a record naming the remedy, after the opening
    /// line's if that was still held; a blank line or a comment gives none, as everywhere, and proves nothing, so
    /// the opening line stays held.
    mutating func append(_ line: ByteCursor, number: Int, reason: String, into batch: inout ItemBatch) {
        guard LineKind(of: line) == .item else {
            return
        }
        if opening != nil {
            batch.appendRefused(line: self.line, reason: reason)
            opening = nil
        }
        batch.appendRefused(line: number, reason: reason)
    }

    /// Ends the document: an opening line no other line joined is one ordinary item, verified as it stands.
    func end(into batch: inout ItemBatch) {
        if let opening {
            ByteCursor.over(opening) { batch.append(line: line, bytes: $0) }
        }
    }
}
