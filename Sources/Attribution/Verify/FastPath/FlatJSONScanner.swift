/// Reads the one JSON shape a typical postback uses, a flat object of known members with plain values, into slots
/// of byte ranges, allocating nothing. Anything else is left to ``StrictJSONParser``.
///
/// It accepts a *subset* of what the strict parser accepts, and reads it the same way, so a text it accepts has
/// exactly the members and values the strict parser would give: an object (whitespace only where RFC 8259 puts
/// it), each member name one of `names` and used at most once, each value a string whose characters are printable
/// ASCII 0x20-0x7E other than the quote and the backslash, a non-negative integer without fraction or exponent
/// that fits `UInt64`, `true` or `false`. Nothing else: no BOM, non-ASCII byte, control character, DEL, `null`,
/// nested container, sign, fraction, exponent, unknown or repeated name.
///
/// Escapes (RFC 8259 §7) are decoded exactly, in place, when the caller lends the bytes for writing: `\/` (as
/// Apple writes the `/` of `apple-cas-identifier/0`) and `\u0041`-style escapes of those characters; an escape of
/// anything else (a quote, a backslash, a control character, DEL, non-ASCII) or a malformed one is left to the
/// strict parser. So a string's range holds its decoded characters, which never need escaping in the record, and
/// equal bytes mean equal names.
struct FlatJSONScanner {
    /// A member's value: for strings the content between the quotes, for integers and Booleans the literal.
    struct Value {
        enum Kind {
            case string, integer, boolean
        }

        var kind: Kind
        var range: Range<Int>
        /// The integer's value (integers), or 1 for `true` and 0 for `false`.
        var number: UInt64
    }

    /// The member names in received order, as indexes into `names` (4 bits each).
    struct MemberOrder {
        private(set) var count = 0
        private var packed: UInt64 = 0

        /// At most 16 members: a flat object with more is left to the strict parser.
        static let capacity = 16

        mutating func append(_ slot: Int) {
            packed |= UInt64(slot) << (4 * UInt64(count))
            count += 1
        }

        func slot(at position: Int) -> Int {
            Int(packed >> (4 * UInt64(position)) & 0xF)
        }
    }

    /// The members' values by slot (one per name), nil when absent: a fixed-size value, so a scanned object holds
    /// no pointer and allocates nothing.
    struct Slots {
        /// Per slot: the kind (top two bits, 0 when absent), the range's start (31 bits) and end (31 bits).
        private var packed = SIMD16<UInt64>()
        private var numbers = SIMD16<UInt64>()

        /// Ranges must end below 2^31 (items are far smaller: ``AttributionVerifier/maximumItemBytes``).
        static let maximumOffset = 1 << 31 - 1

        subscript(slot: Int) -> Value? {
            get {
                let word = packed[slot]
                let kind: Value.Kind
                switch word >> 62 {
                case 1: kind = .string
                case 2: kind = .integer
                case 3: kind = .boolean
                default: return nil
                }
                let start = Int(truncatingIfNeeded: word >> 31 & 0x7FFF_FFFF)
                let end = Int(truncatingIfNeeded: word & 0x7FFF_FFFF)
                return Value(kind: kind, range: start..<end, number: numbers[slot])
            }
            set {
                guard let value = newValue else {
                    packed[slot] = 0
                    return
                }
                let kind: UInt64 = switch value.kind {
                case .string: 1
                case .integer: 2
                case .boolean: 3
                }
                packed[slot] = kind << 62 | UInt64(value.range.lowerBound) << 31 | UInt64(value.range.upperBound)
                numbers[slot] = value.number
            }
        }

        /// True when the slot holds a value.
        func isPresent(_ slot: Int) -> Bool {
            packed[slot] != 0
        }
    }

    /// The bytes being read; written behind the read position when escapes are decoded in place.
    private var cursor: ByteCursor
    /// Whether escapes are decoded (the cursor's bytes are a writable copy); false: escapes are declined.
    private let decodesEscapes: Bool

    private init(_ cursor: ByteCursor, decodesEscapes: Bool) {
        self.cursor = cursor
        self.decodesEscapes = decodesEscapes
    }

    /// Scans `bytes` as a flat object whose member names are all in `names` (at most 16): the members' values by
    /// slot (one per name, nil when absent) and their order. Nil when the text is anything but that shape, or holds
    /// an escape.
    ///
    /// When `bytes` is writable (``ByteCursor/withWritableCopy(_:)``) escapes are decoded in place: a string's
    /// range then holds its decoded characters, and the bytes after them up to its closing quote are left over (no
    /// range covers them).
    static func scan(_ bytes: ByteCursor, names: [[UInt8]]) -> (Slots, MemberOrder)? {
        precondition(names.count <= MemberOrder.capacity)
        guard bytes.count <= Slots.maximumOffset else { return nil }
        var scanner = FlatJSONScanner(bytes, decodesEscapes: bytes.isWritable)
        var slots = Slots()
        guard let order = scanner.scanObject(names: names, into: &slots) else { return nil }
        return (slots, order)
    }

    private mutating func scanObject(names: [[UInt8]], into slots: inout Slots) -> MemberOrder? {
        var order = MemberOrder()
        skipWhitespace()
        guard cursor.take(UInt8(ascii: "{")) else { return nil }
        repeat {
            skipWhitespace()
            // A name is taken once at most, so there are never more members than names (at most 16).
            guard let name = scanString(), let slot = slot(of: name, in: names), !slots.isPresent(slot)
            else { return nil }
            skipWhitespace()
            guard cursor.take(UInt8(ascii: ":")) else { return nil }
            skipWhitespace()
            guard let value = scanValue() else { return nil }
            slots[slot] = value
            order.append(slot)
            skipWhitespace()
        } while cursor.take(UInt8(ascii: ","))
        guard cursor.take(UInt8(ascii: "}")) else { return nil }
        skipWhitespace()
        return cursor.isAtEnd ? order : nil
    }

    /// The index of the name with these bytes in `names`; lengths and first bytes are compared first. The range is
    /// checked once, before the loop (the comparisons' own checks of the same range then fold into it). Inlined
    /// into ``scanObject(names:into:)``, its one caller, as the optimiser did before the check made it larger.
    @inline(__always)
    private func slot(of name: Range<Int>, in names: [[UInt8]]) -> Int? {
        guard !name.isEmpty else { return nil }
        cursor.checkBounds(name)
        let first = cursor[name.lowerBound]
        for (slot, candidate) in names.enumerated() where candidate.count == name.count && candidate[0] == first {
            if cursor.elementsEqual(name, candidate) {
                return slot
            }
        }
        return nil
    }

    private mutating func scanValue() -> Value? {
        guard let first = cursor.peek() else { return nil }
        let start = cursor.position
        switch first {
        case UInt8(ascii: "\""):
            return scanString().map { Value(kind: .string, range: $0, number: 0) }
        case UInt8(ascii: "t"):
            return cursor.take("true") ? Value(kind: .boolean, range: start..<cursor.position, number: 1) : nil
        case UInt8(ascii: "f"):
            return cursor.take("false") ? Value(kind: .boolean, range: start..<cursor.position, number: 0) : nil
        case UInt8(ascii: "0")...UInt8(ascii: "9"):
            return scanInteger()
        default:
            return nil
        }
    }

    /// A string of plain characters (see the type's comment); returns the range of its content, decoded.
    private mutating func scanString() -> Range<Int>? {
        guard cursor.take(UInt8(ascii: "\"")) else { return nil }
        let start = cursor.position
        // Controls must be escaped (RFC 8259 §7); non-ASCII is left to the strict parser.
        cursor.position = PlainJSONText.end(in: cursor, from: start)
        if cursor.take(UInt8(ascii: "\"")) { return start..<(cursor.position - 1) }
        guard decodesEscapes, cursor.peek() == UInt8(ascii: "\\") else { return nil }
        // The escapes' decoded characters are written from `end` on, behind the read position.
        var end = cursor.position
        while let byte = cursor.peek() {
            if byte == UInt8(ascii: "\"") {
                cursor.advance()
                return start..<end
            }
            let character: UInt8
            if byte == UInt8(ascii: "\\") {
                guard let decoded = scanEscape() else { return nil }
                character = decoded
            } else {
                guard PlainJSONText.isPlain(byte) else { return nil }
                character = byte
                cursor.advance()
            }
            cursor.store(character, at: end)
            end += 1
        }
        return nil
    }

    /// The character of the escape at the position (a backslash), when it is a plain character: `\/` or `\u` with
    /// four hex digits naming one. Nil for the others, valid or not (the strict parser decodes or refuses them).
    private mutating func scanEscape() -> UInt8? {
        let index = cursor.position
        guard index + 1 < cursor.count else { return nil }
        switch cursor[index + 1] {
        case UInt8(ascii: "/"):
            cursor.advance(by: 2)
            return UInt8(ascii: "/")
        case UInt8(ascii: "u"):
            guard index + 6 <= cursor.count else { return nil }
            var scalar: UInt32 = 0
            for offset in 2..<6 {
                guard let digit = Self.hexValue(cursor[index + offset]) else { return nil }
                scalar = scalar << 4 | UInt32(digit)
            }
            guard scalar < 0x80, PlainJSONText.isPlain(UInt8(scalar)) else { return nil }
            cursor.advance(by: 6)
            return UInt8(scalar)
        default:
            return nil
        }
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// `0` or `[1-9][0-9]*` that fits `UInt64`, not followed by a fraction or an exponent.
    private mutating func scanInteger() -> Value? {
        let start = cursor.position
        var value: UInt64 = 0
        while let byte = cursor.peek(), byte &- UInt8(ascii: "0") < 10 {
            let (times10, overflowA) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflowB) = times10.addingReportingOverflow(UInt64(byte &- UInt8(ascii: "0")))
            guard !overflowA, !overflowB else { return nil }
            value = sum
            cursor.advance()
        }
        if cursor.position - start > 1 && cursor[start] == UInt8(ascii: "0") { return nil }
        switch cursor.peek() {
        case UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"): return nil
        default: break
        }
        return Value(kind: .integer, range: start..<cursor.position, number: value)
    }

    private mutating func skipWhitespace() {
        while let byte = cursor.peek() {
            switch byte {
            case 0x20, 0x09, 0x0A, 0x0D: cursor.advance()
            default: return
            }
        }
    }
}
