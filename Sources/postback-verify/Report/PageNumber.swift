import Foundation

/// Numbers as the report page shows them, in one fixed form whatever the machine's locale, so that two reports
/// read alike and a program can read one back: digits grouped in threes by commas and, for amounts of money, a
/// point and exactly two decimals (`19,343.80`), as in US English. The JSON report keeps the exact values.
enum PageNumber {
    /// A count: `1,234,567`.
    static func count(_ value: Int) -> String {
        let digits = String(value.magnitude)
        return (value < 0 ? "-" : "") + grouped(Substring(digits))
    }

    /// An amount of money to the cent, half-way cases away from zero: `19,343.80`, `0.00`.
    static func amount(_ value: Decimal) -> String {
        var exact = value, rounded = Decimal()
        NSDecimalRound(&rounded, &exact, 2, .plain)
        let isNegative = rounded < 0
        let text = (isNegative ? -rounded : rounded).description
        let parts = text.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        let whole = parts[0].isEmpty ? "0" : parts[0]
        let fraction = parts.count > 1 ? String(parts[1].prefix(2)) : ""
        return (isNegative ? "-" : "") + grouped(whole) + "." + fraction.padding(toLength: 2, withPad: "0",
                                                                                    startingAt: 0)
    }

    /// An amount with its currency (`19,343.80 EUR`), or alone when the schema gives none.
    static func amount(_ value: Decimal, currency: String?) -> String {
        amount(value) + (currency.map { " " + PageText.attribute($0) } ?? "")
    }

    /// `digits` with a comma before each group of three from the right.
    private static func grouped(_ digits: Substring) -> String {
        var out = ""
        for (position, digit) in digits.enumerated() {
            if position > 0 && (digits.count - position) % 3 == 0 { out += "," }
            out.append(digit)
        }
        return out
    }
}
