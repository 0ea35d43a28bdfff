/// Reads the one JSON shape a typical postback uses, a flat object of known members with plain values, into slots
/// of byte ranges, allocating nothing. Anything else is left to ``StrictJSONParser``.
///
/// It accepts a *subset* of what the strict parser accepts, and reads it the same way, so a text it accepts has
/// exactly the members and values the strict parser would give: an object (whitespace only where RFC 8259 puts
/// it), each member name one of `names` and used at most once, each value a string of ASCII 0x20-0x7E without
/// escapes, a non-negative integer without fraction or exponent that fits `UInt64`, `true` or `false`. Nothing
/// else: no BOM, escape, non-ASCII byte, control character, `null`, nested container, sign, fraction, exponent,
/// unknown or repeated name. Since names and strings carry no escapes, equal bytes mean equal names.
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
    private var index = 0

    private init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    /// Scans `bytes` as a flat object whose member names are all in `names` (at most 16), filling `slots` (one per
    /// name, nil when absent). Nil when the text is anything but that shape; `slots` is then meaningless.
    static func scan(
        _ bytes: UnsafeBufferPointer<UInt8>, names: [[UInt8]], into slots: UnsafeMutableBufferPointer<Value?>
    ) -> MemberOrder? {
        precondition(names.count <= MemberOrder.capacity && slots.count == names.count)
        for slot in slots.indices { slots[slot] = nil }
        var scanner = FlatJSONScanner(bytes)
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

    /// A string of printable ASCII 0x20-0x7E without escapes; returns the content's range (quotes excluded).
    private mutating func scanString() -> Range<Int>? {
        guard take(UInt8(ascii: "\"")) else { return nil }
        let start = index
        // Controls must be escaped (RFC 8259 §7); escapes and non-ASCII are left to the strict parser.
        index = PlainJSONText.end(in: bytes, from: index)
        guard take(UInt8(ascii: "\"")) else { return nil }
        return start..<(index - 1)
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
