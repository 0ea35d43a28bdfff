@_spi(CommandLine) import Attribution
import Foundation

extension RunReport {
    /// The campaigns summed: the campaign table's totals row and the top of the page.
    struct Totals {
        /// Postbacks, per window, decoded, with revenue and outside the schema, over every campaign.
        var postbacks = 0
        var windows = [0, 0, 0]
        var decodedValues = 0
        var withRevenue = 0
        var appNotInSchema = 0
        /// Revenue per currency (apps may count in different ones).
        var revenue = RevenueSums()
    }

    /// The events of one app: how many of its postbacks' values stood for each, most counted first.
    struct AppEvents {
        let app: UInt64
        let appName: String?
        /// The app's postbacks in every campaign, events or not.
        let postbacks: Int
        let events: [(name: String, count: Int)]
    }

    /// Every campaign summed.
    var totals: Totals {
        var totals = Totals()
        for campaign in campaigns.values {
            totals.postbacks += campaign.postbacks
            for (window, count) in campaign.windows.enumerated() { totals.windows[window] += count }
            totals.decodedValues += campaign.decodedValues
            totals.withRevenue += campaign.withRevenue
            totals.appNotInSchema += campaign.appNotInSchema
            totals.revenue.add(currency: campaign.currency, postbacks: campaign.withRevenue,
                               low: campaign.revenueLow, high: campaign.revenueHigh)
        }
        return totals
    }

    /// Per app (in number order) with an event counted, its campaigns' event counts added up.
    var eventsByApp: [AppEvents] {
        var apps: [UInt64: (name: String?, postbacks: Int, events: [ExactString: Int])] = [:]
        for (key, campaign) in sortedCampaigns {
            var app = apps[key.app] ?? (nil, 0, [:])
            app.name = app.name ?? campaign.appName
            app.postbacks += campaign.postbacks
            app.events.merge(campaign.events, uniquingKeysWith: +)
            apps[key.app] = app
        }
        return apps.filter { !$0.value.events.isEmpty }.sorted { $0.key < $1.key }.map { app, totals in
            AppEvents(app: app, appName: totals.name, postbacks: totals.postbacks,
                      events: Self.eventsByCount(totals.events))
        }
    }

    /// Event counts by name in byte order (the JSON report's order).
    static func sortedEvents(_ events: [ExactString: Int]) -> [(name: String, count: Int)] {
        events.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }.map { ($0.key.description, $0.value) }
    }

    /// Event counts most counted first, equal counts by name in byte order (the page's order).
    static func eventsByCount(_ events: [ExactString: Int]) -> [(name: String, count: Int)] {
        events.sorted { first, second in
            first.value != second.value ? first.value > second.value
                : first.key.utf8.lexicographicallyPrecedes(second.key.utf8)
        }.map { ($0.key.description, $0.value) }
    }

    /// The JSON report's `totals`.
    func writeTotals(to writer: inout JSONWriter) {
        let totals = self.totals
        writer.open()
        writer.member("postbacks") { $0.integer(totals.postbacks) }
        for window in 0..<3 {
            writer.member("window-\(window + 1)-postbacks") { $0.integer(totals.windows[window]) }
        }
        writer.member("decoded-values") { $0.integer(totals.decodedValues) }
        writer.member("with-revenue") { $0.integer(totals.withRevenue) }
        writer.member("app-not-in-schema") { $0.integer(totals.appNotInSchema) }
        writer.member("revenue") { totals.revenue.write(to: &$0) }
        writer.close()
    }

    /// The JSON report's `events`: per app, its event counts by name.
    func writeEvents(to writer: inout JSONWriter) {
        writer.array(eventsByApp) { writer, app in
            writer.open()
            writer.member("advertised-item-identifier") { $0.raw(String(app.app)) }
            writer.member("events") { writer in
                writer.counts(app.events.sorted { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) })
            }
            writer.close()
        }
    }
}
