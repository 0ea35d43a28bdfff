import CoreMetrics

/// The relay's series, one set per destination (label `destination`: the `--forward`, `--forward-all` or
/// `--webhook` value as given, a fixed set from the command line): deliveries by outcome, attempts, deliveries a
/// dead holder handed back, and, read from the outbox every few seconds, the deliveries owed and the oldest one's
/// age.
final class RelayMetrics: Sendable {
    /// What became of an attempt, as `postback_receiver_relay_deliveries_total{outcome}` counts it.
    enum Outcome: String, CaseIterable, Sendable {
        /// The destination answered 2xx.
        case delivered
        /// Tried again later (5xx, 408, 429, no answer within the deadline, no connection).
        case retried
        /// Never again: a 4xx other than 408 and 429, or a retry that would fall past the horizon.
        case dead
    }

    private struct Series: Sendable {
        let outcomes: [String: CoreMetrics.Counter]
        let attempts: CoreMetrics.Counter
        let reclaimed: CoreMetrics.Counter
        let depth: CoreMetrics.Gauge
        let oldest: CoreMetrics.Gauge
        let inFlight: CoreMetrics.Gauge
    }

    private let series: [String: Series]

    /// Every destination's series, at 0, on `factory` (the receiver's registry).
    init(destinations: [String], factory: any MetricsFactory) {
        var series: [String: Series] = [:]
        for name in destinations {
            let label = [("destination", name)]
            var outcomes: [String: CoreMetrics.Counter] = [:]
            for outcome in Outcome.allCases {
                outcomes[outcome.rawValue] = CoreMetrics.Counter(
                    label: "postback_receiver_relay_deliveries_total",
                    dimensions: label + [("outcome", outcome.rawValue)], factory: factory)
            }
            series[name] = Series(
                outcomes: outcomes,
                attempts: CoreMetrics.Counter(label: "postback_receiver_relay_attempts_total", dimensions: label,
                                              factory: factory),
                reclaimed: CoreMetrics.Counter(label: "postback_receiver_relay_reclaimed_total", dimensions: label,
                                               factory: factory),
                depth: CoreMetrics.Gauge(label: "postback_receiver_relay_outbox_depth", dimensions: label,
                                         factory: factory),
                oldest: CoreMetrics.Gauge(label: "postback_receiver_relay_oldest_owed_seconds", dimensions: label,
                                          factory: factory),
                inFlight: CoreMetrics.Gauge(label: "postback_receiver_relay_in_flight", dimensions: label,
                                            factory: factory))
        }
        self.series = series
    }

    func attempted(_ destination: String, reclaimed: Bool) {
        series[destination]?.attempts.increment()
        if reclaimed { series[destination]?.reclaimed.increment() }
    }

    func finished(_ destination: String, _ outcome: Outcome) {
        series[destination]?.outcomes[outcome.rawValue]?.increment()
    }

    func inFlight(_ destination: String, _ count: Int) {
        series[destination]?.inFlight.record(count)
    }

    /// The outbox's backlog of `destination`: deliveries owed, and the oldest one's age in seconds (0 when none).
    func backlog(_ destination: String, owed: Int, oldestAgeSeconds: Double) {
        series[destination]?.depth.record(owed)
        series[destination]?.oldest.record(oldestAgeSeconds)
    }
}
