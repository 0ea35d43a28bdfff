/// What the postback, body and tier rules (P3-P5, U2-U5, T1-T6) and the tier read of one postback: a small value
/// that every decoding path fills, the general path from the decoded payload and body, the fast path from the
/// bytes it scanned. Each rule is then written once, over these facts (``PostbackRules``).
///
/// The facts assume the field rules passed (P1, P2 and U1: every present field has its type and range).
struct PostbackFacts: Sendable {
    /// Signed with `apple-development-identifier/1`, the developer-settings key (rule P5).
    var isDevelopmentSettingsKey: Bool
    /// `ad-network-identifier` is `development.adattributionkit` (rule P5).
    var isDevelopmentNetwork: Bool
    var conversionType: ConversionType
    var didWin: Bool
    var postbackSequenceIndex: Int
    /// 2, 3 or 4.
    var sourceIdentifierDigits: Int
    var hasMarketplace: Bool
    var hasPublisherItem: Bool
    /// The unsigned members, for a body; nil for a bare postback JWS (the U rules apply only to a body).
    var body: Body?

    /// The presence of the body members the rules read.
    struct Body: Sendable {
        var hasFineValue: Bool
        var hasCoarseValue: Bool
        var hasCountryCode: Bool
        var interaction: Interaction
    }

    /// `ad-interaction-type` as the rules need it.
    enum Interaction: Sendable {
        case absent
        case click
        /// Another string value, as received.
        case otherString(String)
        /// A value that is not a string: its JSON type's name.
        case otherType(String)
    }

    var hasFineValue: Bool { body?.hasFineValue ?? false }
    var hasCoarseValue: Bool { body?.hasCoarseValue ?? false }
    var hasCountryCode: Bool { body?.hasCountryCode ?? false }
}

extension PostbackFacts {
    /// The facts of a decoded payload and body (general path).
    init(_ payload: PostbackPayload, body: PostbackBody?, keyID: String) {
        self.init(
            isDevelopmentSettingsKey: keyID.isExactlyEqual(to: ApplePublishedKey.development1.keyID),
            isDevelopmentNetwork: payload.adNetworkIdentifier.isExactlyEqual(
                to: PostbackRules.developmentNetworkIdentifier),
            conversionType: payload.conversionType,
            didWin: payload.didWin, postbackSequenceIndex: payload.postbackSequenceIndex,
            sourceIdentifierDigits: payload.sourceIdentifier.utf8.count,
            hasMarketplace: payload.marketplaceIdentifier != nil,
            hasPublisherItem: payload.publisherItemIdentifier != nil,
            body: body.map { body in
                typealias Slot = PostbackBodyMember
                let members = body.members
                let interaction: Interaction
                switch members[Slot.adInteractionType.name] {
                case nil: interaction = .absent
                case .string(let text) where text.isExactlyEqual(to: AdInteractionType.click.rawValue):
                    interaction = .click
                case .string(let text): interaction = .otherString(text)
                case let value?: interaction = .otherType(value.typeName)
                }
                return Body(
                    hasFineValue: members.contains(Slot.conversionValue.name),
                    hasCoarseValue: members.contains(Slot.coarseConversionValue.name),
                    hasCountryCode: members.contains(Slot.countryCode.name), interaction: interaction)
            })
    }
}

extension PostbackFacts.Interaction {
    /// A value known to be well formed, or none.
    init(_ interaction: AdInteractionType?) {
        switch interaction {
        case nil: self = .absent
        case .click?: self = .click
        case let other?: self = .otherString(other.rawValue)
        }
    }
}
