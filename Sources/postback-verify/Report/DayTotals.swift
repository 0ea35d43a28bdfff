@_spi(CommandLine) import Attribution
import Foundation

/// What a period's rows of one UTC day were (`export --report`): the trend by day.
struct DayTotals {
    /// Rows received that day whose record the report can read, and those of them valid.
    var items = 0
    var valid = 0
    /// With a schema: the revenue ranges of the valid postbacks' values, per currency.
    var revenue = RevenueSums()
}

extension RunReport {
    /// The days counted, oldest first, each with its date (`2026-11-26`).
    var sortedDays: [(date: String, totals: DayTotals)] {
        (days ?? [:]).sorted { $0.key < $1.key }.map { day, totals in
            (String(RFC3339Timestamp.string(Date(timeIntervalSince1970: Double(day) * 86_400)).prefix(10)), totals)
        }
    }

    /// The JSON report's `days`.
    func writeDays(to writer: inout JSONWriter) {
        writer.array(sortedDays) { writer, day in
            writer.open()
            writer.member("day") { $0.string(day.date) }
            writer.member("items") { $0.integer(day.totals.items) }
            writer.member("valid") { $0.integer(day.totals.valid) }
            writer.member("revenue") { day.totals.revenue.write(to: &$0) }
            writer.close()
        }
    }
}
