@_spi(CommandLine) import Attribution
import Foundation

extension ReportPage {
    /// Horizontal bars, one per category, each labelled with its count; the count's id is `idPrefix-` and the
    /// category's name, or the matching element of `ids`.
    static func barChart(title: String, idPrefix: String, _ bars: [(name: String, count: Int)],
                         ids: [String]? = nil) -> String {
        let largest = max(1, bars.map(\.count).max() ?? 1)
        let height = bars.count * 26 + 4
        var svg = "<div><h2>\(title)</h2><svg width=\"330\" height=\"\(height)\" role=\"img\">"
        for (row, bar) in bars.enumerated() {
            let y = row * 26 + 4
            let width = Int((Double(bar.count) / Double(largest) * 170).rounded())
            let id = ids.map { $0[row] } ?? bar.name
            svg += "<text x=\"0\" y=\"\(y + 15)\">\(PageText.attribute(bar.name))</text>"
                + "<rect x=\"90\" y=\"\(y)\" width=\"\(width)\" height=\"20\" fill=\"#4472c4\"/>"
                + "<text x=\"\(96 + width)\" y=\"\(y + 15)\" id=\"\(idPrefix)-\(PageText.attribute(id))\">"
                + "\(PageNumber.count(bar.count))</text>"
        }
        return svg + "</svg></div>"
    }

    /// Per conversion window: its days, postbacks, and the share without a value, with a bar.
    static func windowsTable(_ report: RunReport) -> String {
        var html = "<h2>Postbacks without a conversion value, per window</h2>\n<table><tr><th>window</th>"
            + "<th>days after install</th><th class=\"n\">postbacks</th><th class=\"n\">without value</th>"
            + "<th class=\"n\">rate</th><th></th></tr>"
        for window in ConversionWindow.all {
            let index = window.number - 1
            let rate = report.nullRate(window: index)
            html += "<tr><td>\(window.number)</td><td>\(window.firstDay)-\(window.lastDay)</td>"
                + "<td class=\"n\" id=\"window-\(window.number)-postbacks\">"
                + "\(PageNumber.count(report.windowPostbacks[index]))</td>"
                + "<td class=\"n\" id=\"window-\(window.number)-without-value\">"
                + "\(PageNumber.count(report.windowWithoutValue[index]))</td>"
                + "<td class=\"n\" id=\"window-\(window.number)-null-rate\">"
                + "\(String(format: "%.1f", rate * 100))%</td>"
                + "<td><svg width=\"200\" height=\"14\" role=\"img\"><rect width=\"200\" height=\"14\" fill=\"#eee\"/>"
                + "<rect width=\"\(Int((rate * 200).rounded()))\" height=\"14\" fill=\"#c0504d\"/></svg></td></tr>"
        }
        return html + "</table>\n"
    }

    /// Fine values 0 to 63: 64 bars under an axis labelled every 8 values (a label per bar would run together),
    /// each bar's count in its tooltip; then every count in a grid of 8 rows by 8, where each can be read.
    static func fineValues(_ counts: [Int]) -> String {
        let largest = max(1, counts.max() ?? 1)
        var html = "<svg width=\"1060\" height=\"190\" role=\"img\" aria-label=\"fine values 0 to 63\">"
            + "<line x1=\"20\" y1=\"160\" x2=\"1044\" y2=\"160\" stroke=\"#999\"/>"
            + "<text x=\"20\" y=\"12\" fill=\"#555\">most: \(PageNumber.count(largest))</text>"
        for (value, count) in counts.enumerated() {
            let x = 20 + value * 16
            let height = Int((Double(count) / Double(largest) * 130).rounded())
            html += "<rect x=\"\(x + 2)\" y=\"\(160 - height)\" width=\"12\" height=\"\(height)\" fill=\"#4472c4\">"
                + "<title>fine value \(value): \(PageNumber.count(count))</title></rect>"
            if value % 8 == 0 || value == 63 {
                html += "<line x1=\"\(x + 8)\" y1=\"160\" x2=\"\(x + 8)\" y2=\"165\" stroke=\"#999\"/>"
                    + "<text x=\"\(x + 8)\" y=\"180\" text-anchor=\"middle\">\(value)</text>"
            }
        }
        html += "</svg>\n<table class=\"fine\"><tr><th>values</th>"
        for column in 0..<8 { html += "<th class=\"n\">+\(column)</th>" }
        html += "</tr>"
        for row in 0..<8 {
            html += "<tr><th>\(row * 8)-\(row * 8 + 7)</th>"
            for column in 0..<8 {
                let value = row * 8 + column
                html += "<td class=\"n\(counts[value] == 0 ? " zero" : "")\" id=\"fine-\(value)\">"
                    + "\(PageNumber.count(counts[value]))</td>"
            }
            html += "</tr>"
        }
        return html + "</table>\n"
    }

    /// A period's days: bars of the rows received and of the valid ones per day, the date under every few bars
    /// (as many as fit without touching), then a table of every day with its revenue per currency.
    static func trend(_ days: [(date: String, totals: DayTotals)]) -> String {
        var html = ""
        if days.count > 1 {
            let plotWidth = 1000, labelWidth = 44
            let step = max(1, Int((Double(days.count * labelWidth) / Double(plotWidth)).rounded(.up)))
            let barWidth = Double(plotWidth) / Double(days.count)
            let largest = max(1, days.map(\.totals.items).max() ?? 1)
            html += "<svg width=\"1060\" height=\"190\" role=\"img\" aria-label=\"postbacks per day\">"
                + "<line x1=\"40\" y1=\"160\" x2=\"1040\" y2=\"160\" stroke=\"#999\"/>"
                + "<text x=\"40\" y=\"12\" fill=\"#555\">most in a day: \(PageNumber.count(largest)) · "
                + "grey: received, blue: valid</text>"
            for (position, day) in days.enumerated() {
                let x = 40 + Double(position) * barWidth
                let width = max(1, barWidth - 2)
                for (count, colour) in [(day.totals.items, "#c9d3e6"), (day.totals.valid, "#4472c4")] {
                    let height = (Double(count) / Double(largest) * 130).rounded()
                    html += "<rect x=\"\(format(x + 1))\" y=\"\(format(160 - height))\" width=\"\(format(width))\" "
                        + "height=\"\(format(height))\" fill=\"\(colour)\"><title>\(day.date): "
                        + "\(PageNumber.count(day.totals.items)) received, \(PageNumber.count(day.totals.valid)) valid"
                        + "</title></rect>"
                }
                if position % step == 0 {
                    html += "<text x=\"\(format(x + barWidth / 2))\" y=\"180\" text-anchor=\"middle\">"
                        + "\(day.date.dropFirst(5))</text>"
                }
            }
            html += "</svg>\n"
        }
        html += "<table><tr><th>day</th><th class=\"n\">received</th><th class=\"n\">valid</th>"
            + "<th class=\"n\">revenue low</th><th class=\"n\">revenue high</th></tr>"
        for (position, day) in days.enumerated() {
            html += "<tr><td id=\"day-\(position)-date\">\(day.date)</td>"
                + "<td class=\"n\" id=\"day-\(position)-items\">\(PageNumber.count(day.totals.items))</td>"
                + "<td class=\"n\" id=\"day-\(position)-valid\">\(PageNumber.count(day.totals.valid))</td>"
                + revenueCells(day.totals.revenue, idPrefix: "day-\(position)-revenue") + "</tr>"
        }
        return html + "</table>\n"
    }

    /// Two cells, the low and high sums, a line per currency; "none" without a revenue range.
    static func revenueCells(_ revenue: RevenueSums, idPrefix: String) -> String {
        guard !revenue.sums.isEmpty else {
            return "<td class=\"n none\" colspan=\"2\">no revenue range</td>"
        }
        var cells = ""
        for bound in ["low", "high"] {
            cells += "<td class=\"n\">" + revenue.sums.enumerated().map { position, sum in
                "<span id=\"\(idPrefix)-\(position)-\(bound)\">"
                    + PageNumber.amount(bound == "low" ? sum.low : sum.high) + "</span>"
                    + (sum.currency.map { " " + PageText.attribute($0) } ?? "")
            }.joined(separator: "<br>") + "</td>"
        }
        return cells
    }

    /// A coordinate with at most one decimal.
    private static func format(_ value: Double) -> String {
        String(format: "%.1f", value)
    }
}
