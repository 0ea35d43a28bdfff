/// The line on which each value of a JSON text starts, by its path (member names and array positions from the
/// top), so that a refusal of a value the parser accepted can name its line as well as its reason.
///
/// Only for texts ``StrictJSONParser`` accepted: it walks the grammar without checking it again. The parser's
/// depth limit bounds the recursion.
struct JSONTextLines {
    private var lines: [[String]: Int] = [:]
    private let bytes: [UInt8]
    private var index = 0
    private var line = 1

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
        value(path: [])
    }

    /// The line of the value at `path`, or of the nearest enclosing value whose line is known (1 at worst).
    func line(of path: [String]) -> Int {
        var path = path
        while true {
            if let line = lines[path] { return line }
            if path.isEmpty { return 1 }
            path.removeLast()
        }
    }

    /// The 1-based line of byte `offset` of `bytes`.
    static func line(ofByte offset: Int, in bytes: [UInt8]) -> Int {
        1 + bytes.prefix(max(0, offset)).count { $0 == UInt8(ascii: "\n") }
    }

    private mutating func skipSpace() {
        while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) {
            if bytes[index] == 0x0A { line += 1 }
            index += 1
        }
    }

    private mutating func value(path: [String]) {
        skipSpace()
        guard index < bytes.count else { return }
        lines[path] = line
        switch bytes[index] {
        case UInt8(ascii: "{"):
            index += 1
            skipSpace()
            while index < bytes.count, bytes[index] != UInt8(ascii: "}") {
                if bytes[index] == UInt8(ascii: ",") { index += 1; skipSpace() }
                let name = string()
                skipSpace()
                index += 1  // the colon
                value(path: path + [name])
                skipSpace()
            }
            index += 1
        case UInt8(ascii: "["):
            index += 1
            skipSpace()
            var position = 0
            while index < bytes.count, bytes[index] != UInt8(ascii: "]") {
                if bytes[index] == UInt8(ascii: ",") { index += 1; skipSpace() }
                value(path: path + [String(position)])
                position += 1
                skipSpace()
            }
            index += 1
        case UInt8(ascii: "\""):
            _ = string()
        default:
            while index < bytes.count,
                  ![UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]"), 0x20, 0x09, 0x0A, 0x0D]
                    .contains(bytes[index]) {
                index += 1
            }
        }
    }

    /// A string's raw text between its quotes (a name with escapes keeps them: its path then names no value, and
    /// the enclosing value's line is used).
    private mutating func string() -> String {
        index += 1
        let start = index
        while index < bytes.count, bytes[index] != UInt8(ascii: "\"") {
            index += bytes[index] == UInt8(ascii: "\\") ? 2 : 1
        }
        let text = String(decoding: bytes[start..<min(index, bytes.count)], as: UTF8.self)
        index += 1
        return text
    }
}
