import Hummingbird

/// The paths the receiver serves, as the bounded `route` label of its metrics (never the requested path itself,
/// which an attacker chooses).
enum ReceiverRoute: String, Sendable, CaseIterable {
    /// `POST /.well-known/appattribution/report-attribution/`: AdAttributionKit postbacks and developer copies.
    case appAttribution = "appattribution"
    /// `POST /.well-known/skadnetwork/report-attribution/`: SKAdNetwork postbacks.
    case skAdNetwork = "skadnetwork"
    /// `GET /healthz`: the process runs.
    case health = "healthz"
    /// `GET /readyz`: the store answers (503 while it does not).
    case readiness = "readyz"
    /// `GET /metrics`.
    case metrics
    /// Anything else: the router's 404.
    case other

    /// Apple's path for AdAttributionKit postbacks (the same on an ad network's and a developer's domain).
    static let appAttributionPath = "/.well-known/appattribution/report-attribution/"
    /// Apple's path for SKAdNetwork postbacks.
    static let skAdNetworkPath = "/.well-known/skadnetwork/report-attribution/"

    /// The route the router matched, from the path it names (`context.endpointPath`, Hummingbird's
    /// `RouterPath` text, e.g. `/.well-known/appattribution/report-attribution`); `other` for its `NotFound`, for
    /// none, or for anything else.
    init(endpointPath: String?) {
        guard let endpointPath else {
            self = .other
            return
        }
        self = Self.allCases.first { route in
            route.routerPath.map { endpointPath.utf8.elementsEqual($0.description.utf8) } ?? false
        } ?? .other
    }

    /// The path the router serves the route on; nil for `other`.
    var routerPath: RouterPath? {
        switch self {
        case .appAttribution: RouterPath(Self.appAttributionPath)
        case .skAdNetwork: RouterPath(Self.skAdNetworkPath)
        case .health: "/healthz"
        case .readiness: "/readyz"
        case .metrics: "/metrics"
        case .other: nil
        }
    }
}
