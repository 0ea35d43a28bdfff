/// The paths the receiver serves, as the bounded `route` label of its metrics (never the requested path itself,
/// which an attacker chooses).
public enum ReceiverRoute: String, Sendable, CaseIterable {
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
    /// Anything else (answered 404, or 413 when its body is too large).
    case other

    /// Apple's path for AdAttributionKit postbacks (the same on an ad network's and a developer's domain).
    public static let appAttributionPath = "/.well-known/appattribution/report-attribution/"
    /// Apple's path for SKAdNetwork postbacks.
    public static let skAdNetworkPath = "/.well-known/skadnetwork/report-attribution/"

    /// The route a request's method and path name, compared byte for byte; one trailing slash may be left out.
    init(method: String, path: Substring) {
        func matches(_ expected: String) -> Bool {
            path.utf8.elementsEqual(expected.utf8) || path.utf8.elementsEqual(expected.utf8.dropLast())
        }
        switch method {
        case "POST" where matches(Self.appAttributionPath): self = .appAttribution
        case "POST" where matches(Self.skAdNetworkPath): self = .skAdNetwork
        case "GET" where path.utf8.elementsEqual("/healthz".utf8): self = .health
        case "GET" where path.utf8.elementsEqual("/readyz".utf8): self = .readiness
        case "GET" where path.utf8.elementsEqual("/metrics".utf8): self = .metrics
        default: self = .other
        }
    }
}
