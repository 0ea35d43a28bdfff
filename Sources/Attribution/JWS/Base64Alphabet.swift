/// One base64 alphabet (RFC 4648 section 4 or 5) and the strict codec both ``Base64`` and ``Base64URL`` share.
///
/// Strict means one text per byte string: only the alphabet's 64 symbols, padding exactly when the alphabet
/// requires it, and zero unused bits in the last symbol, so a decoded value re-encodes to the text received.
struct Base64Alphabet: Sendable {
    /// The name used in error reasons (`base64url`, `base64`).
    let name: String
    /// The 64 symbols in value order.
    let symbols: [UInt8]
    /// The value of each byte as a symbol, or `Base64Alphabet.invalid`.
    let values: [UInt8]
    /// Whether the text is padded with `=` to a multiple of four characters.
    let isPadded: Bool

    /// Marks a byte outside the alphabet; any value with one of the two top bits set is invalid.
    static let invalid: UInt8 = 0xFF

    static let padding = UInt8(ascii: "=")

    /// RFC 4648 section 5 as RFC 7515 section 2 uses it: `-` and `_`, no padding.
    static let url = Base64Alphabet(name: "base64url", last2: "-_", isPadded: false)

    /// RFC 4648 section 4: `+` and `/`, padded.
    static let standard = Base64Alphabet(name: "base64", last2: "+/", isPadded: true)

    private init(name: String, last2: String, isPadded: Bool) {
        let symbols = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789".utf8) + Array(last2.utf8)
        precondition(symbols.count == 64)
        var values = [UInt8](repeating: Base64Alphabet.invalid, count: 256)
        for (value, symbol) in symbols.enumerated() {
            values[Int(symbol)] = UInt8(value)
        }
        self.name = name
        self.symbols = symbols
        self.values = values
        self.isPadded = isPadded
    }
}

extension Base64Alphabet {
    /// Decodes strictly, reading contiguous storage in place when the collection has it.
    func decode(_ text: some Collection<UInt8>) throws(AttributionError) -> [UInt8] {
        try ByteCursor.over(text) { (input) throws(AttributionError) -> [UInt8] in try decode(cursor: input) }
    }

    /// Encodes; pads with `=` only when the alphabet is padded.
    func encode(_ bytes: some Sequence<UInt8>) -> String {
        ByteCursor.over(bytes, encode(cursor:))
    }

    private func decode(cursor input: ByteCursor) throws(AttributionError) -> [UInt8] {
        let count = try significantCount(of: input)
        let significant = input.span(upTo: count)
        var outcome = DecodeOutcome.decoded
        let output = ByteCursor.makeArray(count: Self.decodedCount(ofSignificant: count)) { out in
            outcome = decodeSignificant(significant, into: out)
            return outcome == .decoded ? out.count : 0
        }
        switch outcome {
        case .decoded:
            return output
        case .invalidCharacter:
            throw invalidCharacterError(in: significant)
        case .nonCanonical:
            throw .malformed("non-canonical \(name): the unused bits of the last character are not zero")
        }
    }

    /// Decodes strictly into `output` (writable, ``ByteCursor/scratch(count:_:)``), which must hold exactly
    /// ``decodedCount(of:)`` bytes: the allocation-free form of ``decode(_:)`` for callers that own a buffer. Nil
    /// for any text ``decode(_:)`` refuses.
    func decode(_ input: ByteCursor, into output: ByteCursor) -> Int? {
        guard let count = try? significantCount(of: input),
              output.count == Self.decodedCount(ofSignificant: count),
              decodeSignificant(input.span(upTo: count), into: output) == .decoded
        else { return nil }
        return output.count
    }

    /// The decoded byte count of a text ``decode(_:)`` accepts, or nil when its length alone rules it out.
    func decodedCount(of input: ByteCursor) -> Int? {
        (try? significantCount(of: input)).map(Self.decodedCount(ofSignificant:))
    }

    private enum DecodeOutcome {
        case decoded, invalidCharacter, nonCanonical
    }

    /// The length without padding, refusing lengths no canonical text has.
    private func significantCount(of input: ByteCursor) throws(AttributionError) -> Int {
        var count = input.count
        if isPadded {
            guard count % 4 == 0 else {
                throw .malformed("\(name) text of length \(count) is not padded to a multiple of 4")
            }
            // At most two '=' end a padded text; any other '=' is caught below as a character outside the alphabet.
            if count > 0, input[count - 1] == Self.padding {
                count -= 1
                if input[count - 1] == Self.padding {
                    count -= 1
                }
            }
        }
        guard count % 4 != 1 else {
            throw .malformed("\(name) text of length \(count) leaves a single character in its last group")
        }
        return count
    }

    private static func decodedCount(ofSignificant count: Int) -> Int {
        count / 4 * 3 + (count % 4 == 0 ? 0 : count % 4 - 1)
    }

    /// Decodes `input` (no padding, length not 1 mod 4) into `out` (writable), which holds exactly the decoded
    /// count.
    ///
    /// The loop reads and writes unchecked (``ByteCursor/subscript(unchecked:)``,
    /// ``ByteCursor/store(_:uncheckedAt:)``): three checks before it, in every build, prove every index in bounds. `input.checkBounds` covers its reads
    /// (groups of four below `fullGroupsEnd`, then the `remainder` bytes up to `input.count`); `out.checkWritable`
    /// covers its writes (three per group, then `remainder - 1`: the decoded count); `table.checkBounds(0..<256)`
    /// covers the lookups (a byte's value is below 256). Test: `Base64AlphabetTests.decodeLoopIsProvenInBounds`.
    private func decodeSignificant(_ input: ByteCursor, into out: ByteCursor) -> DecodeOutcome {
        let remainder = input.count % 4
        let fullGroupsEnd = input.count - remainder
        input.checkBounds(0..<(fullGroupsEnd + remainder))
        out.checkWritable(0..<Self.decodedCount(ofSignificant: input.count))
        var unusedBits: UInt8 = 0
        // Read and written through cursors, checked once above: no per-byte bounds or capacity checks.
        let seen = ByteCursor.over(values) { table -> UInt8 in
            table.checkBounds(0..<256)
            var seen: UInt8 = 0
            var index = 0
            var written = 0
            while index < fullGroupsEnd {
                let a = table[unchecked: Int(input[unchecked: index])]
                let b = table[unchecked: Int(input[unchecked: index + 1])]
                let c = table[unchecked: Int(input[unchecked: index + 2])]
                let d = table[unchecked: Int(input[unchecked: index + 3])]
                seen |= a | b | c | d
                out.store(a << 2 | b >> 4, uncheckedAt: written)
                out.store(b << 4 | c >> 2, uncheckedAt: written + 1)
                out.store(c << 6 | d, uncheckedAt: written + 2)
                index += 4
                written += 3
            }
            if remainder == 2 {
                let a = table[unchecked: Int(input[unchecked: index])]
                let b = table[unchecked: Int(input[unchecked: index + 1])]
                seen |= a | b
                out.store(a << 2 | b >> 4, uncheckedAt: written)
                unusedBits = b & 0x0F
            } else if remainder == 3 {
                let a = table[unchecked: Int(input[unchecked: index])]
                let b = table[unchecked: Int(input[unchecked: index + 1])]
                let c = table[unchecked: Int(input[unchecked: index + 2])]
                seen |= a | b | c
                out.store(a << 2 | b >> 4, uncheckedAt: written)
                out.store(b << 4 | c >> 2, uncheckedAt: written + 1)
                unusedBits = c & 0x03
            }
            return seen
        }
        if seen & 0xC0 != 0 { return .invalidCharacter }
        return unusedBits == 0 ? .decoded : .nonCanonical
    }

    /// Finds the first byte outside the alphabet, which the fast loop only knows exists.
    private func invalidCharacterError(in input: ByteCursor) -> AttributionError {
        guard let index = input.firstIndex(where: { values[Int($0)] == Self.invalid }) else {
            return .malformed("invalid \(name) text")
        }
        let shown = ByteDescription.describe(input[index])
        return .malformed("invalid \(name) character \(shown) at byte \(index)")
    }

    private func encode(cursor input: ByteCursor) -> String {
        var output = [UInt8]()
        output.reserveCapacity((input.count + 2) / 3 * 4)
        ByteCursor.over(symbols) { table in
            var index = 0
            while index + 3 <= input.count {
                let a = input[index], b = input[index + 1], c = input[index + 2]
                output.append(table[Int(a >> 2)])
                output.append(table[Int((a & 0x03) << 4 | b >> 4)])
                output.append(table[Int((b & 0x0F) << 2 | c >> 6)])
                output.append(table[Int(c & 0x3F)])
                index += 3
            }
            switch input.count - index {
            case 1:
                let a = input[index]
                output.append(table[Int(a >> 2)])
                output.append(table[Int((a & 0x03) << 4)])
                if isPadded {
                    output.append(Self.padding)
                    output.append(Self.padding)
                }
            case 2:
                let a = input[index], b = input[index + 1]
                output.append(table[Int(a >> 2)])
                output.append(table[Int((a & 0x03) << 4 | b >> 4)])
                output.append(table[Int((b & 0x0F) << 2)])
                if isPadded {
                    output.append(Self.padding)
                }
            default:
                break
            }
        }
        return String(decoding: output, as: UTF8.self)
    }
}
