/// What a valid AdAttributionKit postback says about a conversion: the facts a schema decodes and a run report
/// counts, read from a ``VerificationResult`` or from the fast path's record
/// (``FastPostbackPath/conversionFacts(record:answer:)``), so both paths give the same facts.
public struct ConversionFacts: Sendable, Hashable {
    /// The trusted key's environment.
    public var environment: KeyEnvironment?
    /// The advertised app's App Store ID (signed).
    public var advertisedItemIdentifier: UInt64
    /// The campaign's 2-, 3- or 4-digit source identifier (signed).
    public var sourceIdentifier: String
    /// 0, 1 or 2 (signed): which conversion window the postback closes.
    public var postbackSequenceIndex: Int
    /// The fine conversion value, 0-63, when the body carries one.
    public var fineValue: Int?
    /// The coarse conversion value, when the body carries one.
    public var coarseValue: CoarseConversionValue?
    /// False for AdAttributionKit: the conversion values are members of the body beside `jws-string`, which the
    /// signature does not cover (spec section 5.2).
    public var valuesAreSigned: Bool
    /// The lowest crowd-anonymity tier consistent with the fields.
    public var tier: Int?

    public init(environment: KeyEnvironment?, advertisedItemIdentifier: UInt64, sourceIdentifier: String,
                postbackSequenceIndex: Int, fineValue: Int?, coarseValue: CoarseConversionValue?,
                valuesAreSigned: Bool, tier: Int?) {
        self.environment = environment
        self.advertisedItemIdentifier = advertisedItemIdentifier
        self.sourceIdentifier = sourceIdentifier
        self.postbackSequenceIndex = postbackSequenceIndex
        self.fineValue = fineValue
        self.coarseValue = coarseValue
        self.valuesAreSigned = valuesAreSigned
        self.tier = tier
    }

    /// The facts of a valid AdAttributionKit postback; nil for anything else (an invalid item, an impression, an
    /// SKAdNetwork postback, a duplicate).
    public init?(_ result: VerificationResult) {
        guard result.verdict == .valid, result.kind == .postback, let postback = result.postback else { return nil }
        self.init(environment: result.environment, advertisedItemIdentifier: postback.advertisedItemIdentifier,
                  sourceIdentifier: postback.sourceIdentifier,
                  postbackSequenceIndex: postback.postbackSequenceIndex, fineValue: result.body?.conversionValue,
                  coarseValue: result.body?.coarseConversionValue, valuesAreSigned: false, tier: result.tier)
    }

    /// The conversion window the postback closes.
    public var window: ConversionWindow? { ConversionWindow(postbackSequenceIndex: postbackSequenceIndex) }

    /// True when the postback carries neither a fine nor a coarse conversion value.
    public var hasNoValue: Bool { fineValue == nil && coarseValue == nil }
}
