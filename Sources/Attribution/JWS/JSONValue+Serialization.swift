extension JSONValue {
    /// The value as compact RFC 8259 text: no whitespace, members in stored order, numbers as their literal.
    ///
    /// Strings escape only what RFC 8259 section 7 requires (`"`, `\`, controls below U+0020); everything else is
    /// written as UTF-8, so `StrictJSONParser` reads the text back to an equal value.
    public var jsonText: String {
        var output: [UInt8] = []
        write(into: &output)
        return String(decoding: output, as: UTF8.self)
    }

    /// The string as a JSON string literal, quotes included (e.g. for naming a member in a message).
    @_spi(CommandLine) @_spi(Stores) public static func quoted(_ string: String) -> String {
        var output: [UInt8] = []
        writeQuoted(string, into: &output)
        return String(decoding: output, as: UTF8.self)
    }

    /// Appends the compact JSON text of this value to `output` (what ``jsonText`` returns, without a `String`).
    func appendJSON(to output: inout [UInt8]) {
        write(into: &output)
    }

    /// Appends `members`, in their order, as one compact JSON object to `output`: the writer of lines built from a
    /// fixed list of members (an export line, a manifest line), so each need not restate the object's syntax.
    @_spi(Stores) public static func appendObject(_ members: [(String, JSONValue)], to output: inout [UInt8]) {
        output.append(UInt8(ascii: "{"))
        for (position, (name, value)) in members.enumerated() {
            if position > 0 { output.append(UInt8(ascii: ",")) }
            writeQuoted(name, into: &output)
            output.append(UInt8(ascii: ":"))
            value.write(into: &output)
        }
        output.append(UInt8(ascii: "}"))
    }

    /// Appends `string` as a JSON string literal, quotes included, to `output`.
    @_spi(CommandLine) public static func appendQuoted(_ string: String, to output: inout [UInt8]) {
        writeQuoted(string, into: &output)
    }

    private func write(into output: inout [UInt8]) {
        switch self {
        case .null:
            output.append(contentsOf: "null".utf8)
        case .bool(let bool):
            output.append(contentsOf: (bool ? "true" : "false").utf8)
        case .number(let number):
            output.append(contentsOf: number.literal.utf8)
        case .string(let string):
            Self.writeQuoted(string, into: &output)
        case .array(let elements):
            output.append(UInt8(ascii: "["))
            for (position, element) in elements.enumerated() {
                if position > 0 {
                    output.append(UInt8(ascii: ","))
                }
                element.write(into: &output)
            }
            output.append(UInt8(ascii: "]"))
        case .object(let object):
            output.append(UInt8(ascii: "{"))
            for (position, member) in object.members.enumerated() {
                if position > 0 {
                    output.append(UInt8(ascii: ","))
                }
                Self.writeQuoted(member.name, into: &output)
                output.append(UInt8(ascii: ":"))
                member.value.write(into: &output)
            }
            output.append(UInt8(ascii: "}"))
        }
    }

    private static func writeQuoted(_ string: String, into output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        ByteCursor.overUTF8(string) { bytes in
            // Copy runs that need no escaping in one go; most strings are one run. Plain ASCII is skipped eight
            // bytes at a time; the byte loop below only starts at the first other byte.
            var runStart = 0
            for index in PlainJSONText.end(in: bytes, from: 0)..<bytes.count {
                let byte = bytes[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte >= 0x7F,
                      index >= runStart else { continue }
                if byte >= 0x7F {
                    // DEL, or the lead byte of a scalar a terminal must not get raw (TerminalText); other
                    // non-ASCII scalars and continuation bytes stay in the run as UTF-8.
                    guard let (scalar, length) = terminalUnsafeScalar(in: bytes, at: index) else { continue }
                    bytes.append(runStart..<index, to: &output)
                    appendEscape(scalar, to: &output)
                    runStart = index + length
                    continue
                }
                bytes.append(runStart..<index, to: &output)
                appendEscape(byte, to: &output)
                runStart = index + 1
            }
            bytes.append(runStart..<bytes.count, to: &output)
        }
        output.append(UInt8(ascii: "\""))
    }

    /// The scalar starting at `index` of valid UTF-8 and its length in bytes, when `TerminalText` must escape it.
    private static func terminalUnsafeScalar(
        in bytes: ByteCursor, at index: Int
    ) -> (Unicode.Scalar, Int)? {
        let lead = bytes[index]
        let length: Int
        var value: UInt32
        switch lead {
        case 0x7F: return (Unicode.Scalar(lead), 1)
        case 0xC0...0xDF: (length, value) = (2, UInt32(lead & 0x1F))
        case 0xE0...0xEF: (length, value) = (3, UInt32(lead & 0x0F))
        case 0xF0...0xF7: (length, value) = (4, UInt32(lead & 0x07))
        default: return nil  // a continuation byte
        }
        guard index + length <= bytes.count else { return nil }
        for offset in 1..<length {
            value = value << 6 | UInt32(bytes[index + offset] & 0x3F)
        }
        guard let scalar = Unicode.Scalar(value), TerminalText.mustEscape(scalar) else { return nil }
        return (scalar, length)
    }

    /// `\uXXXX` for a scalar (a UTF-16 surrogate pair above U+FFFF), as RFC 8259 section 7 allows for any one.
    private static func appendEscape(_ scalar: Unicode.Scalar, to output: inout [UInt8]) {
        for unit in String(scalar).utf16 {
            output.append(contentsOf: #"\u"#.utf8)
            for shift in stride(from: 12, through: 0, by: -4) {
                output.append(hexDigit(UInt8(truncatingIfNeeded: unit >> UInt16(shift)) & 0x0F))
            }
        }
    }

    /// The lowercase hex digit of a value below 16.
    private static func hexDigit(_ value: UInt8) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "a") + value - 10
    }

    /// The RFC 8259 section 7 escape of one byte that must not appear raw in a string.
    private static func appendEscape(_ byte: UInt8, to output: inout [UInt8]) {
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"):
            output.append(UInt8(ascii: "\\"))
            output.append(byte)
        case 0x0A:
            output.append(contentsOf: #"\n"#.utf8)
        case 0x0D:
            output.append(contentsOf: #"\r"#.utf8)
        case 0x09:
            output.append(contentsOf: #"\t"#.utf8)
        case 0x08:
            output.append(contentsOf: #"\b"#.utf8)
        case 0x0C:
            output.append(contentsOf: #"\f"#.utf8)
        default:
            output.append(contentsOf: #"\u00"#.utf8)
            output.append(hexDigit(byte >> 4))
            output.append(hexDigit(byte & 0x0F))
        }
    }
}
