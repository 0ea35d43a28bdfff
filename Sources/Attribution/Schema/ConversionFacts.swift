import Foundation

/// What a valid postback says about a conversion: the facts a schema decodes and a run report counts, read from a
/// ``VerificationResult`` (AdAttributionKit or SKAdNetwork) or from the fast path's record
/// (`FastPostbackPath.conversionFacts(record:answer:)`), so both paths give the same facts.
public struct ConversionFacts: Sendable, Hashable {
    /// The trusted key's environment.
    public var environment: KeyEnvironment?
    /// The advertised app's App Store ID (signed; SKAdNetwork's `app-id`).
    public var advertisedItemIdentifier: UInt64
    /// The campaign's 2-, 3- or 4-digit source identifier (signed); nil for SKAdNetwork 1.0-3.0, which names the
    /// campaign by ``campaignID`` instead.
    public var sourceIdentifier: String?
    /// SKAdNetwork 1.0-3.0's `campaign-id` (signed); nil for everything else.
    public var campaignID: UInt64?
    /// 0, 1 or 2 (signed): which conversion window the postback closes. SKAdNetwork before 4.0 sends one postback
    /// and signs no index: 0.
    public var postbackSequenceIndex: Int
    /// The fine conversion value, 0-63, when the body carries one.
    public var fineValue: Int?
    /// The coarse conversion value, when the body carries one.
    public var coarseValue: CoarseConversionValue?
    /// Whether the signature covers the conversion values. It never does, AdAttributionKit or SKAdNetwork: they
    /// are body members beside what is signed (spec sections 5.2 and 9).
    public var valuesAreSigned: Bool
    /// The lowest crowd-anonymity tier consistent with the fields (AdAttributionKit only).
    public var tier: Int?
    /// The version of an SKAdNetwork postback; nil for AdAttributionKit.
    public var skAdNetworkVersion: SKAdNetworkVersion?
    /// The ad network the postback is for (signed): AdAttributionKit's `ad-network-identifier`, SKAdNetwork's
    /// `ad-network-id`. Exact bytes, as a schema's networks are matched by code points. Nil only when a caller
    /// builds facts without it.
    public var adNetworkIdentifier: ExactString?

    /// Facts as given, for a caller that reads a postback its own way (a stored record, a test).
    ///
    /// - Parameters:
    ///   - environment: the trusted key's environment.
    ///   - advertisedItemIdentifier: the advertised app's App Store ID.
    ///   - sourceIdentifier: the 2- to 4-digit source identifier; nil for SKAdNetwork 1.0-3.0.
    ///   - postbackSequenceIndex: 0, 1 or 2.
    ///   - fineValue: the fine conversion value, when carried.
    ///   - coarseValue: the coarse conversion value, when carried.
    ///   - valuesAreSigned: whether the signature covers the values.
    ///   - tier: the crowd-anonymity tier (AdAttributionKit only).
    ///   - campaignID: SKAdNetwork 1.0-3.0's `campaign-id`.
    ///   - skAdNetworkVersion: the SKAdNetwork version; nil for AdAttributionKit.
    ///   - adNetworkIdentifier: the signed ad network identifier.
    public init(environment: KeyEnvironment?, advertisedItemIdentifier: UInt64, sourceIdentifier: String?,
                postbackSequenceIndex: Int, fineValue: Int?, coarseValue: CoarseConversionValue?,
                valuesAreSigned: Bool, tier: Int?, campaignID: UInt64? = nil,
                skAdNetworkVersion: SKAdNetworkVersion? = nil, adNetworkIdentifier: ExactString? = nil) {
        self.environment = environment
        self.advertisedItemIdentifier = advertisedItemIdentifier
        self.sourceIdentifier = sourceIdentifier
        self.campaignID = campaignID
        self.postbackSequenceIndex = postbackSequenceIndex
        self.fineValue = fineValue
        self.coarseValue = coarseValue
        self.valuesAreSigned = valuesAreSigned
        self.tier = tier
        self.skAdNetworkVersion = skAdNetworkVersion
        self.adNetworkIdentifier = adNetworkIdentifier
    }

    /// The facts of a valid AdAttributionKit or SKAdNetwork postback; nil for anything else (an invalid item, an
    /// impression, a duplicate).
    /// - Parameter result: the item's result.
    public init?(_ result: VerificationResult) {
        guard result.verdict == .valid else { return nil }
        if result.kind == .postback, let postback = result.postback {
            self.init(environment: result.environment, advertisedItemIdentifier: postback.advertisedItemIdentifier,
                      sourceIdentifier: postback.sourceIdentifier,
                      postbackSequenceIndex: postback.postbackSequenceIndex, fineValue: result.body?.conversionValue,
                      coarseValue: result.body?.coarseConversionValue, valuesAreSigned: false, tier: result.tier,
                      adNetworkIdentifier: ExactString(postback.adNetworkIdentifier))
        } else if result.kind == .skadnetwork, let postback = result.skAdNetwork {
            // Rule S5 held: the unsigned values, when present, are 0-63 and low/medium/high.
            let unsigned = result.unsigned
            self.init(skAdNetwork: postback, environment: result.environment,
                      fineValue: unsigned?["conversion-value"]?.numberValue?.int64Value.map { Int($0) },
                      coarseValue: unsigned?["coarse-conversion-value"]?.stringValue
                          .flatMap { CoarseConversionValue(exactly: $0) })
        } else {
            return nil
        }
    }

    /// The facts of a valid SKAdNetwork postback, given its unsigned values.
    @_spi(CommandLine)
    public init(skAdNetwork postback: SKAdNetworkPostback, environment: KeyEnvironment?, fineValue: Int?,
                 coarseValue: CoarseConversionValue?) {
        self.init(environment: environment, advertisedItemIdentifier: postback.appID,
                  sourceIdentifier: postback.sourceIdentifier,
                  postbackSequenceIndex: Int(postback.postbackSequenceIndex ?? 0), fineValue: fineValue,
                  coarseValue: coarseValue, valuesAreSigned: false, tier: nil,
                  campaignID: postback.sourceIdentifier == nil ? postback.campaignID : nil,
                  skAdNetworkVersion: postback.version, adNetworkIdentifier: ExactString(postback.adNetworkID))
    }

    /// The conversion window the postback closes. SKAdNetwork 1.0-3.0's one postback counts as window 1: its value
    /// is the 6-bit value window 1 carries as its fine value.
    @_spi(CommandLine) @_spi(Servers)
    public var window: ConversionWindow? { ConversionWindow(postbackSequenceIndex: postbackSequenceIndex) }

    /// True when the postback carries neither a fine nor a coarse conversion value.
    public var hasNoValue: Bool { fineValue == nil && coarseValue == nil }

    /// True for an SKAdNetwork postback of a version before 4.0: one postback, sent on its own timer
    /// (`SKAdNetworkTimer`), not at the end of a conversion window.
    public var usesSKAdNetworkTimer: Bool {
        skAdNetworkVersion.map { $0 != .v4_0 } ?? false
    }

    /// The first-launch times consistent with a postback sent at `sent`: by its window
    /// (`ConversionWindow.installRange(sentAt:)`) or, before SKAdNetwork 4.0, by its timer
    /// (`SKAdNetworkTimer.installRange(sentAt:finalValue:)`).
    /// - Parameter sent: when the postback was sent (in practice: when it arrived).
    /// - Returns: the earliest and latest first-launch times; nil when the facts name no window.
    public func installRange(sentAt sent: Date) -> ClosedRange<Date>? {
        if usesSKAdNetworkTimer { return SKAdNetworkTimer.installRange(sentAt: sent, finalValue: fineValue) }
        return window?.installRange(sentAt: sent)
    }
}
