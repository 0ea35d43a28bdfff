import Attribution
import CoreMetrics
import Foundation
import Prometheus
import Synchronization

/// The receiver's metrics, on a Prometheus registry that `GET /metrics` renders.
///
/// Every label takes its values from a small fixed set, never from the request (an attacker's path, method, kid or
/// code would otherwise make a new time series per request): so every series is made once, at start-up, and a
/// request only increments existing counters.
///
/// The request counts and durations are Hummingbird's `MetricsMiddleware`'s, which records through the process's
/// `MetricsSystem` (``bootstrapMetricsSystem()``). Its names and labels are mapped onto this registry's by
/// ``sanitize(_:_:)``: `postback_receiver_requests_total{route, status}` (status as its class, `2xx`, `4xx`,
/// `5xx`), `postback_receiver_request_duration_seconds{route}`, `postback_receiver_request_errors_total{route,
/// status}` and `postback_receiver_requests_in_flight`. The middleware's method label is dropped (the HTTP parser
/// accepts dozens of methods a sender picks; every route serves one) and its route, the router's matched path or
/// `NotFound`, becomes the ``ReceiverRoute`` name.
public final class ReceiverMetrics: Sendable {
    let registry: PrometheusCollectorRegistry
    /// Also where the relay's series are made (``RelayMetrics``).
    let factory: PrometheusMetricsFactory
    /// `postback_receiver_verdicts_total{kind, verdict, code}`: code is the first error's code (`none` if valid).
    private let verdicts: [String: CoreMetrics.Counter]
    /// `postback_receiver_key_environment_total{environment}`: which keys verified the signatures that held.
    private let environments: [String: CoreMetrics.Counter]
    /// `postback_receiver_valid_by_tier_total{tier}`: valid AdAttributionKit postbacks by crowd-anonymity tier.
    private let tiers: [CoreMetrics.Counter]
    /// `postback_receiver_valid_without_conversion_value_total{kind}`.
    private let withoutConversionValue: [String: CoreMetrics.Counter]
    /// `postback_receiver_stored_total{verdict}` and `postback_receiver_not_stored_total{reason}`.
    private let stored: [String: CoreMetrics.Counter]
    private let notStored: [String: CoreMetrics.Counter]
    /// `postback_receiver_commits_total`: group commits (stored rows ÷ commits is the mean group size).
    private let commits: CoreMetrics.Counter
    /// `postback_receiver_queue_depth{queue}` and `postback_receiver_queue_capacity{queue}` (`verification`,
    /// `commit`): submissions waiting and the bound past which requests are answered 503 (an alert on the ratio
    /// warns before senders are turned away). Set when `/metrics` is rendered.
    private let queueDepths: [String: CoreMetrics.Gauge]
    private let queueCapacities: [String: CoreMetrics.Gauge]
    /// `postback_receiver_open_connections` and `postback_receiver_max_connections`: connections open now and
    /// the cap (beyond it new connections wait in the kernel's backlog). Set when `/metrics` is rendered.
    private let openConnections: CoreMetrics.Gauge
    private let maximumConnections: CoreMetrics.Gauge
    /// `postback_receiver_request_timeouts_total`: connections closed because a request's head and body did not
    /// arrive within `--request-timeout` (slow or stalled clients).
    private let requestTimeouts: CoreMetrics.Counter
    /// `postback_receiver_development_keys_trusted`: 1 while Apple's development keys are trusted
    /// (`--allow-development`, which production traffic must never have), else 0; an alert can watch it.
    private let developmentKeysTrusted: CoreMetrics.Gauge
    /// `postback_receiver_log_lines_dropped_total`: log lines standard error did not take (past the 1 MiB of
    /// lines waiting for it, refused, or still waiting when a stop gave up on it). Brought up to the log's count
    /// when `/metrics` is rendered; `reportedDrops` is how much of that count it holds already.
    private let logLinesDropped: CoreMetrics.Counter
    private let reportedDrops = Mutex(0)
    /// Failed renewals of the deduplication state's lease (``leaseRenewals(failedTotal:)``).
    private let leaseRenewalFailures: CoreMetrics.Counter
    private let reportedRenewalFailures = Mutex(0)
    /// `postback_receiver_signature_disagreements_total`: signatures the library's own arithmetic accepted and
    /// libcrypto, re-checking a sample, rejected (each item answered invalid). Anything but 0 is a bug to report
    /// (``signatureDisagreements(total:)``).
    private let signatureDisagreementCount: CoreMetrics.Counter
    private let reportedDisagreements = Mutex(0)
    static let queueNames = ["verification", "commit"]
    /// With `--schema`: the decoded conversions, by the schema's own names (``DecodedCounters``).
    private let decoded: DecodedCounters?

    static let statusClasses = ["2xx", "4xx", "5xx"]
    static let kinds: [ItemKind] = [.postback, .impression, .skadnetwork, .unknown]
    static let codes: [AttributionError.Code] = [
        .malformedInput, .unsupportedAlgorithm, .unknownKey, .untrustedKey, .badSignature, .invalidField,
        .invalidUnsignedField, .duplicate, .ruleWarning, .unsupportedVersion,
    ]
    static let environmentNames = ["production", "development", "custom"]
    /// Why a body was answered without being stored.
    enum NotStoredReason: String, CaseIterable, Sendable {
        /// Over the invalid quota, proven forged or malformed or an exact retry: answered 200.
        case quota
        /// Over the invalid quota, could still be genuine: answered 503 (Apple sends it again).
        case retryLater = "retry-later"
        /// Storing failed: answered 500.
        case failure
        /// A queue was at its bound (`--queue-depth`): answered 503 with `Retry-After`, Apple sends it again.
        case overloaded
    }

    /// The receiver's series; with `schema`, also the decoded conversions' series, one per name the schema holds.
    public init(schema: ConversionSchema? = nil) {
        let registry = PrometheusCollectorRegistry()
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.nameAndLabelSanitizer = { Self.sanitize($0, $1) }
        factory.defaultDurationHistogramBuckets = [
            .microseconds(250), .microseconds(500), .milliseconds(1), .milliseconds(2), .milliseconds(5),
            .milliseconds(10), .milliseconds(20), .milliseconds(50), .milliseconds(100), .milliseconds(250),
            .milliseconds(500), .seconds(1), .seconds(2.5), .seconds(5), .seconds(10),
        ]
        self.registry = registry
        self.factory = factory

        // The middleware's series, made now so that each is there (at 0) before its first request: the
        // middleware's own handles land on these same series (a registry returns the series a name and labels
        // already have).
        for route in ReceiverRoute.allCases {
            for status in Self.statusClasses {
                for name in ["postback_receiver_requests_total", "postback_receiver_request_errors_total"] {
                    _ = CoreMetrics.Counter(label: name, dimensions: [("route", route.rawValue), ("status", status)],
                                            factory: factory)
                }
            }
            _ = CoreMetrics.Timer(label: "postback_receiver_request_duration_seconds",
                                  dimensions: [("route", route.rawValue)], factory: factory)
        }
        _ = CoreMetrics.Meter(label: "postback_receiver_requests_in_flight", factory: factory)

        var verdicts: [String: CoreMetrics.Counter] = [:]
        var withoutConversionValue: [String: CoreMetrics.Counter] = [:]
        for kind in Self.kinds {
            let codes = ["none"] + Self.codes.map(\.rawValue) + ["other"]
            for code in codes {
                verdicts[Self.verdictKey(kind, code)] = CoreMetrics.Counter(
                    label: "postback_receiver_verdicts_total",
                    dimensions: [("kind", kind.rawValue), ("verdict", code == "none" ? "valid" : "invalid"),
                                 ("code", code)],
                    factory: factory)
            }
            withoutConversionValue[kind.rawValue] = CoreMetrics.Counter(
                label: "postback_receiver_valid_without_conversion_value_total", dimensions: [("kind", kind.rawValue)],
                factory: factory)
        }
        self.verdicts = verdicts
        self.withoutConversionValue = withoutConversionValue
        var environments: [String: CoreMetrics.Counter] = [:]
        for name in Self.environmentNames {
            environments[name] = CoreMetrics.Counter(label: "postback_receiver_key_environment_total",
                                         dimensions: [("environment", name)], factory: factory)
        }
        self.environments = environments
        tiers = (0...3).map {
            CoreMetrics.Counter(label: "postback_receiver_valid_by_tier_total", dimensions: [("tier", String($0))], factory: factory)
        }
        var stored: [String: CoreMetrics.Counter] = [:]
        for verdict in ["valid", "invalid"] {
            stored[verdict] = CoreMetrics.Counter(label: "postback_receiver_stored_total", dimensions: [("verdict", verdict)],
                                      factory: factory)
        }
        self.stored = stored
        var notStored: [String: CoreMetrics.Counter] = [:]
        for reason in NotStoredReason.allCases {
            notStored[reason.rawValue] = CoreMetrics.Counter(label: "postback_receiver_not_stored_total",
                                                 dimensions: [("reason", reason.rawValue)], factory: factory)
        }
        self.notStored = notStored
        commits = CoreMetrics.Counter(label: "postback_receiver_commits_total", factory: factory)
        var queueDepths: [String: CoreMetrics.Gauge] = [:]
        var queueCapacities: [String: CoreMetrics.Gauge] = [:]
        for name in Self.queueNames {
            queueDepths[name] = CoreMetrics.Gauge(label: "postback_receiver_queue_depth",
                                                  dimensions: [("queue", name)], factory: factory)
            queueCapacities[name] = CoreMetrics.Gauge(label: "postback_receiver_queue_capacity",
                                                      dimensions: [("queue", name)], factory: factory)
        }
        self.queueDepths = queueDepths
        self.queueCapacities = queueCapacities
        openConnections = CoreMetrics.Gauge(label: "postback_receiver_open_connections", factory: factory)
        maximumConnections = CoreMetrics.Gauge(label: "postback_receiver_max_connections", factory: factory)
        requestTimeouts = CoreMetrics.Counter(label: "postback_receiver_request_timeouts_total", factory: factory)
        developmentKeysTrusted = CoreMetrics.Gauge(label: "postback_receiver_development_keys_trusted",
                                                   factory: factory)
        logLinesDropped = CoreMetrics.Counter(label: "postback_receiver_log_lines_dropped_total", factory: factory)
        leaseRenewalFailures = CoreMetrics.Counter(label: "postback_receiver_lease_renewal_failures_total",
                                                   factory: factory)
        signatureDisagreementCount = CoreMetrics.Counter(label: "postback_receiver_signature_disagreements_total",
                                                         factory: factory)
        decoded = schema.map { DecodedCounters($0, factory: factory) }
    }

    private static func verdictKey(_ kind: ItemKind, _ code: String) -> String { "\(kind.rawValue) \(code)" }

    /// Makes this registry the process's `MetricsSystem`, where Hummingbird's `MetricsMiddleware` records; once
    /// per process (the executable calls it; a second call traps, as `MetricsSystem.bootstrap` does).
    public func bootstrapMetricsSystem() {
        MetricsSystem.bootstrap(factory)
    }

    /// Hummingbird's metric names and labels as this registry's (see the type's comment); the receiver's own pass
    /// unchanged. Any other name gets the receiver's prefix and keeps only bounded labels.
    static func sanitize(_ name: String, _ labels: [(String, String)]) -> (String, [(String, String)]) {
        if name.utf8.starts(with: "postback_receiver_".utf8) { return (name, labels) }
        func label(_ key: String) -> String? {
            labels.first { $0.0.utf8.elementsEqual(key.utf8) }?.1
        }
        let route = ReceiverRoute(endpointPath: label("http.route")).rawValue
        let status = statusClass(label("http.response.status_code") ?? label("error.type"))
        switch name {
        case "hb.requests":
            return ("postback_receiver_requests_total", [("route", route), ("status", status)])
        case "http.server.request.duration":
            return ("postback_receiver_request_duration_seconds", [("route", route)])
        case "hb.request.errors":
            return ("postback_receiver_request_errors_total", [("route", route), ("status", status)])
        case "http.server.active_requests":
            return ("postback_receiver_requests_in_flight", [])
        default:
            let bounded = label("http.route") == nil ? [] : [("route", route)]
            return ("postback_receiver_" + String(name.map { $0 == "." ? "_" : $0 }), bounded)
        }
    }

    /// `2xx`, `4xx`, `5xx` (or `other`) from a status code's text.
    static func statusClass(_ code: String?) -> String {
        guard let code, code.utf8.count == 3, let first = code.utf8.first,
              (UInt8(ascii: "1")...UInt8(ascii: "5")).contains(first) else { return "other" }
        return String(UnicodeScalar(first)) + "xx"
    }

    /// Counts one final verdict (after deduplication): kind, first error code, key environment, tier, and a
    /// valid postback without a conversion value.
    func verdict(_ postback: VerifiedPostback) {
        let code: String
        if let first = postback.firstError {
            let raw = first.code?.rawValue
            code = Self.codes.contains { $0.rawValue == raw } ? raw ?? "other" : "other"
        } else {
            code = "none"
        }
        let kind = postback.kind
        verdicts[Self.verdictKey(kind, code)]?.increment()
        if postback.signatureVerified, let environment = postback.environment {
            environments[environment.rawValue]?.increment()
        }
        guard postback.verdict == .valid else { return }
        if kind == .postback, let tier = postback.facts?.tier, tiers.indices.contains(tier) {
            tiers[tier].increment()
        }
        if !postback.hasConversionValue {
            withoutConversionValue[kind.rawValue]?.increment()
        }
    }

    /// Counts one stored (or, without storage, answered) postback: its final verdict, and with a schema its
    /// decoded conversion.
    func verdict(_ postback: ReceivedPostback) {
        verdict(postback.verified)
        if let decoded, let conversion = postback.decoded {
            decoded.count(conversion)
        }
    }

    func stored(_ verdict: Verdict) {
        stored[verdict.rawValue]?.increment()
    }

    func notStored(_ reason: NotStoredReason, count: Int = 1) {
        notStored[reason.rawValue]?.increment(by: count)
    }

    func committed() {
        commits.increment()
    }

    /// Sets a queue's depth and bound gauges (`queue` is `verification` or `commit`).
    func queue(_ queue: String, depth: Int, capacity: Int) {
        queueDepths[queue]?.record(depth)
        queueCapacities[queue]?.record(capacity)
    }

    /// Sets the gauge that says whether Apple's development keys are trusted (1) or not (0).
    func developmentKeys(trusted: Bool) {
        developmentKeysTrusted.record(trusted ? 1 : 0)
    }

    /// Sets the open connections gauge and the cap.
    func connections(open: Int, maximum: Int) {
        openConnections.record(open)
        maximumConnections.record(maximum)
    }

    /// Brings the dropped log lines counter up to `total`, the log's count since the process started.
    func logLines(droppedTotal total: Int) {
        let increase = reportedDrops.withLock { reported in
            defer { reported = max(reported, total) }
            return max(0, total - reported)
        }
        if increase > 0 { logLinesDropped.increment(by: increase) }
    }

    /// Brings the failed lease renewals counter up to `total`, the store's count since it opened.
    func leaseRenewals(failedTotal total: Int) {
        let increase = reportedRenewalFailures.withLock { reported in
            defer { reported = max(reported, total) }
            return max(0, total - reported)
        }
        if increase > 0 { leaseRenewalFailures.increment(by: increase) }
    }

    /// Brings the signature disagreements counter up to `total`, the library's count since the process started
    /// (`ECPublicKey.signatureDisagreements`).
    ///
    /// - Parameter total: the library's count.
    /// - Returns: how many disagreements are new since the last call, for the caller to log.
    func signatureDisagreements(total: Int) -> Int {
        let increase = reportedDisagreements.withLock { reported in
            defer { reported = max(reported, total) }
            return max(0, total - reported)
        }
        if increase > 0 { signatureDisagreementCount.increment(by: increase) }
        return increase
    }

    /// Counts a connection closed by the request deadline.
    func requestTimedOut() {
        requestTimeouts.increment()
    }

    /// The Prometheus text exposition of every series.
    func render() -> [UInt8] {
        var buffer: [UInt8] = []
        buffer.reserveCapacity(16 * 1024)
        registry.emit(into: &buffer)
        return buffer
    }
}
