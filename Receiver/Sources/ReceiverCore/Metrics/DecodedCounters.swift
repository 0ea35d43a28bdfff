@_spi(Servers) import Attribution
import CoreMetrics
import Foundation

/// `--schema`'s series: valid postbacks by the schema's campaign names and window, the schema's event names, and
/// the revenue ranges by campaign and currency; with a version 2 schema each also by the network's display name.
/// Label values come from the schema only, never from a postback: a `source-identifier` the schema does not name
/// counts under `(unnamed)`, an app it does not have under `(app not in schema)`, and (version 2) a network the
/// app's entry does not name under `(network not in schema)`, although the ad network id is signed: Apple signs
/// any registered network's id, and the schema alone bounds the series. Every series is made at start-up (as
/// many as the schema has names and pairs of them).
///
/// - `postback_receiver_decoded_total{campaign, window}` (version 2: `{campaign, network, window}`)
/// - `postback_receiver_decoded_events_total{event}` (version 2: `{event, network}`): each event a decoded value
///   means (a postback meaning `install` and `purchase` counts under both)
/// - `postback_receiver_decoded_revenue_low_total{campaign, currency}` and `…_high_total` (version 2: `{campaign,
///   network, currency}`): the sums of the revenue ranges' bounds (the true revenue lies between the two sums)
///
/// A version 1 schema's series keep their labels: the network label comes with the version that names networks.
struct DecodedCounters: Sendable {
    static let unnamedCampaign = "(unnamed)"
    static let unknownApp = "(app not in schema)"
    static let unknownNetwork = "(network not in schema)"

    /// True with a version 2 schema: every series has a `network` label.
    private let labelsNetworks: Bool
    private let conversions: [SeriesKey: [CoreMetrics.Counter]]
    private let events: [SeriesKey: CoreMetrics.Counter]
    private let revenueLow: [SeriesKey: CoreMetrics.FloatingPointCounter]
    private let revenueHigh: [SeriesKey: CoreMetrics.FloatingPointCounter]

    /// One series' label values, compared by their exact bytes: two names differing only in code points
    /// (canonically equivalent) are two series, as Prometheus sees them. `network` is empty without the label.
    struct SeriesKey: Hashable {
        let name: ExactString
        let network: ExactString
        let currency: ExactString

        init(_ name: String, network: String, currency: String = "") {
            self.name = ExactString(name)
            self.network = ExactString(network)
            self.currency = ExactString(currency)
        }
    }

    init(_ schema: ConversionSchema, factory: any MetricsFactory) {
        let labelsNetworks = schema.version >= 2
        self.labelsNetworks = labelsNetworks
        // Every (campaign, network) pair a decoded postback can be counted under: a network's own campaigns with
        // it, the app's campaigns and `(unnamed)` with each network of the entry and with `(network not in
        // schema)`, and an unknown app with an unknown network.
        var pairs: Set<SeriesKey> = [SeriesKey(Self.unknownApp, network: labelsNetworks ? Self.unknownNetwork : "")]
        var eventKeys: Set<SeriesKey> = []
        var revenueKeys: Set<SeriesKey> = []
        for app in schema.apps {
            let currency = app.currency ?? "none"
            let networkLabels = labelsNetworks ? app.networks.map(\.name) + [Self.unknownNetwork] : [""]
            var appPairs: [SeriesKey] = []
            for network in networkLabels {
                for campaign in app.campaigns.names + [Self.unnamedCampaign] {
                    appPairs.append(SeriesKey(campaign, network: network))
                }
            }
            for network in app.networks where labelsNetworks {
                appPairs += network.campaigns.names.map { SeriesKey($0, network: network.name) }
            }
            pairs.formUnion(appPairs)
            revenueKeys.formUnion(appPairs.map {
                SeriesKey($0.name.description, network: $0.network.description, currency: currency)
            })
            for window in app.windows {
                for meaning in Array(window.fine.values) + Array(window.coarse.values) {
                    for event in meaning.events {
                        eventKeys.formUnion(networkLabels.map { SeriesKey(event, network: $0) })
                    }
                }
            }
        }

        // A series' labels: the first, the network's (when labelled), then the last.
        func dimensions(_ first: (String, ExactString), _ key: SeriesKey, _ last: (String, String)?)
            -> [(String, String)] {
            [(first.0, first.1.description)] + (labelsNetworks ? [("network", key.network.description)] : [])
                + (last.map { [$0] } ?? [])
        }

        var conversions: [SeriesKey: [CoreMetrics.Counter]] = [:]
        for key in pairs {
            conversions[key] = (1...3).map { window in
                CoreMetrics.Counter(label: "postback_receiver_decoded_total",
                                    dimensions: dimensions(("campaign", key.name), key, ("window", String(window))),
                                    factory: factory)
            }
        }
        self.conversions = conversions
        var events: [SeriesKey: CoreMetrics.Counter] = [:]
        for key in eventKeys {
            events[key] = CoreMetrics.Counter(label: "postback_receiver_decoded_events_total",
                                              dimensions: dimensions(("event", key.name), key, nil), factory: factory)
        }
        self.events = events
        var low: [SeriesKey: CoreMetrics.FloatingPointCounter] = [:]
        var high: [SeriesKey: CoreMetrics.FloatingPointCounter] = [:]
        for key in revenueKeys {
            let labels = dimensions(("campaign", key.name), key, ("currency", key.currency.description))
            low[key] = CoreMetrics.FloatingPointCounter(label: "postback_receiver_decoded_revenue_low_total",
                                                        dimensions: labels, factory: factory)
            high[key] = CoreMetrics.FloatingPointCounter(label: "postback_receiver_decoded_revenue_high_total",
                                                         dimensions: labels, factory: factory)
        }
        revenueLow = low
        revenueHigh = high
    }

    /// The campaign label of a decoded conversion: the schema's name, or one of the two reserved labels.
    static func campaignLabel(_ conversion: DecodedConversion) -> String {
        conversion.campaign ?? (conversion.appKnown ? unnamedCampaign : unknownApp)
    }

    /// The network label of a decoded conversion (version 2): the name the app's entry gives its signed ad
    /// network, or the reserved label.
    static func networkLabel(_ conversion: DecodedConversion) -> String {
        conversion.network ?? unknownNetwork
    }

    /// Counts one decoded conversion under its campaign, network and window, its events and its revenue range.
    func count(_ conversion: DecodedConversion) {
        let campaign = Self.campaignLabel(conversion)
        let network = labelsNetworks ? Self.networkLabel(conversion) : ""
        let key = SeriesKey(campaign, network: network)
        if let perWindow = conversions[key], perWindow.indices.contains(conversion.window.number - 1) {
            perWindow[conversion.window.number - 1].increment()
        }
        guard let meaning = conversion.meaning else { return }
        for event in meaning.events { events[SeriesKey(event, network: network)]?.increment() }
        if let revenue = meaning.revenue {
            let revenueKey = SeriesKey(campaign, network: network, currency: conversion.currency ?? "none")
            revenueLow[revenueKey]?.increment(by: NSDecimalNumber(decimal: revenue.low).doubleValue)
            revenueHigh[revenueKey]?.increment(by: NSDecimalNumber(decimal: revenue.high).doubleValue)
        }
    }
}
