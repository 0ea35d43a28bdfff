/// A strict RFC 8259 parser for untrusted JSON texts: the JWS header and payload, postback and SKAdNetwork bodies.
///
/// Beyond the grammar it refuses what lets two parsers read one text differently: a byte order mark, invalid
/// UTF-8, unpaired surrogate escapes, duplicate member names (by default) and nesting deeper than a limit
/// (spec section 2, rule J1). Numbers are kept as their literal text (`JSONNumber`) and objects keep their
/// members in received order. It never recurses, so no input can exhaust the stack while parsing, and it builds
/// at most ``Options/valueBudget`` values (by default 64 plus one per 16 bytes of the text), so no shape of input
/// can make a tree much larger than the text itself.
@_spi(Stores) public struct StrictJSONParser {
    private let bytes: ByteCursor
    private let options: Options
    private var index = 0
    /// Values the text may still hold (``Options/valueBudget``).
    private var valuesLeft: Int
    /// Reused to unescape strings that contain backslashes.
    private var unescaped: [UInt8] = []

    private init(bytes: ByteCursor, options: Options) {
        self.bytes = bytes
        self.options = options
        valuesLeft = options.valueBudget?.limit(forTextBytes: bytes.count) ?? .max
    }

    /// Parses one JSON text (any value at the top level), throwing `malformed-input` (J1) for anything not
    /// strictly RFC 8259 or breaking `options`.
    ///
    /// Arrays, slices and buffers are read in place; other collections are copied once.
    @_spi(CommandLine) @_spi(Stores) public static func parse(
        _ bytes: some Collection<UInt8>, options: Options = .init()
    ) throws(AttributionError) -> JSONValue {
        try ByteCursor.over(bytes) { (cursor) throws(AttributionError) -> JSONValue in
            var parser = StrictJSONParser(bytes: cursor, options: options)
            return try parser.parseText()
        }
    }
}

extension StrictJSONParser {
    /// An array or object still open, with what has been read of it.
    private struct Frame {
        var isObject: Bool
        var elements: [JSONValue] = []
        var members: [JSONObject.Member] = []
        /// The name read before the value now being parsed (objects only).
        var pendingName = ""
        /// Names seen so far, once the object is too large for a linear duplicate search.
        var nameIndex: Set<String>?

        /// An open object or array. A top-level object (a postback body, payload or header: about a dozen members)
        /// gets room for a typical object's members, so filling it takes one allocation instead of one per
        /// doubling; nested containers grow as they fill, so that `[[0],[0],...]` costs a small allocation per
        /// `[0]`, not room for sixteen values each.
        init(isObject: Bool, pendingName: String = "", isTopLevel: Bool) {
            self.isObject = isObject
            self.pendingName = pendingName
            if isObject && isTopLevel {
                members.reserveCapacity(Self.initialCapacity)
            }
        }

        static let initialCapacity = 16
    }

    /// Objects up to this many members are searched linearly for duplicates; larger ones get a hash index.
    private static let linearSearchLimit = 16

    private static let quote = UInt8(ascii: "\"")
    private static let backslash = UInt8(ascii: "\\")

    private mutating func parseText() throws(AttributionError) -> JSONValue {
        if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF {
            throw .malformed("JSON text starts with a byte order mark (RFC 8259 section 8.1 forbids one)")
        }
        skipWhitespace()
        guard index < bytes.count else {
            throw .malformed(bytes.isEmpty ? "empty JSON text" : "JSON text holds only whitespace")
        }
        // An explicit stack instead of recursion: depth is bounded by `maximumDepth`, never by the thread's stack.
        var stack: [Frame] = []
        stack.reserveCapacity(4)
        var value: JSONValue
        parsing: while true {
            guard index < bytes.count else {
                throw .malformed("JSON text ends where a value was expected at byte \(index)")
            }
            valuesLeft -= 1
            guard valuesLeft >= 0 else {
                throw overBudget()
            }
            switch bytes[index] {
            case UInt8(ascii: "{"):
                try checkDepth(stack.count + 1)
                index += 1
                skipWhitespace()
                if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
                    index += 1
                    value = .object(JSONObject(members: []))
                } else {
                    let name = try parseMemberName()
                    stack.append(Frame(isObject: true, pendingName: name, isTopLevel: stack.isEmpty))
                    continue parsing
                }
            case UInt8(ascii: "["):
                try checkDepth(stack.count + 1)
                index += 1
                skipWhitespace()
                if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
                    index += 1
                    value = .array([])
                } else {
                    stack.append(Frame(isObject: false, isTopLevel: stack.isEmpty))
                    continue parsing
                }
            case Self.quote:
                value = .string(try parseString())
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                value = .number(try parseNumber())
            case UInt8(ascii: "t"):
                try expectLiteral("true")
                value = .bool(true)
            case UInt8(ascii: "f"):
                try expectLiteral("false")
                value = .bool(false)
            case UInt8(ascii: "n"):
                try expectLiteral("null")
                value = .null
            default:
                throw unexpectedByte(expecting: "a value")
            }

            // A value is complete: add it to the open container, closing every container that ends here.
            while true {
                skipWhitespace()
                guard let top = stack.indices.last else {
                    break parsing
                }
                guard index < bytes.count else {
                    let container = stack[top].isObject ? "an object" : "an array"
                    throw .malformed("JSON text ends inside \(container) at byte \(index)")
                }
                let byte = bytes[index]
                if stack[top].isObject {
                    let member = JSONObject.Member(name: stack[top].pendingName, value: value)
                    stack[top].members.append(member)
                    if byte == UInt8(ascii: ",") {
                        index += 1
                        skipWhitespace()
                        let nameStart = index
                        let name = try parseMemberName()
                        if options.rejectsDuplicateMembers {
                            try checkUnique(name, in: &stack[top], at: nameStart)
                        }
                        stack[top].pendingName = name
                        continue parsing
                    } else if byte == UInt8(ascii: "}") {
                        index += 1
                        value = .object(JSONObject(members: stack.removeLast().members))
                    } else {
                        throw unexpectedByte(expecting: "',' or '}' after an object member")
                    }
                } else {
                    stack[top].elements.append(value)
                    if byte == UInt8(ascii: ",") {
                        index += 1
                        skipWhitespace()
                        continue parsing
                    } else if byte == UInt8(ascii: "]") {
                        index += 1
                        value = .array(stack.removeLast().elements)
                    } else {
                        throw unexpectedByte(expecting: "',' or ']' after an array element")
                    }
                }
            }
        }
        guard index == bytes.count else {
            throw unexpectedByte(expecting: "the end of the JSON text")
        }
        return value
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D:
                index += 1
            default:
                return
            }
        }
    }

    private func checkDepth(_ depth: Int) throws(AttributionError) {
        guard depth <= options.maximumDepth else {
            throw .malformed("nesting deeper than \(options.maximumDepth) at byte \(index)")
        }
    }

    /// Reads `"name"` and the `:` after it, leaving the index at the member's value.
    private mutating func parseMemberName() throws(AttributionError) -> String {
        guard index < bytes.count, bytes[index] == Self.quote else {
            throw unexpectedByte(expecting: "a member name")
        }
        let name = try parseString()
        skipWhitespace()
        guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else {
            throw unexpectedByte(expecting: "':' after a member name")
        }
        index += 1
        skipWhitespace()
        return name
    }

    /// Refuses a name already used in this object, comparing scalars exactly rather than by Swift's
    /// canonical equivalence, so `"é"` and `"e\u0301"` stay two names as they are two names to other parsers.
    private func checkUnique(_ name: String, in frame: inout Frame, at position: Int) throws(AttributionError) {
        var mayRepeat = true
        if frame.nameIndex == nil, frame.members.count >= Self.linearSearchLimit {
            frame.nameIndex = Set(frame.members.map(\.name))
        }
        if frame.nameIndex != nil {
            // String hashing follows canonical equivalence, so exact equality implies a hit; a hit is then confirmed.
            mayRepeat = !frame.nameIndex!.insert(name).inserted
        }
        // By index, reading only the name: iterating the members would copy (and retain) every value too.
        if mayRepeat, frame.members.indices.contains(where: { frame.members[$0].name.isExactlyEqual(to: name) }) {
            throw .malformed("duplicate member \(JSONValue.quoted(name)) at byte \(position)")
        }
    }

    private mutating func expectLiteral(_ literal: StaticString) throws(AttributionError) {
        let start = index
        guard bytes.matches(literal, at: index) else {
            throw .malformed("invalid literal at byte \(start) (expected \(literal))")
        }
        index += literal.utf8CodeUnitCount
    }

    /// Reads `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?` (RFC 8259 section 6) and keeps its text.
    private mutating func parseNumber() throws(AttributionError) -> JSONNumber {
        let start = index
        if bytes[index] == UInt8(ascii: "-") {
            index += 1
        }
        guard index < bytes.count, isDigit(bytes[index]) else {
            throw unexpectedByte(expecting: "a digit after '-'")
        }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
            if index < bytes.count, isDigit(bytes[index]) {
                throw .malformed("leading zero in number at byte \(index - 1)")
            }
        } else {
            skipDigits()
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard index < bytes.count, isDigit(bytes[index]) else {
                throw unexpectedByte(expecting: "a digit after the decimal point")
            }
            skipDigits()
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                index += 1
            }
            guard index < bytes.count, isDigit(bytes[index]) else {
                throw unexpectedByte(expecting: "a digit in the exponent")
            }
            skipDigits()
        }
        let literal = bytes.string(start..<index)
        return JSONNumber(validatedLiteral: literal)
    }

    private func isDigit(_ byte: UInt8) -> Bool {
        byte &- UInt8(ascii: "0") < 10
    }

    private mutating func skipDigits() {
        while index < bytes.count, isDigit(bytes[index]) {
            index += 1
        }
    }

    /// Reads a string from its opening quote. Strings without escapes become a `String` straight from the input.
    private mutating func parseString() throws(AttributionError) -> String {
        let opening = index
        index += 1
        let start = index
        while index < bytes.count {
            skipPlainASCII()
            guard index < bytes.count else { break }
            let byte = bytes[index]
            if byte == Self.quote {
                let content = bytes.span(start..<index)
                index += 1
                return KnownJSONStrings.string(for: content) ?? content.string(0..<content.count)
            } else if byte == Self.backslash {
                return try parseEscapedString(from: start, opening: opening)
            } else {
                try skipContent(byte)
            }
        }
        throw .malformed("unterminated string starting at byte \(opening)")
    }

    /// Skips string content that needs no attention (see ``PlainJSONText``): base64url tokens, the bulk of every
    /// postback, go eight bytes a step.
    @inline(__always)
    private mutating func skipPlainASCII() {
        index = PlainJSONText.end(in: bytes, from: index)
    }

    /// Steps over one unescaped byte of string content (a whole UTF-8 sequence when it starts one), refusing the
    /// control characters RFC 8259 section 7 requires to be escaped.
    @inline(__always)
    private mutating func skipContent(_ byte: UInt8) throws(AttributionError) {
        if byte < 0x20 {
            throw .malformed("unescaped control character \(ByteDescription.describe(byte)) in string at byte \(index)")
        } else if byte < 0x80 {
            index += 1
        } else {
            try skipUTF8Sequence()
        }
    }

    /// Continues a string at its first backslash, unescaping into a reused buffer.
    private mutating func parseEscapedString(from start: Int, opening: Int) throws(AttributionError) -> String {
        unescaped.removeAll(keepingCapacity: true)
        var runStart = start
        while index < bytes.count {
            let byte = bytes[index]
            if byte == Self.quote {
                bytes.append(runStart..<index, to: &unescaped)
                index += 1
                return String(decoding: unescaped, as: UTF8.self)
            } else if byte == Self.backslash {
                bytes.append(runStart..<index, to: &unescaped)
                try unescape()
                runStart = index
            } else {
                try skipContent(byte)
            }
        }
        throw .malformed("unterminated string starting at byte \(opening)")
    }

    /// Decodes one escape (RFC 8259 section 7) at the index into `unescaped` as UTF-8.
    private mutating func unescape() throws(AttributionError) {
        let escapeStart = index
        guard index + 1 < bytes.count else {
            throw .malformed("unterminated escape at byte \(escapeStart)")
        }
        let letter = bytes[index + 1]
        index += 2
        switch letter {
        case Self.quote, Self.backslash, UInt8(ascii: "/"):
            unescaped.append(letter)
        case UInt8(ascii: "b"):
            unescaped.append(0x08)
        case UInt8(ascii: "f"):
            unescaped.append(0x0C)
        case UInt8(ascii: "n"):
            unescaped.append(0x0A)
        case UInt8(ascii: "r"):
            unescaped.append(0x0D)
        case UInt8(ascii: "t"):
            unescaped.append(0x09)
        case UInt8(ascii: "u"):
            var scalar = try readHex4(escapeStart: escapeStart)
            if (0xD800...0xDBFF).contains(scalar) {
                // A Swift String cannot hold a lone surrogate, and replacing it would make two texts equal.
                guard index + 1 < bytes.count, bytes[index] == Self.backslash, bytes[index + 1] == UInt8(ascii: "u")
                else {
                    throw .malformed("unpaired high surrogate escape at byte \(escapeStart)")
                }
                index += 2
                let low = try readHex4(escapeStart: index - 2)
                guard (0xDC00...0xDFFF).contains(low) else {
                    throw .malformed("high surrogate escape at byte \(escapeStart) not followed by a low surrogate")
                }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            } else if (0xDC00...0xDFFF).contains(scalar) {
                throw .malformed("unpaired low surrogate escape at byte \(escapeStart)")
            }
            appendUTF8(scalar)
        default:
            throw .malformed("invalid escape at byte \(escapeStart)")
        }
    }

    private mutating func readHex4(escapeStart: Int) throws(AttributionError) -> UInt32 {
        guard index + 4 <= bytes.count else {
            throw .malformed("truncated \\u escape at byte \(escapeStart)")
        }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw .malformed("invalid hex digit in \\u escape at byte \(index)")
            }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }

    private mutating func appendUTF8(_ scalar: UInt32) {
        switch scalar {
        case ..<0x80:
            unescaped.append(UInt8(scalar))
        case ..<0x800:
            unescaped.append(UInt8(0xC0 | scalar >> 6))
            unescaped.append(UInt8(0x80 | scalar & 0x3F))
        case ..<0x10000:
            unescaped.append(UInt8(0xE0 | scalar >> 12))
            unescaped.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            unescaped.append(UInt8(0x80 | scalar & 0x3F))
        default:
            unescaped.append(UInt8(0xF0 | scalar >> 18))
            unescaped.append(UInt8(0x80 | scalar >> 12 & 0x3F))
            unescaped.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            unescaped.append(UInt8(0x80 | scalar & 0x3F))
        }
    }

    /// Steps over one multi-byte UTF-8 sequence, refusing overlong forms, encoded surrogates, scalars above
    /// U+10FFFF and truncated sequences (Unicode 15, table 3-7 of well-formed byte sequences).
    private mutating func skipUTF8Sequence() throws(AttributionError) {
        let start = index
        let lead = bytes[index]
        let continuationCount: Int
        var secondRange: ClosedRange<UInt8> = 0x80...0xBF
        switch lead {
        case 0xC2...0xDF:
            continuationCount = 1
        case 0xE0:
            continuationCount = 2
            secondRange = 0xA0...0xBF
        case 0xE1...0xEC, 0xEE...0xEF:
            continuationCount = 2
        case 0xED:
            continuationCount = 2
            secondRange = 0x80...0x9F
        case 0xF0:
            continuationCount = 3
            secondRange = 0x90...0xBF
        case 0xF1...0xF3:
            continuationCount = 3
        case 0xF4:
            continuationCount = 3
            secondRange = 0x80...0x8F
        default:
            throw .malformed("invalid UTF-8 lead byte \(ByteDescription.describe(lead)) at byte \(start)")
        }
        guard start + continuationCount < bytes.count else {
            throw .malformed("truncated UTF-8 sequence at byte \(start)")
        }
        guard secondRange.contains(bytes[start + 1]) else {
            throw .malformed("invalid UTF-8 sequence at byte \(start)")
        }
        var offset = 2
        while offset <= continuationCount {
            guard bytes[start + offset] & 0xC0 == 0x80 else {
                throw .malformed("invalid UTF-8 sequence at byte \(start)")
            }
            offset += 1
        }
        index = start + continuationCount + 1
    }

    /// The error for a text holding more values than its budget allows: one clear finding, never a truncated tree.
    private func overBudget() -> AttributionError {
        let budget = options.valueBudget ?? .verifier
        return .malformed("more than \(budget.limit(forTextBytes: bytes.count)) JSON values in a text of "
            + "\(bytes.count) bytes, at byte \(index) (the parse budget that bounds an item's memory: at most "
            + "\(budget.base) values plus one per \(budget.bytesPerValue) bytes of text)")
    }

    private func unexpectedByte(expecting expected: String) -> AttributionError {
        guard index < bytes.count else {
            return .malformed("JSON text ends at byte \(index) where \(expected) was expected")
        }
        let shown = ByteDescription.describe(bytes[index])
        return .malformed("unexpected \(shown) at byte \(index), expected \(expected)")
    }
}

extension StrictJSONParser {
    /// The limits and policies a parse applies beyond the RFC 8259 grammar.
    @_spi(CommandLine) public struct Options: Sendable {
        /// The deepest nesting of arrays and objects accepted; a top-level `[]` has depth 1.
        ///
        /// The product allows 16 (spec section 2). The parser itself never recurses, but values nested this deep
        /// are released and serialised recursively, so keep the limit small.
        @_spi(Stores) public var maximumDepth: Int = 16

        /// Whether two members of one object may not share a name (compared scalar by scalar after unescaping).
        ///
        /// RFC 8259 section 4 only says names SHOULD be unique; parsers then disagree on which duplicate wins
        /// (Foundation's `JSONDecoder` keeps the first, `JSONSerialization` the last), so a verifier refuses them.
        var rejectsDuplicateMembers: Bool = true

        /// How many values (scalars, arrays and objects, each counting one) a text may hold; nil: no limit.
        @_spi(Stores) public var valueBudget: ValueBudget? = .verifier

        /// Creates options; the defaults are the verifier's policy (depth 16, duplicates refused, the value budget).
        @_spi(CommandLine) @_spi(Stores) public init(
            maximumDepth: Int = 16, rejectsDuplicateMembers: Bool = true, valueBudget: ValueBudget? = .verifier
        ) {
            self.maximumDepth = maximumDepth
            self.rejectsDuplicateMembers = rejectsDuplicateMembers
            self.valueBudget = valueBudget
        }
    }

    /// The most values a JSON text may hold: a fixed allowance plus one value per so many bytes of the text.
    ///
    /// This bounds an item's memory by its bytes whatever its JSON shape: each value costs the tree a few dozen
    /// bytes of heap (its slot in the parent, an array's or object's storage), so `[[0],[0],...]` or
    /// `[{"a":0},...]` would otherwise build a tree tens of times larger than the text. The verifier's budget,
    /// ``verifier``, is 64 values plus one per 16 bytes: an honest postback body, payload or header holds about a
    /// dozen and uses a small part of it; 16 KiB of anything holds at most 1,088 values. A text over its budget is
    /// refused whole, as malformed input (J1), before any more of it is built.
    @_spi(CommandLine) @_spi(Stores) public struct ValueBudget: Sendable, Equatable {
        /// Values every text may hold, however short.
        @_spi(Stores) public var base: Int
        /// One more value allowed per this many bytes of text.
        var bytesPerValue: Int

        init(base: Int, bytesPerValue: Int) {
            precondition(base >= 0 && bytesPerValue > 0, "a value budget needs base >= 0 and bytesPerValue > 0")
            self.base = base
            self.bytesPerValue = bytesPerValue
        }

        /// The verifier's budget: 64 values, plus one per 16 bytes of the text.
        @_spi(CommandLine) @_spi(Stores) public static let verifier = ValueBudget(base: 64, bytesPerValue: 16)

        /// The number of values a text of `count` bytes may hold.
        @_spi(CommandLine) @_spi(Stores) public func limit(forTextBytes count: Int) -> Int {
            base + count / bytesPerValue
        }
    }
}
