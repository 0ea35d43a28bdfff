@_spi(CommandLine) import Attribution

/// What an input's bytes say it is when it is not what the command reads, and the one line that tells the user
/// what to do: a compressed or archive file, a binary file, JSON Lines in a `*.json` file, a printed document in a
/// file read line by line (docs/cli.md section 2, "Inputs that are not what their name says").
///
/// Each such input, or each printed document, becomes ONE invalid item (J1, `malformed-input`) whose message is
/// the line below, instead of one invalid item per line that would bury the remedy: the one-record-per-item rule
/// holds because the input is read as that one item.
enum InputShape {
    /// Compression and archive formats by their magic number, and the command that gives their text back.
    private static let compressed: [(magic: [UInt8], name: String, decompress: String)] = [
        ([0x1F, 0x8B], "gzip-compressed", "gzip -dc"),
        ([0x28, 0xB5, 0x2F, 0xFD], "zstd-compressed", "zstd -dc"),
        ([0xFD, 0x37, 0x7A, 0x58, 0x5A, 0x00], "xz-compressed", "xz -dc"),
        ([0x42, 0x5A, 0x68], "bzip2-compressed", "bzip2 -dc"),  // "BZh": followed by a block size digit
        ([0x04, 0x22, 0x4D, 0x18], "lz4-compressed", "lz4 -dc"),
        ([0x50, 0x4B, 0x03, 0x04], "a zip archive", "unzip -p"),
        ([0x37, 0x7A, 0xBC, 0xAF, 0x27, 0x1C], "a 7z archive", "7z x -so"),
    ]

    /// The message for an input whose first bytes are a compressed or archive format, or (a regular file only)
    /// binary data; nil for anything else. `first` is what the first read gave.
    static func refusal(first: ByteCursor, isStandardInput: Bool, isRegularFile: Bool) -> String? {
        let what = isStandardInput ? "standard input" : "the file"
        for format in compressed where first.starts(with: format.magic) {
            if format.magic == [0x42, 0x5A, 0x68] {
                guard first.count > 3, (UInt8(ascii: "1")...UInt8(ascii: "9")).contains(first[3]) else { continue }
            }
            let command = isStandardInput
                ? "... | \(format.decompress) | postback-verify" : "\(format.decompress) FILE | postback-verify"
            return "\(what) is \(format.name), not text: decompress it first (\(command))"
        }
        guard isRegularFile, looksBinary(first) else {
            return nil
        }
        return "\(what) is binary (NUL bytes, and no line starts like a postback body or a JWS): give postback "
            + "bodies, JWS tokens or SKAdNetwork bodies as text, one per line"
    }

    /// Binary, not a text file with a damaged line: a NUL byte in the first line, and no line of the first block
    /// starts as an item could (`{` after any spaces or tabs, or `ey`, the base64url of a header's `{`), so a text
    /// file whose first line was zeroed still has its other lines read one by one.
    private static func looksBinary(_ bytes: ByteCursor) -> Bool {
        let firstLineEnd = bytes.firstIndex(of: LineKind.newline) ?? bytes.endIndex
        guard bytes[..<firstLineEnd].contains(0) else {
            return false
        }
        var lineStart = bytes.startIndex
        while lineStart < bytes.endIndex {
            let line = bytes[lineStart...]
            let text = line.drop { $0 == LineKind.space || $0 == LineKind.tab }
            if text.first == UInt8(ascii: "{") || line.starts(with: Array("ey".utf8)) {
                return false
            }
            guard let newline = line.firstIndex(of: LineKind.newline) else { break }
            lineStart = newline + 1
        }
        return true
    }

    /// For a `*.json` file (one document): the message when its bytes are JSON Lines instead, two or more lines
    /// each holding a JSON object (a line ending in `}` followed by one starting with `{`, which a single
    /// document, printed or not, never has at the start of a line); nil otherwise. `isWhole` is false when only
    /// the file's first bytes were read (the file is over the item cap).
    static func jsonLinesRefusal(_ bytes: ByteCursor, isWhole: Bool) -> String? {
        var objectLines = 0
        var separated = false
        var previousEndsObject = false
        var lineStart = bytes.startIndex
        while lineStart < bytes.endIndex {
            let newline = bytes[lineStart...].firstIndex(of: LineKind.newline)
            var lineEnd = newline ?? bytes.endIndex
            if lineEnd > lineStart && bytes[lineEnd - 1] == LineKind.carriageReturn { lineEnd -= 1 }
            let line = bytes[lineStart..<lineEnd]
            if line.first == UInt8(ascii: "{") {
                objectLines += 1
                if previousEndsObject { separated = true }
            }
            previousEndsObject = line.last == UInt8(ascii: "}")
            guard let newline else { break }
            lineStart = newline + 1
        }
        guard separated, objectLines >= 2 else {
            return nil
        }
        let count = isWhole ? "\(objectLines)" : "at least \(objectLines)"
        return "the file holds JSON Lines (\(count) lines that each start a JSON object), but a *.json file is one "
            + "document: rename it *.jsonl, or pipe it (postback-verify < FILE), so that each line is an item"
    }

    /// The message for each line of a JSON document printed over several lines with its first member on the `{`
    /// line (``UnjoinedDocument``), whose lines are read as items of their own.
    static func unjoinedDocumentRefusal(firstLine: Int, isStandardInput: Bool) -> String {
        let what = "line \(firstLine) starts a JSON document printed over several lines with its first member on "
            + "the { line"
        guard isStandardInput else {
            return what + ", but this file is read one item per line: name it *.json (one document per file), or "
                + "give each body on one line (jq -c . FILE)"
        }
        return what + "; only a lone { line starts a document read as one item, so each of its lines is read as "
            + "an item of its own: give each body on one line (jq -c . FILE | postback-verify), or as a *.json "
            + "file (postback-verify FILE.json)"
    }

    /// The message for a JSON document printed over several lines in a file that is read one item per line.
    static func printedDocumentRefusal(firstLine: Int, lastLine: Int) -> String {
        "lines \(firstLine)-\(lastLine) hold one JSON document printed over several lines, but this file is read "
            + "one item per line: name it *.json (one document per file), or pipe it (postback-verify < FILE)"
    }
}
