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

    private let bytes: UnsafeBufferPointer<UInt8>
    /// The same bytes, writable, when the caller lets escapes be decoded in place; nil: escapes are declined.
    private let writable: UnsafeMutablePointer<UInt8>?
    private var index = 0

    private init(_ bytes: UnsafeBufferPointer<UInt8>, writable: UnsafeMutablePointer<UInt8>?) {
        self.bytes = bytes
        self.writable = writable
    }

    /// Scans `bytes` as a flat object whose member names are all in `names` (at most 16), filling `slots` (one per
    /// name, nil when absent). Nil when the text is anything but that shape, or holds an escape; `slots` is then
    /// meaningless.
    static func scan(
        _ bytes: UnsafeBufferPointer<UInt8>, names: [[UInt8]], into slots: UnsafeMutableBufferPointer<Value?>
    ) -> MemberOrder? {
        scan(bytes, writable: nil, names: names, into: slots)
    }

    /// The same, decoding escapes in place: a string's range then holds its decoded characters, and the bytes
    /// after them up to its closing quote are left over (no range covers them).
    static func scan(
        _ bytes: UnsafeMutableBufferPointer<UInt8>, names: [[UInt8]], into slots: UnsafeMutableBufferPointer<Value?>
    ) -> MemberOrder? {
        scan(UnsafeBufferPointer(bytes), writable: bytes.baseAddress, names: names, into: slots)
    }

    private static func scan(
        _ bytes: UnsafeBufferPointer<UInt8>, writable: UnsafeMutablePointer<UInt8>?, names: [[UInt8]],
        into slots: UnsafeMutableBufferPointer<Value?>
    ) -> MemberOrder? {
        precondition(names.count <= MemberOrder.capacity && slots.count == names.count)
        for slot in slots.indices { slots[slot] = nil }
        var scanner = FlatJSONScanner(bytes, writable: writable)
        return scanner.scanObject(names: names, into: slots)
    }

    private mutating func scanObject(names: [[UInt8]], into slots: UnsafeMutableBufferPointer<Value?>)
        -> MemberOrder? {
        var order = MemberOrder()
        skipWhitespace()
        guard take(UInt8(ascii: "{")) else { return nil }
        repeat {
            skipWhitespace()
            // A name is taken once at most, so there are never more members than names (at most 16).
            guard let name = scanString(), let slot = slot(of: name, in: names), slots[slot] == nil else { return nil }
            skipWhitespace()
            guard take(UInt8(ascii: ":")) else { return nil }
            skipWhitespace()
            guard let value = scanValue() else { return nil }
            slots[slot] = value
            order.append(slot)
            skipWhitespace()
        } while take(UInt8(ascii: ","))
        guard take(UInt8(ascii: "}")) else { return nil }
        skipWhitespace()
        return index == bytes.count ? order : nil
    }

    /// The index of the name with these bytes in `names`; lengths and first bytes are compared first.
    private func slot(of name: Range<Int>, in names: [[UInt8]]) -> Int? {
        guard let base = bytes.baseAddress, !name.isEmpty else { return nil }
        let text = base + name.lowerBound
        for (slot, candidate) in names.enumerated() where candidate.count == name.count && candidate[0] == text[0] {
            if candidate.withUnsafeBufferPointer({ RawBytes.equal($0.baseAddress!, text, count: name.count) }) {
                return slot
            }
        }
        return nil
    }

    private mutating func scanValue() -> Value? {
        guard index < bytes.count else { return nil }
        let start = index
        switch bytes[index] {
        case UInt8(ascii: "\""):
            return scanString().map { Value(kind: .string, range: $0, number: 0) }
        case UInt8(ascii: "t"):
            return scanLiteral("true") ? Value(kind: .boolean, range: start..<index, number: 1) : nil
        case UInt8(ascii: "f"):
            return scanLiteral("false") ? Value(kind: .boolean, range: start..<index, number: 0) : nil
        case UInt8(ascii: "0")...UInt8(ascii: "9"):
            return scanInteger()
        default:
            return nil
        }
    }

    /// A string of plain characters (see the type's comment); returns the range of its content, decoded.
    private mutating func scanString() -> Range<Int>? {
        guard take(UInt8(ascii: "\"")) else { return nil }
        let start = index
        // Controls must be escaped (RFC 8259 §7); non-ASCII is left to the strict parser.
        index = PlainJSONText.end(in: bytes, from: index)
        if take(UInt8(ascii: "\"")) { return start..<(index - 1) }
        guard let writable, index < bytes.count, bytes[index] == UInt8(ascii: "\\") else { return nil }
        // The escapes' decoded characters are written from `end` on, behind the reading index.
        var end = index
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                index += 1
                return start..<end
            }
            let character: UInt8
            if byte == UInt8(ascii: "\\") {
                guard let decoded = scanEscape() else { return nil }
                character = decoded
            } else {
                guard PlainJSONText.isPlain(byte) else { return nil }
                character = byte
                index += 1
            }
            writable[end] = character
            end += 1
        }
        return nil
    }

    /// The character of the escape at `index` (a backslash), when it is a plain character: `\/` or `\u` with
    /// four hex digits naming one. Nil for the others, valid or not (the strict parser decodes or refuses them).
    private mutating func scanEscape() -> UInt8? {
        guard index + 1 < bytes.count else { return nil }
        switch bytes[index + 1] {
        case UInt8(ascii: "/"):
            index += 2
            return UInt8(ascii: "/")
        case UInt8(ascii: "u"):
            guard index + 6 <= bytes.count else { return nil }
            var scalar: UInt32 = 0
            for offset in 2..<6 {
                guard let digit = Self.hexValue(bytes[index + offset]) else { return nil }
                scalar = scalar << 4 | UInt32(digit)
            }
            guard scalar < 0x80, PlainJSONText.isPlain(UInt8(scalar)) else { return nil }
            index += 6
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
        let start = index
        var value: UInt64 = 0
        while index < bytes.count, bytes[index] &- UInt8(ascii: "0") < 10 {
            let (times10, overflowA) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflowB) = times10.addingReportingOverflow(UInt64(bytes[index] &- UInt8(ascii: "0")))
            guard !overflowA, !overflowB else { return nil }
            value = sum
            index += 1
        }
        if index - start > 1 && bytes[start] == UInt8(ascii: "0") { return nil }
        if index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"): return nil
            default: break
            }
        }
        return Value(kind: .integer, range: start..<index, number: value)
    }

    private mutating func scanLiteral(_ literal: StaticString) -> Bool {
        let text = UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount)
        guard index + text.count <= bytes.count,
              UnsafeBufferPointer(rebasing: bytes[index..<(index + text.count)]).elementsEqual(text)
        else { return false }
        index += text.count
        return true
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    private mutating func take(_ byte: UInt8) -> Bool {
        guard index < bytes.count, bytes[index] == byte else { return false }
        index += 1
        return true
    }
}
