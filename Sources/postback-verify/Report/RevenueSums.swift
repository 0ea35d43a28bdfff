@_spi(CommandLine) import Attribution
import Foundation

/// Revenue ranges summed per currency: apps of one report may count in different currencies, and a sum across
/// them would mean nothing. Currencies are told apart by their exact code points; a schema's app without a
/// currency sums apart, under none.
struct RevenueSums {
    /// The ranges of one currency.
    struct Sum {
        /// The ISO 4217 code, nil for revenue of an app the schema gives no currency.
        let currency: String?
        /// Postbacks whose value has a revenue range, and the sums of the ranges' bounds.
        var postbacks = 0
        var low: Decimal = 0
        var high: Decimal = 0
    }

    /// By currency: codes in byte order, then the one without a currency.
    private(set) var sums: [Sum] = []

    /// Adds `postbacks` postbacks' ranges, summing to `low`...`high`, in `currency`.
    mutating func add(currency: String?, postbacks: Int, low: Decimal, high: Decimal) {
        guard postbacks > 0 else { return }
        let position = sums.firstIndex { sum in
            switch (sum.currency, currency) {
            case (let a?, let b?): a.utf8.elementsEqual(b.utf8)
            case (nil, nil): true
            default: false
            }
        }
        if let position {
            sums[position].postbacks += postbacks
            sums[position].low += low
            sums[position].high += high
            return
        }
        sums.append(Sum(currency: currency, postbacks: postbacks, low: low, high: high))
        sums.sort { first, second in
            switch (first.currency, second.currency) {
            case (let a?, let b?): a.utf8.lexicographicallyPrecedes(b.utf8)
            case (.some, nil): true
            default: false
            }
        }
    }

    /// `[{"currency":…,"with-revenue":…,"revenue-low":…,"revenue-high":…}, …]`, in ``sums``' order.
    func write(to writer: inout JSONWriter) {
        writer.array(sums) { writer, sum in
            writer.open()
            writer.member("currency") { writer in sum.currency.map { writer.string($0) } ?? writer.null() }
            writer.member("with-revenue") { $0.integer(sum.postbacks) }
            writer.member("revenue-low") { $0.raw(sum.low.description) }
            writer.member("revenue-high") { $0.raw(sum.high.description) }
            writer.close()
        }
    }
}
