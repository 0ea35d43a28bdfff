@_spi(Servers) import Attribution
@_spi(Servers) import AttributionStores
import Foundation

/// One place the receiver relays stored postbacks to (`--forward`, `--forward-all`, `--webhook`): where, what it is
/// sent, and which stored rows it is owed.
public struct RelayDestination: Sendable {
    /// What a destination receives.
    enum Kind: Sendable {
        /// Apple's bytes, to the route's URL (`appattribution` and `skadnetwork`), as Apple sent them.
        case forward(appAttribution: URL, skAdNetwork: URL)
        /// The JSON Lines record of each valid postback, signed as Standard Webhooks says.
        case webhook(URL, WebhookSigner)
    }

    /// The outbox's view of it: its name (the URL as given) and which rows it is owed.
    @_spi(Servers) public let outbox: OutboxDestination
    /// What it receives.
    let kind: Kind

    /// `--forward URL` (`selection` valid) or `--forward-all URL` (every body): `URL` is a base URL, Apple's path
    /// of each route appended (`https://mmp.example/` receives `/.well-known/appattribution/report-attribution/`),
    /// or `appattribution=URL,skadnetwork=URL`, a URL per route, used as they are.
    /// - Parameters:
    ///   - text: the option's value.
    ///   - selection: which stored rows it is owed.
    /// - Throws: ``StartupFailure`` (usage) naming what is wrong with the value.
    @_spi(Servers) public static func forward(_ text: String, selection: OutboxDestination.Selection)
        throws(StartupFailure) -> RelayDestination {
        let option = selection == .valid ? "--forward" : "--forward-all"
        var routes: [String: URL] = [:]
        if text.contains("=") {
            for part in text.split(separator: ",", omittingEmptySubsequences: false) {
                let pair = part.split(separator: "=", maxSplits: 1).map(String.init)
                guard pair.count == 2, ["appattribution", "skadnetwork"].contains(pair[0]),
                      routes[pair[0]] == nil else {
                    throw StartupFailure(.usage, "\(option) takes a URL, or appattribution=URL,skadnetwork=URL (both "
                                         + "routes, each once), not \(text)")
                }
                routes[pair[0]] = try url(pair[1], option: option)
            }
            guard let appAttribution = routes["appattribution"], let skAdNetwork = routes["skadnetwork"] else {
                throw StartupFailure(.usage, "\(option) \(text): name a URL for both appattribution and skadnetwork")
            }
            return try RelayDestination(name: text, selection: selection,
                                        kind: .forward(appAttribution: appAttribution, skAdNetwork: skAdNetwork))
        }
        let base = try url(text, option: option)
        let trimmed = text.utf8.last == UInt8(ascii: "/") ? String(text.dropLast()) : text
        guard base.query == nil, base.fragment == nil,
              let appAttribution = URL(string: trimmed + ReceiverRoute.appAttributionPath),
              let skAdNetwork = URL(string: trimmed + ReceiverRoute.skAdNetworkPath) else {
            throw StartupFailure(.usage, "\(option) \(text): a base URL takes no query or fragment (Apple's path is "
                                 + "appended); give appattribution=URL,skadnetwork=URL for URLs used as they are")
        }
        return try RelayDestination(name: text, selection: selection,
                                    kind: .forward(appAttribution: appAttribution, skAdNetwork: skAdNetwork))
    }

    /// `--webhook URL` with the secret of its `--webhook-secret FILE`: each valid postback's record, signed.
    /// - Parameters:
    ///   - text: the URL.
    ///   - signer: the secret's signer.
    /// - Throws: ``StartupFailure`` (usage) for a URL that is not `http://` or `https://` with a host.
    public static func webhook(_ text: String, signer: WebhookSigner) throws(StartupFailure) -> RelayDestination {
        try RelayDestination(name: text, selection: .valid, kind: .webhook(url(text, option: "--webhook"), signer))
    }

    private init(name: String, selection: OutboxDestination.Selection, kind: Kind) throws(StartupFailure) {
        do {
            outbox = try OutboxDestination(name: name, selection: selection)
        } catch {
            throw StartupFailure(.usage, error.reason)
        }
        self.kind = kind
    }

    /// An `http` or `https` URL with a host and no user or password (the name is a metrics label and appears in
    /// logs: a credential there would leak).
    private static func url(_ text: String, option: String) throws(StartupFailure) -> URL {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(),
              scheme == "http" || scheme == "https", let host = url.host, !host.isEmpty else {
            throw StartupFailure(.usage, "\(option) takes an http:// or https:// URL with a host, not \(text)")
        }
        guard url.user == nil, url.password == nil else {
            throw StartupFailure(.usage, "\(option) \(text): no user or password in the URL (it is shown in metrics "
                                 + "and logs); let the destination authenticate by network or by the webhook's "
                                 + "signature")
        }
        return url
    }

    /// The URL a delivery of `route` (an archive row's route) goes to.
    func url(route: String) -> URL {
        switch kind {
        case .forward(let appAttribution, let skAdNetwork):
            route.utf8.elementsEqual(ReceiverRoute.skAdNetwork.rawValue.utf8) ? skAdNetwork : appAttribution
        case .webhook(let url, _):
            url
        }
    }
}
