/// A JSON number kept as its literal text, so integers are read exactly and `1.0`, `1e0` stay non-integers.
///
/// Foundation reads numbers through `Double` (or `Decimal`), which loses 64-bit item identifiers and cannot
/// tell `1` from `1.0`; here the text decides.
@_spi(CommandLine) @_spi(Servers) @_spi(Stores) public struct JSONNumber: Sendable, Hashable, CustomStringConvertible {
    /// The number exactly as received (already checked against the RFC 8259 grammar by the parser).
    public let literal: String

    /// Wraps a literal the parser has already validated against the RFC 8259 number grammar.
    @_spi(Stores) public init(validatedLiteral literal: String) {
        self.literal = literal
    }

    /// The number's literal text, as received.
    public var description: String { literal }

    /// True when the literal has neither a fraction nor an exponent (`-0` counts as an integer).
    public var isInteger: Bool {
        !literal.utf8.contains { $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E") }
    }

    /// The value as an unsigned 64-bit integer, or nil if it is not an integer literal or does not fit.
    public var uint64Value: UInt64? {
        guard isInteger else { return nil }
        var digits = literal.utf8[...]
        if digits.first == UInt8(ascii: "-") {
            // Only -0 is a non-negative integer.
            digits = digits.dropFirst()
            return digits.allSatisfy { $0 == UInt8(ascii: "0") } ? 0 : nil
        }
        var value: UInt64 = 0
        for digit in digits {
            let (times10, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times10.addingReportingOverflow(UInt64(digit &- UInt8(ascii: "0")))
            if overflow1 || overflow2 { return nil }
            value = sum
        }
        return value
    }

    /// The value as a signed 64-bit integer, or nil if it is not an integer literal or does not fit.
    public var int64Value: Int64? {
        guard isInteger else { return nil }
        if literal.hasPrefix("-") {
            guard let magnitude = JSONNumber(validatedLiteral: String(literal.dropFirst())).uint64Value,
                  magnitude <= UInt64(Int64.max) + 1 else { return nil }
            return magnitude == UInt64(Int64.max) + 1 ? Int64.min : -Int64(magnitude)
        }
        guard let value = uint64Value, value <= UInt64(Int64.max) else { return nil }
        return Int64(value)
    }
}
