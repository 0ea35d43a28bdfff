/// The AdAttributionKit tables: a postback's signed payload (spec §5.1), its body's members (spec §5.2) and an
/// impression's signed payload (spec §4) [Apple: "Identifying the parameters in a postback"; "Generating JWS
/// impressions"]. Each member is defined here once.
extension MessageLayout {
    static let postbackPayload = PostbackPayloadMember.table
    static let postbackBody = PostbackBodyMember.table
    static let impressionPayload = ImpressionMember.table
}

/// The members of a postback's signed payload, in table order.
enum PostbackPayloadMember: Int, MessageSlot {
    case postbackIdentifier, adNetworkIdentifier, advertisedItemIdentifier, conversionType, impressionType, didWin,
         postbackSequenceIndex, sourceIdentifier, marketplaceIdentifier, publisherItemIdentifier

    static let table = layout(owner: "payload")

    var member: MessageMember {
        switch self {
        case .postbackIdentifier:
            // The deduplication key (UUID in practice, either letter case).
            MessageMember("postback-identifier", .string, signed: true, required: true,
                          domain: .nonEmpty(lowercase: false))
        case .adNetworkIdentifier:
            MessageMember("ad-network-identifier", .string, signed: true, required: true,
                          domain: .nonEmpty(lowercase: false))
        case .advertisedItemIdentifier:
            // Can exceed 2^32 (Apple's example: 10738027756).
            MessageMember("advertised-item-identifier", .integer, signed: true, required: true)
        case .conversionType:
            // `reengagement` is refused (spec §10): every signed postback seen spells it with a hyphen.
            MessageMember("conversion-type", .string, signed: true, required: true, domain: .oneOf(
                ConversionType.allCases.map(\.rawValue), wording: "download, redownload or re-engagement",
                hint: ("reengagement", "Apple signs the spelling \"re-engagement\"")))
        case .impressionType:
            MessageMember("impression-type", .string, signed: true, required: true, domain: Self.impressionTypes)
        case .didWin:
            MessageMember("did-win", .boolean, signed: true, required: true)
        case .postbackSequenceIndex:
            MessageMember("postback-sequence-index", .integer, signed: true, required: true,
                          domain: Self.sequenceIndexes)
        case .sourceIdentifier:
            // A string here, an integer in impressions.
            MessageMember("source-identifier", .string, signed: true, required: true, domain: Self.sourceIdentifiers)
        case .marketplaceIdentifier:
            // Absent at crowd-anonymity tier 0.
            MessageMember("marketplace-identifier", .string, signed: true, required: false)
        case .publisherItemIdentifier:
            // Present at tier 3 only; 0 in development postbacks.
            MessageMember("publisher-item-identifier", .integer, signed: true, required: false)
        }
    }

    /// `postback-sequence-index`, the conversion window: 0 (days 0-2), 1 (days 3-7) or 2 (days 8-35); SKAdNetwork
    /// 4.0's too.
    static let sequenceIndexes = ValueDomain.integers(0...2, wording: "0, 1 or 2")
    /// `source-identifier` in a postback: 2, 3 or 4 ASCII digits; SKAdNetwork 4.0's too.
    static let sourceIdentifiers = ValueDomain.digits(2...4)
    /// `impression-type`: the one value of postbacks and impressions alike.
    static let impressionTypes = ValueDomain.oneOf(["app-impression"], wording: "\"app-impression\"")
}

/// The members of a postback's HTTP body, in table order: `jws-string` and the unsigned members beside it.
enum PostbackBodyMember: Int, MessageSlot {
    case jwsString, adInteractionType, conversionValue, coarseConversionValue, countryCode

    static let table = layout(owner: "body")

    var member: MessageMember {
        switch self {
        case .jwsString:
            // Checked by the J rules, not by the body's field rule (U1).
            MessageMember("jws-string", .string, signed: false, required: true)
        case .adInteractionType:
            MessageMember("ad-interaction-type", .string, signed: false, required: false, domain: .oneOf(
                AdInteractionType.allCases.map(\.rawValue), wording: "\"view\" or \"click\""))
        case .conversionValue:
            // The fine conversion value.
            MessageMember("conversion-value", .integer, signed: false, required: false, domain: .integers(0...63))
        case .coarseConversionValue:
            MessageMember("coarse-conversion-value", .string, signed: false, required: false, domain: .oneOf(
                CoarseConversionValue.allCases.map(\.rawValue), wording: "\"low\", \"medium\" or \"high\""))
        case .countryCode:
            // Added in 2025.
            MessageMember("country-code", .string, signed: false, required: false,
                          domain: .capitalLetters(count: 2, wording: "two capital letters"))
        }
    }

    /// The members a body carries one of at most (rule U2; SKAdNetwork S5), and the sentence that says so after
    /// "a body" or "the body".
    static let exclusiveValues = (fine: conversionValue, coarse: coarseConversionValue)
    static var exclusiveValuesSentence: String {
        "carries \(exclusiveValues.fine.name) or \(exclusiveValues.coarse.name), not both"
    }
}

/// The members of an impression's signed payload, in table order.
enum ImpressionMember: Int, MessageSlot {
    case impressionIdentifier, publisherItemIdentifier, impressionType, adNetworkIdentifier, sourceIdentifier,
         timestamp, advertisedItemIdentifier, eligibleForReEngagement

    static let table = layout(owner: "impression")

    var member: MessageMember {
        switch self {
        case .impressionIdentifier:
            MessageMember("impression-identifier", .string, signed: true, required: true, domain: .uuid)
        case .publisherItemIdentifier:
            // 0 marks a development impression.
            MessageMember("publisher-item-identifier", .integer, signed: true, required: true)
        case .impressionType:
            MessageMember("impression-type", .string, signed: true, required: true,
                          domain: PostbackPayloadMember.impressionTypes)
        case .adNetworkIdentifier:
            MessageMember("ad-network-identifier", .string, signed: true, required: true,
                          domain: .nonEmpty(lowercase: true))
        case .sourceIdentifier:
            // An integer here, unlike the postback's string.
            MessageMember("source-identifier", .integer, signed: true, required: true, domain: .integers(0...9999))
        case .timestamp:
            // Milliseconds since 1970.
            MessageMember("timestamp", .integer, signed: true, required: true)
        case .advertisedItemIdentifier:
            MessageMember("advertised-item-identifier", .integer, signed: true, required: true)
        case .eligibleForReEngagement:
            MessageMember("eligible-for-re-engagement", .boolean, signed: true, required: false)
        }
    }
}
