/// Finds where a run of "plain" JSON string content ends: printable ASCII (0x20-0x7E) other than the quote and the
/// backslash, the bytes a JSON string holds, and a record writes, as they are with nothing to check. (DEL is not
/// plain: output escapes it, see `TerminalText`.) Shared by ``StrictJSONParser`` and
/// ``FlatJSONScanner`` so both read string content the same way.
enum PlainJSONText {
    /// The index of the first byte at or after `start` that is not plain (a quote, a backslash, a control
    /// character, DEL or a byte of 0x80 and above), or `bytes.count`. Eight bytes at a time while they are all plain.
    ///
    /// Both loops read unchecked (``ByteCursor/word(uncheckedAt:)``, ``ByteCursor/subscript(unchecked:)``): the
    /// check before them, `bytes.checkBounds(start..<bytes.count)` in every build, proves `start` is not negative,
    /// and each loop's own condition (`index + 8 <= bytes.count`, `index < bytes.count`) bounds it above, with
    /// `index` only growing from `start`. Test: `StrictJSONParserTests.plainTextEndIsProvenInBounds`.
    @inline(__always)
    static func end(in bytes: ByteCursor, from start: Int) -> Int {
        bytes.checkBounds(start..<bytes.count)
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        var index = start
        while index + 8 <= bytes.count {
            let word = bytes.word(uncheckedAt: index)
            // A byte below 0x20, a quote (0x22) or a backslash (0x5C) has a zero after XOR or a borrow below 0x20;
            // DEL (0x7F) sets its top bit when 1 is added; a byte at or above 0x80 has its top bit set. Any of these
            // ends the fast steps (a carry or borrow between bytes only ever flags too much, never too little).
            let quotes = word ^ (ones &* 0x22)
            let backslashes = word ^ (ones &* 0x5C)
            let special = ((word &- ones &* 0x20) | (quotes &- ones) | (backslashes &- ones) | (word &+ ones) | word)
                & highs
            if special != 0 { break }
            index += 8
        }
        while index < bytes.count, isPlain(bytes[unchecked: index]) {
            index += 1
        }
        return index
    }

    @inline(__always)
    static func isPlain(_ byte: UInt8) -> Bool {
        byte >= 0x20 && byte < 0x7F && byte != UInt8(ascii: "\"") && byte != UInt8(ascii: "\\")
    }
}
