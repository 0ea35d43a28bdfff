import Foundation

extension ConversionSchema {
    /// A campaign's name and the days it applies (docs/schema.md, version 2): a network may re-use a source
    /// identifier, so the same identifier can name one campaign until a date and another after it.
    @_spi(CommandLine) @_spi(Servers) public struct Campaign: Sendable, Hashable {
        /// The campaign's display name.
        public let name: String
        /// The start of the first UTC day the name applies; nil: from the start of the app's period.
        public let validFrom: Date?
        /// The start of the UTC day after the last day the name applies (`valid-until` is inclusive, as an app's
        /// is); nil: open-ended.
        public let validUntil: Date?

        /// True when `date` falls in the campaign's days.
        ///
        /// - Parameter date: the time a postback is decoded as of (its arrival).
        /// - Returns: whether the name applies at `date`.
        public func isValid(at date: Date) -> Bool {
            (validFrom.map { date >= $0 } ?? true) && (validUntil.map { date < $0 } ?? true)
        }

        /// True when the two campaigns share a day.
        func overlaps(_ other: Campaign) -> Bool {
            (validFrom ?? .distantPast) < (other.validUntil ?? .distantFuture)
                && (other.validFrom ?? .distantPast) < (validUntil ?? .distantFuture)
        }
    }

    /// Campaign names by the identifiers a postback signs: `source-identifier` (AdAttributionKit, SKAdNetwork
    /// 4.0) and SKAdNetwork 1.0-3.0's `campaign-id`, kept apart (campaign id 12 is not source identifier `"12"`).
    /// Each identifier's campaigns never share a day, so at most one applies at a time.
    @_spi(CommandLine) @_spi(Servers) public struct Campaigns: Sendable {
        /// By source identifier. The keys are 2 to 4 ASCII digits, which no other sequence of code points is
        /// canonically equivalent to, so `String` keys compare them exactly.
        public let bySourceIdentifier: [String: [Campaign]]
        /// By SKAdNetwork 1.0-3.0 `campaign-id` (1 to 100).
        public let byCampaignID: [UInt64: [Campaign]]

        /// The name of the campaign a postback names, as of `date`.
        ///
        /// - Parameters:
        ///   - facts: the postback's facts: its `source-identifier`, or its `campaign-id` when it has none.
        ///   - date: the time the postback is decoded as of.
        /// - Returns: the name, or nil when no campaign of that identifier applies at `date`.
        public func name(of facts: ConversionFacts, at date: Date) -> String? {
            if let source = facts.sourceIdentifier {
                return bySourceIdentifier[source]?.first { $0.isValid(at: date) }?.name
            }
            return facts.campaignID.flatMap { byCampaignID[$0]?.first { $0.isValid(at: date) }?.name }
        }

        /// Every name, each once (by code points), for the series a receiver makes up front.
        public var names: [String] {
            var seen = Set<ExactString>()
            return (Array(bySourceIdentifier.values.joined()) + Array(byCampaignID.values.joined())).map(\.name)
                .filter { seen.insert(ExactString($0)).inserted }
        }
    }

    /// An ad network an app's entry names (version 2): the signed identifier its postbacks carry, its display
    /// name, and the campaign names it gives its own identifiers.
    @_spi(CommandLine) @_spi(Servers) public struct Network: Sendable {
        /// The identifier postbacks sign: AdAttributionKit's `ad-network-identifier`, SKAdNetwork's
        /// `ad-network-id`. Matched by code points.
        public let adNetworkIdentifier: ExactString
        /// The network's display name.
        public let name: String
        /// The network's campaign names; they take precedence over the app's own.
        public let campaigns: Campaigns
    }
}
