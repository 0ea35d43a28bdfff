import Attribution
import Foundation

/// The run report as one self-contained HTML page (`--report FILE.html`, docs/cli.md section 8): inline CSS and
/// inline SVG charts, no script, nothing fetched. Every number has a stable `id` so that a program (the Chromium
/// test) can read the page back; every text that came from input or the command line is HTML-escaped.
enum ReportPage {
    static func render(_ report: RunReport, summary: RunSummary, context: ReportContext) -> [UInt8] {
        var page = """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8">
            <meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
            <title>postback-verify report: \(escaped(context.label))</title>
            <style>
            body{font:15px/1.4 system-ui,sans-serif;margin:24px;color:#1d1d1f;max-width:1120px}
            h1{font-size:24px;margin:0 0 4px}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #ddd}
            .meta{color:#555}.tiles{display:flex;gap:12px;flex-wrap:wrap}
            .tile{border:1px solid #ddd;border-radius:8px;padding:10px 16px;min-width:120px}
            .tile b{display:block;font-size:28px}.tile span{color:#555}
            table{border-collapse:collapse}td,th{padding:4px 12px;border-bottom:1px solid #eee;text-align:left}
            td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}
            .cols{display:flex;gap:28px;flex-wrap:wrap}svg text{font:12px system-ui,sans-serif}
            </style></head><body>
            <h1>postback-verify run report</h1>
            <p class="meta">Label <span id="label">\(escaped(context.label))</span> · started
            <span id="started">\(RFC3339Timestamp.string(context.started))</span> ·
            \(String(format: "%.2f", context.seconds)) s
            """
        if let schema = context.schemaPath { page += " · schema <span id=\"schema\">\(escaped(schema))</span>" }
        if let note = context.interrupted { page += " · <b>\(escaped(note))</b>" }
        page += "</p>\n<h2>Verdicts</h2>\n<div class=\"tiles\">"
        for (id, title, value) in [("items", "items", summary.items), ("valid", "valid", summary.valid),
                                   ("invalid", "invalid", summary.invalid),
                                   ("duplicates", "duplicates", summary.duplicates),
                                   ("warnings", "warnings", summary.warnings),
                                   ("development", "valid on development keys", summary.validOnDevelopmentKeys)] {
            page += "<div class=\"tile\"><b id=\"count-\(id)\">\(value)</b><span>\(title)</span></div>"
        }
        page += "</div>\n<div class=\"cols\">"
        page += countsTable(title: "Invalid reasons", idPrefix: "reason", summary.invalidByCode, empty: "none")
        page += countsTable(title: "Warnings by rule", idPrefix: "rule", summary.warningsByRule, empty: "none")
        page += "</div>\n<div class=\"cols\">"
        let environments = [KeyEnvironment.production, .development, .custom]
        page += barChart(title: "Valid by key environment", idPrefix: "environment",
                         environments.map { ($0.rawValue, summary.validByEnvironment[$0] ?? 0) })
        page += barChart(title: "Crowd-anonymity tiers", idPrefix: "tier",
                         report.tiers.enumerated().map { ("\($0.offset)", $0.element) })
        page += barChart(title: "Coarse values", idPrefix: "coarse",
                         CoarseConversionValue.allCases.enumerated().map { ($0.element.rawValue,
                                                                             report.coarseValues[$0.offset]) })
        page += "</div>\n<h2>Postbacks without a conversion value, per window</h2>\n<table><tr><th>window</th>"
            + "<th>days</th><th class=\"n\">postbacks</th><th class=\"n\">without value</th>"
            + "<th class=\"n\">rate</th><th></th></tr>"
        for window in ConversionWindow.all {
            let index = window.number - 1
            let rate = report.nullRate(window: index)
            page += "<tr><td>\(window.number)</td><td>\(window.firstDay)-\(window.lastDay)</td>"
                + "<td class=\"n\" id=\"window-\(window.number)-postbacks\">\(report.windowPostbacks[index])</td>"
                + "<td class=\"n\" id=\"window-\(window.number)-without-value\">"
                + "\(report.windowWithoutValue[index])</td>"
                + "<td class=\"n\" id=\"window-\(window.number)-null-rate\">\(String(format: "%.1f", rate * 100))%</td>"
                + "<td><svg width=\"200\" height=\"14\" role=\"img\"><rect width=\"200\" height=\"14\" fill=\"#eee\"/>"
                + "<rect width=\"\(Int((rate * 200).rounded()))\" height=\"14\" fill=\"#c0504d\"/></svg></td></tr>"
        }
        page += "</table>\n<h2>Fine values (first window)</h2>\n" + fineHistogram(report.fineValues)
        if context.schemaPath != nil {
            page += "\n<h2>Campaigns</h2>\n" + campaignTable(report.sortedCampaigns)
        }
        page += "\n</body></html>\n"
        return Array(page.utf8)
    }

    /// `text` safe in HTML text and attribute values.
    static func escaped(_ text: String) -> String {
        var out = ""
        out.unicodeScalars.reserveCapacity(text.unicodeScalars.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default:
                // Control characters (but tab and newline) would be invalid in HTML: shown as their code.
                if scalar.value < 0x20 && scalar != "\t" && scalar != "\n" || (0x7F...0x9F).contains(scalar.value) {
                    out += "&#xFFFD;"
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out
    }

    private static func countsTable(title: String, idPrefix: String, _ counts: [String: Int], empty: String)
        -> String {
        var html = "<div><h2>\(title)</h2><table>"
        let sorted = counts.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
        if sorted.isEmpty { html += "<tr><td>\(empty)</td></tr>" }
        for (name, count) in sorted {
            html += "<tr data-\(idPrefix)=\"\(escaped(name))\"><td>\(escaped(name))</td>"
                + "<td class=\"n\" id=\"\(idPrefix)-\(escaped(name))\">\(count)</td></tr>"
        }
        return html + "</table></div>"
    }

    /// Horizontal bars, one per category, each labelled with its count.
    private static func barChart(title: String, idPrefix: String, _ bars: [(name: String, count: Int)]) -> String {
        let largest = max(1, bars.map(\.count).max() ?? 1)
        let height = bars.count * 26 + 4
        var svg = "<div><h2>\(title)</h2><svg width=\"330\" height=\"\(height)\" role=\"img\">"
        for (row, bar) in bars.enumerated() {
            let y = row * 26 + 4
            let width = Int((Double(bar.count) / Double(largest) * 200).rounded())
            svg += "<text x=\"0\" y=\"\(y + 15)\">\(escaped(bar.name))</text>"
                + "<rect x=\"90\" y=\"\(y)\" width=\"\(width)\" height=\"20\" fill=\"#4472c4\"/>"
                + "<text x=\"\(96 + width)\" y=\"\(y + 15)\" id=\"\(idPrefix)-\(escaped(bar.name))\">"
                + "\(bar.count)</text>"
        }
        return svg + "</svg></div>"
    }

    /// 64 vertical bars, fine values 0 to 63; each non-zero bar labelled with its count.
    private static func fineHistogram(_ counts: [Int]) -> String {
        let largest = max(1, counts.max() ?? 1)
        var svg = "<svg width=\"1060\" height=\"200\" role=\"img\">"
            + "<line x1=\"20\" y1=\"170\" x2=\"1044\" y2=\"170\" stroke=\"#999\"/>"
        for (value, count) in counts.enumerated() {
            let x = 20 + value * 16
            let height = Int((Double(count) / Double(largest) * 140).rounded())
            svg += "<rect x=\"\(x + 2)\" y=\"\(170 - height)\" width=\"12\" height=\"\(height)\" fill=\"#4472c4\">"
                + "<title>fine value \(value): \(count)</title></rect>"
            if count > 0 {
                svg += "<text x=\"\(x + 8)\" y=\"\(164 - height)\" text-anchor=\"middle\" id=\"fine-\(value)\">"
                    + "\(count)</text>"
            }
            if value % 8 == 0 || value == 63 {
                svg += "<text x=\"\(x + 8)\" y=\"186\" text-anchor=\"middle\">\(value)</text>"
            }
        }
        return svg + "</svg>"
    }

    private static func campaignTable(_ campaigns: [(key: RunReport.CampaignKey, totals: RunReport.CampaignTotals)])
        -> String {
        var html = "<table><tr><th>app</th><th>source</th><th>campaign</th><th class=\"n\">postbacks</th>"
            + "<th class=\"n\">window 1</th><th class=\"n\">decoded values</th><th class=\"n\">revenue low</th>"
            + "<th class=\"n\">revenue high</th></tr>"
        if campaigns.isEmpty { html += "<tr><td colspan=\"8\">no valid postbacks</td></tr>" }
        for (row, campaign) in campaigns.enumerated() {
            let totals = campaign.totals
            let currency = totals.currency.map { " " + escaped($0) } ?? ""
            html += "<tr id=\"campaign-\(row)\" data-source=\"\(escaped(campaign.key.sourceLabel))\">"
                + "<td>\(campaign.key.app)</td><td>\(escaped(campaign.key.sourceLabel))</td>"
                + "<td id=\"campaign-\(row)-name\">\(escaped(totals.name ?? "(unnamed)"))</td>"
                + "<td class=\"n\" id=\"campaign-\(row)-postbacks\">\(totals.postbacks)</td>"
                + "<td class=\"n\" id=\"campaign-\(row)-window-1\">\(totals.firstWindow)</td>"
                + "<td class=\"n\" id=\"campaign-\(row)-decoded\">\(totals.decodedValues)</td>"
                + "<td class=\"n\"><span id=\"campaign-\(row)-revenue-low\">\(totals.revenueLow)</span>\(currency)</td>"
                + "<td class=\"n\"><span id=\"campaign-\(row)-revenue-high\">\(totals.revenueHigh)</span>\(currency)"
                + "</td></tr>"
        }
        return html + "</table>"
    }
}
