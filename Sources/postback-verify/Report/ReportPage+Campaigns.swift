@_spi(CommandLine) import Attribution
import Foundation

extension ReportPage {
    /// Events listed in a campaign's row before the rest are only counted (the events table lists every one).
    static let eventsPerRow = 5

    /// Per campaign: its app (by name where the schema gives one, and whether the schema has it at all), network,
    /// name and source, postbacks per window, values decoded, its events and its revenue range; then the totals.
    static func campaignTable(_ report: RunReport) -> String {
        let campaigns = report.sortedCampaigns
        let showsNetwork = campaigns.contains { $0.totals.networkName != nil }
        let columns = showsNetwork ? 11 : 10
        var html = "<table id=\"campaigns\"><tr><th>app</th>" + (showsNetwork ? "<th>network</th>" : "")
            + "<th>campaign</th><th class=\"n\">postbacks</th><th class=\"n\">window 1</th>"
            + "<th class=\"n\">window 2</th><th class=\"n\">window 3</th><th class=\"n\">decoded values</th>"
            + "<th>events</th><th class=\"n\">revenue low</th><th class=\"n\">revenue high</th></tr>"
        if campaigns.isEmpty { html += "<tr><td colspan=\"\(columns)\" class=\"none\">no valid postbacks</td></tr>" }
        html += campaignRows(campaigns, showsNetwork: showsNetwork)
        let totals = report.totals
        html += "<tr class=\"total\" id=\"campaigns-total\"><td colspan=\"\(showsNetwork ? 3 : 2)\">Total of "
            + "\(PageNumber.count(campaigns.count)) campaign\(campaigns.count == 1 ? "" : "s")</td>"
            + "<td class=\"n\" id=\"campaigns-total-postbacks\">\(PageNumber.count(totals.postbacks))</td>"
        for (window, count) in totals.windows.enumerated() {
            html += "<td class=\"n\" id=\"campaigns-total-window-\(window + 1)\">\(PageNumber.count(count))</td>"
        }
        html += "<td class=\"n\" id=\"campaigns-total-decoded\">\(PageNumber.count(totals.decodedValues))</td>"
            + "<td class=\"none\">by app below</td>"
            + revenueCells(totals.revenue, idPrefix: "campaigns-total-revenue") + "</tr>"
        return html + "</table>\n"
    }

    /// One row per campaign, in the order given, numbered from 0 in the ids.
    static func campaignRows(_ campaigns: [(key: RunReport.CampaignKey, totals: RunReport.CampaignTotals)],
                             showsNetwork: Bool) -> String {
        var html = ""
        for (row, campaign) in campaigns.enumerated() {
            let totals = campaign.totals, id = "campaign-\(row)"
            let outside = totals.appNotInSchema == totals.postbacks
            html += "<tr id=\"\(id)\">" + appCell(campaign.key.app, name: totals.appName, id: id,
                                                    notInSchema: totals.appNotInSchema, of: totals.postbacks)
            if showsNetwork {
                html += "<td class=\"t\" id=\"\(id)-network\">"
                    + (totals.networkName.map { PageText.html($0, limit: 40) } ?? "<span class=\"none\">—</span>")
                    + "</td>"
            }
            html += "<td class=\"t\"><span id=\"\(id)-name\">"
                + (totals.name.map { PageText.html($0) } ?? "<span class=\"none\">(unnamed)</span>") + "</span>"
                + "<span class=\"sub\">" + (campaign.key.sourceIdentifier.map { "source \(PageText.html($0))" }
                    ?? PageText.html(campaign.key.sourceLabel)) + "</span></td>"
                + "<td class=\"n\" id=\"\(id)-postbacks\">\(PageNumber.count(totals.postbacks))</td>"
            for (window, count) in totals.windows.enumerated() {
                html += "<td class=\"n\" id=\"\(id)-window-\(window + 1)\">\(PageNumber.count(count))</td>"
            }
            html += "<td class=\"n\" id=\"\(id)-decoded\">\(PageNumber.count(totals.decodedValues))</td>"
                + "<td class=\"t\">" + eventList(RunReport.eventsByCount(totals.events), id: id) + "</td>"
            if outside {
                html += "<td class=\"n none\" colspan=\"2\">app not in the schema</td>"
            } else if totals.withRevenue == 0 {
                html += "<td class=\"n none\" colspan=\"2\">no revenue range</td>"
            } else {
                let currency = totals.currency.map { " " + PageText.attribute($0) } ?? ""
                html += "<td class=\"n\"><span id=\"\(id)-revenue-low\">\(PageNumber.amount(totals.revenueLow))"
                    + "</span>\(currency)</td><td class=\"n\"><span id=\"\(id)-revenue-high\">"
                    + "\(PageNumber.amount(totals.revenueHigh))</span>\(currency)</td>"
            }
            html += "</tr>"
        }
        return html
    }

    /// The app's cell: its name when the schema gives one, its App Store ID, and, in words, when the schema does
    /// not have the app for all or some of its postbacks (nothing of those could be decoded).
    private static func appCell(_ app: UInt64, name: String?, id: String, notInSchema: Int, of postbacks: Int)
        -> String {
        var html = "<td class=\"t\">"
        if let name { html += "<span id=\"\(id)-app-name\">\(PageText.html(name, limit: 60))</span>" }
        html += "<span class=\"id\(name == nil ? "" : " sub")\" id=\"\(id)-app\">\(app)</span>"
        if notInSchema == postbacks {
            html += "<span class=\"sub none\" id=\"\(id)-app-unknown\">not in the schema</span>"
        } else if notInSchema > 0 {
            html += "<span class=\"sub none\" id=\"\(id)-app-unknown\">\(PageNumber.count(notInSchema)) "
                + "postback\(notInSchema == 1 ? "" : "s") outside the schema's dates</span>"
        }
        return html + "</td>"
    }

    /// A campaign's events, most counted first, the first few by name.
    private static func eventList(_ events: [(name: String, count: Int)], id: String) -> String {
        guard !events.isEmpty else { return "<span class=\"none\">none</span>" }
        var html = "<ul class=\"ev\">"
        for (position, event) in events.prefix(eventsPerRow).enumerated() {
            html += "<li><span id=\"\(id)-event-\(position)-name\">\(PageText.html(event.name, limit: 24))</span> "
                + "<span id=\"\(id)-event-\(position)\">\(PageNumber.count(event.count))</span></li>"
        }
        if events.count > eventsPerRow {
            html += "<li class=\"none\">and \(PageNumber.count(events.count - eventsPerRow)) more</li>"
        }
        return html + "</ul>"
    }

    /// Per app, every event its postbacks' values stood for: how many postbacks, and their share of the app's.
    static func eventsTable(_ apps: [RunReport.AppEvents]) -> String {
        var html = "<table id=\"events\"><tr><th>app</th><th>event</th><th class=\"n\">postbacks</th>"
            + "<th class=\"n\">share of the app's postbacks</th></tr>"
        if apps.isEmpty {
            html += "<tr><td colspan=\"4\" class=\"none\">no postback's value stands for an event</td></tr>"
        }
        for (position, app) in apps.enumerated() {
            for (row, event) in app.events.enumerated() {
                let id = "event-\(position)-\(row)"
                html += "<tr>"
                if row == 0 {
                    html += "<td class=\"t\" rowspan=\"\(app.events.count)\">"
                        + (app.appName.map { PageText.html($0, limit: 60) + "<span class=\"sub\">\(app.app)</span>" }
                            ?? "\(app.app)") + "</td>"
                }
                let share = app.postbacks == 0 ? 0 : Double(event.count) / Double(app.postbacks) * 100
                html += "<td class=\"t\" id=\"\(id)-name\">\(PageText.html(event.name))</td>"
                    + "<td class=\"n\" id=\"\(id)\">\(PageNumber.count(event.count))</td>"
                    + "<td class=\"n\">\(String(format: "%.1f", share))%</td></tr>"
            }
        }
        return html + "</table>\n"
    }
}
