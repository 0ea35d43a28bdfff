import Attribution
import CoreMetrics
import Prometheus

/// The receiver's metrics, on a Prometheus registry that `GET /metrics` renders.
///
/// Every label takes its values from a small fixed set, never from the request (an attacker's path, kid or code
/// would otherwise make a new time series per request): so every series is made once, at start-up, and a request
/// only increments existing counters.
public final class ReceiverMetrics: Sendable {
    public let registry: PrometheusCollectorRegistry
    private let factory: PrometheusMetricsFactory

    /// `postback_receiver_requests_total{route, status}`: status is the class (`2xx`, `4xx`, `5xx`).
    private let requests: [ReceiverRoute: [CoreMetrics.Counter]]
    /// `postback_receiver_request_duration_seconds{route}`.
    private let durations: [ReceiverRoute: CoreMetrics.Timer]
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
    static let queueNames = ["verification", "commit"]

    static let statusClasses = ["2xx", "4xx", "5xx"]
    static let kinds: [ItemKind] = [.postback, .impression, .skadnetwork, .unknown]
    static let codes: [AttributionError.Code] = [
        .malformedInput, .unsupportedAlgorithm, .unknownKey, .untrustedKey, .badSignature, .invalidField,
        .invalidUnsignedField, .duplicate, .ruleWarning, .unsupportedVersion,
    ]
    static let environmentNames = ["production", "development", "custom"]
    /// Why a body was answered without being stored.
    public enum NotStoredReason: String, CaseIterable, Sendable {
        /// Over the invalid quota, proven forged or malformed or an exact retry: answered 200.
        case quota
        /// Over the invalid quota, could still be genuine: answered 503 (Apple sends it again).
        case retryLater = "retry-later"
        /// Storing failed: answered 500.
        case failure
        /// A queue was at its bound (`--queue-depth`): answered 503 with `Retry-After`, Apple sends it again.
        case overloaded
    }

    public init() {
        let registry = PrometheusCollectorRegistry()
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.defaultDurationHistogramBuckets = [
            .microseconds(250), .microseconds(500), .milliseconds(1), .milliseconds(2), .milliseconds(5),
            .milliseconds(10), .milliseconds(20), .milliseconds(50), .milliseconds(100), .milliseconds(250),
            .milliseconds(500), .seconds(1), .seconds(2.5), .seconds(5), .seconds(10),
        ]
        self.registry = registry
        self.factory = factory

        var requests: [ReceiverRoute: [CoreMetrics.Counter]] = [:]
        var durations: [ReceiverRoute: CoreMetrics.Timer] = [:]
        for route in ReceiverRoute.allCases {
            requests[route] = Self.statusClasses.map {
                CoreMetrics.Counter(label: "postback_receiver_requests_total", dimensions: [("route", route.rawValue), ("status", $0)],
                        factory: factory)
            }
            durations[route] = CoreMetrics.Timer(label: "postback_receiver_request_duration_seconds",
                                     dimensions: [("route", route.rawValue)], factory: factory)
        }
        self.requests = requests
        self.durations = durations

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
    }

    private static func verdictKey(_ kind: ItemKind, _ code: String) -> String { "\(kind.rawValue) \(code)" }

    /// Counts one answered request and its duration.
    func request(_ route: ReceiverRoute, status: Int, nanoseconds: UInt64) {
        let statusClass = status >= 500 ? 2 : status >= 400 ? 1 : 0
        requests[route]?[statusClass].increment()
        durations[route]?.recordNanoseconds(Int64(clamping: nanoseconds))
    }

    /// Counts one final verdict (after deduplication): kind, first error code, key environment, tier, and a
    /// valid postback without a conversion value.
    func verdict(_ result: VerificationResult) {
        let code: String
        if let first = result.firstError {
            let raw = first.code?.rawValue
            code = Self.codes.contains { $0.rawValue == raw } ? raw ?? "other" : "other"
        } else {
            code = "none"
        }
        verdicts[Self.verdictKey(result.kind, code)]?.increment()
        if result.signature == .verified, let environment = result.environment {
            environments[environment.rawValue]?.increment()
        }
        guard result.verdict == .valid else { return }
        if result.kind == .postback, let tier = result.tier, tiers.indices.contains(tier) {
            tiers[tier].increment()
        }
        if !Self.hasConversionValue(result) {
            withoutConversionValue[result.kind.rawValue]?.increment()
        }
    }

    /// Whether a valid item carries a fine or coarse conversion value (unsigned, in the body).
    static func hasConversionValue(_ result: VerificationResult) -> Bool {
        if let body = result.body { return body.hasConversionValue }
        guard let unsigned = result.unsigned else { return false }
        return unsigned.contains("conversion-value") || unsigned.contains("coarse-conversion-value")
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

    /// Sets the open connections gauge and the cap.
    func connections(open: Int, maximum: Int) {
        openConnections.record(open)
        maximumConnections.record(maximum)
    }

    /// Counts a connection closed by the request deadline.
    func requestTimedOut() {
        requestTimeouts.increment()
    }

    /// The Prometheus text exposition of every series.
    public func render() -> [UInt8] {
        var buffer: [UInt8] = []
        buffer.reserveCapacity(16 * 1024)
        registry.emit(into: &buffer)
        return buffer
    }
}
