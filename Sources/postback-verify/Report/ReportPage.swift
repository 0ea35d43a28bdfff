@_spi(CommandLine) import Attribution
import Foundation

/// The run report as one self-contained HTML page (`--report FILE.html`, docs/cli.md section 8): inline CSS and
/// inline SVG charts, no script, nothing fetched. Every number has a stable `id` so that a program (the Chromium
/// test) can read the page back. Every text that came from input, the schema or the command line goes through
/// ``PageText`` (escaped, its invisible and bidirectional controls shown as markers, isolated, shortened), every
/// number through ``PageNumber`` (one fixed format), and every code and tier shown is explained in words taken
/// from the library (``ReportLegend``).
enum ReportPage {
    static func render(_ report: RunReport, summary: RunSummary, context: ReportContext) -> [UInt8] {
        var page = head(context) + header(context)
        page += "<h2>Verdicts</h2>\n" + tiles(report, summary: summary, context: context)
        page += reasons(summary)
        page += "<div class=\"cols\">"
        let environments = [KeyEnvironment.production, .development, .custom]
        page += barChart(title: "Valid by key environment", idPrefix: "environment",
                         environments.map { ($0.rawValue, summary.validByEnvironment[$0] ?? 0) })
        page += barChart(title: "Crowd-anonymity tiers", idPrefix: "tier",
                         report.tiers.enumerated().map { ("tier \($0.offset)", $0.element) },
                         ids: report.tiers.indices.map(String.init))
        page += barChart(title: "Coarse values", idPrefix: "coarse",
                         CoarseConversionValue.allCases.enumerated().map { ($0.element.rawValue,
                                                                             report.coarseValues[$0.offset]) })
        page += "</div>\n" + tierLegend()
        page += windowsTable(report)
        page += "<h2>Fine values (first window)</h2>\n" + fineValues(report.fineValues)
        if let days = report.days, !days.isEmpty {
            page += "<h2>Trend by day (UTC)</h2>\n" + trend(report.sortedDays)
        }
        if context.schemaPath != nil {
            page += "<h2>Campaigns</h2>\n" + campaignTable(report)
            page += "<h2>Events</h2>\n" + eventsTable(report.eventsByApp)
        }
        page += "\n</body></html>\n"
        return Array(page.utf8)
    }

    /// The document's head: the policy that forbids fetching and running anything, the title, the styles.
    private static func head(_ context: ReportContext) -> String {
        """
        <!DOCTYPE html>
        <html lang="en"><head><meta charset="utf-8">
        <meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
        <title>postback-verify report: \(PageText.attribute(title(context)))</title>
        <style>
        body{font:15px/1.4 system-ui,sans-serif;margin:24px;color:#1d1d1f;max-width:1120px}
        h1{font-size:24px;margin:0 0 4px}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #ddd}
        .meta{color:#555;overflow-wrap:anywhere}.tiles{display:flex;gap:12px;flex-wrap:wrap}
        .tile{border:1px solid #ddd;border-radius:8px;padding:10px 16px;min-width:120px;max-width:100%}
        .tile b{display:block;font-size:28px}.tile span{color:#555}.tile b.range{font-size:20px}
        table{border-collapse:collapse}td,th{padding:4px 8px;border-bottom:1px solid #eee;text-align:left}
        td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}td.n,.id,.cf{white-space:nowrap}
        td.t{overflow-wrap:anywhere;min-width:9em;max-width:22em}td.why{color:#555;font-size:13px;max-width:40em}
        .sub{display:block;color:#666;font-size:12px}.none{color:#888;font-style:italic}
        tr.total td{font-weight:600;border-top:2px solid #999}.zero{color:#bbb}
        .cf{color:#a00;background:#fde8e8;font:12px ui-monospace,monospace;border-radius:3px;padding:0 2px}
        .cols{display:flex;gap:28px;flex-wrap:wrap}svg text{font:12px system-ui,sans-serif}
        #campaigns{font-size:14px}ul.ev{margin:0;padding:0;list-style:none;font-size:13px;min-width:10em}
        dl.legend{font-size:13px;color:#444}
        dl.legend dt{font-weight:600;float:left;clear:left;width:4.5em}dl.legend dd{margin:0 0 2px 5em}
        </style></head><body>

        """
    }

    /// What the report is of, for the window's title: the label of standard input or of the period, else the
    /// first path read.
    private static func title(_ context: ReportContext) -> String {
        switch context.inputs {
        case .period: context.label
        case .run where context.inputs.readsStandardInput: context.label
        case .run: context.inputs.names.first ?? ""
        }
    }

    /// Paths named in the header before the rest are only counted (the JSON report lists every one).
    static let pathsShown = 12

    /// The heading and the line that names what was counted: the paths read (standard input under its label), or
    /// the state and period exported; when, how long, the schema, and an interruption.
    private static func header(_ context: ReportContext) -> String {
        var html: String
        switch context.inputs {
        case .run(let paths):
            html = "<h1>postback-verify run report</h1>\n<p class=\"meta\" id=\"header\">Read <span id=\"inputs\">"
            let names = context.inputs.names
            html += names.prefix(pathsShown).map { path in
                path.utf8.elementsEqual("-".utf8)
                    ? "standard input, labelled <span id=\"label\">\(PageText.html(context.label))</span>"
                    : PageText.html(path, limit: 100)
            }.joined(separator: ", ")
            if names.count > pathsShown { html += " and \(PageNumber.count(names.count - pathsShown)) more paths" }
            html += "</span>" + (paths.isEmpty ? "" : " (\(PageNumber.count(paths.count)) "
                + (paths.count == 1 ? "path" : "paths") + " given)")
        case .period(let state):
            html = "<h1>postback-verify report of received postbacks</h1>\n<p class=\"meta\" id=\"header\">"
                + "State <span id=\"inputs\">\(PageText.html(state, limit: 100))</span> · "
                + "<span id=\"label\">\(PageText.html(context.label, limit: 200))</span>"
        }
        html += " · started <span id=\"started\">\(RFC3339Timestamp.string(context.started))</span> · "
            + String(format: "%.2f", context.seconds) + " s"
        if let schema = context.schemaPath {
            html += " · schema <span id=\"schema\">\(PageText.html(schema, limit: 100))</span>"
        }
        if let note = context.interrupted { html += " · <b id=\"interrupted\">\(PageText.html(note))</b>" }
        return html + "</p>\n"
    }

    /// The run's totals: verdicts and, with a schema, the postbacks in campaigns and their revenue per currency.
    private static func tiles(_ report: RunReport, summary: RunSummary, context: ReportContext) -> String {
        var html = "<div class=\"tiles\">"
        for (id, title, value) in [("items", "items", summary.items), ("valid", "valid", summary.valid),
                                   ("invalid", "invalid", summary.invalid),
                                   ("duplicates", "duplicates", summary.duplicates),
                                   ("warnings", "warnings", summary.warnings),
                                   ("development", "valid on development keys", summary.validOnDevelopmentKeys)] {
            html += "<div class=\"tile\"><b id=\"count-\(id)\">\(PageNumber.count(value))</b>"
                + "<span>\(title)</span></div>"
        }
        guard context.schemaPath != nil else { return html + "</div>\n" }
        let totals = report.totals
        html += "<div class=\"tile\"><b id=\"total-postbacks\">\(PageNumber.count(totals.postbacks))</b>"
            + "<span>postbacks in campaigns</span></div>"
        for (position, sum) in totals.revenue.sums.enumerated() {
            html += "<div class=\"tile\"><b class=\"range\"><span id=\"total-revenue-\(position)-low\">"
                + "\(PageNumber.amount(sum.low))</span> – <span id=\"total-revenue-\(position)-high\">"
                + "\(PageNumber.amount(sum.high))</span> \(sum.currency.map(PageText.attribute) ?? "")</b>"
                + "<span>revenue range of \(PageNumber.count(sum.postbacks)) postbacks</span></div>"
        }
        return html + "</div>\n"
    }

    /// Invalid reasons and warnings by rule, each code beside what it means.
    private static func reasons(_ summary: RunSummary) -> String {
        "<div class=\"cols\">"
            + countsTable(title: "Invalid reasons", idPrefix: "reason", summary.invalidByCode,
                          explain: ReportLegend.code(explaining:))
            + countsTable(title: "Warnings by rule (the postback stays valid)", idPrefix: "rule",
                          summary.warningsByRule, explain: ReportLegend.rule(explaining:))
            + "</div>\n"
    }

    /// A table of counts by code, in byte order, with each code's meaning.
    private static func countsTable(title: String, idPrefix: String, _ counts: [String: Int],
                                    explain: (String) -> String?) -> String {
        var html = "<div><h2>\(title)</h2><table>"
        let sorted = counts.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
        if sorted.isEmpty { html += "<tr><td class=\"none\">none</td></tr>" }
        for (name, count) in sorted {
            let meaning = explain(name).map(PageText.attribute) ?? ""
            html += "<tr><td>\(PageText.html(name))</td>"
                + "<td class=\"n\" id=\"\(idPrefix)-\(PageText.attribute(name))\">\(PageNumber.count(count))</td>"
                + "<td class=\"why\" id=\"\(idPrefix)-\(PageText.attribute(name))-meaning\">\(meaning)</td></tr>"
        }
        return html + "</table></div>"
    }

    /// What each crowd-anonymity tier lets a postback say.
    private static func tierLegend() -> String {
        var html = "<dl class=\"legend\" id=\"tier-legend\">"
        for tier in 0..<4 {
            html += "<dt>tier \(tier)</dt><dd id=\"tier-\(tier)-meaning\">"
                + "\(PageText.attribute(ReportLegend.tier(tier) ?? ""))</dd>"
        }
        return html + "</dl>\n"
    }
}
