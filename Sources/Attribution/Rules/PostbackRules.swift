/// The postback rules that read more than one field: P3-P5 on the signed payload, U2-U5 on the body, T1-T6 on the
/// crowd-anonymity tiers (spec sections 5-7). Each is defined here once, over ``PostbackFacts``: the general path
/// turns the ones that fire into findings, and a fast path may only ask whether any fires (``anyFires(_:)``).
///
/// P1, P2 and U1 (presence, types, values) are the tables' (``MessageLayout``), which the decoders
/// (``PostbackPayload``, ``PostbackBody``) and the fast path both read.
enum PostbackRules {
    /// One rule: when it fires, and what it says then.
    struct Rule: Sendable {
        let id: RuleID
        let fires: @Sendable (PostbackFacts) -> Bool
        let message: @Sendable (PostbackFacts) -> String
    }

    static let developmentNetworkIdentifier = "development.adattributionkit"

    /// The members the messages name, from the tables.
    private typealias Payload = PostbackPayloadMember
    private typealias Body = PostbackBodyMember

    /// Every rule, in catalogue order.
    static let all: [Rule] = [
        Rule(id: .p3, fires: { $0.conversionType == .reEngagement && !$0.didWin }) { _ in
            "a re-engagement postback must have \(Payload.didWin.name) true"
        },
        Rule(id: .p4, fires: { !$0.didWin && $0.postbackSequenceIndex != 0 }) {
            "a nonwinning postback is sent once, at index 0; this one has index \($0.postbackSequenceIndex)"
        },
        Rule(id: .p5, fires: { $0.isDevelopmentSettingsKey && !$0.isDevelopmentNetwork }) { _ in
            "kid \(ApplePublishedKey.development1.keyID) signs developer-settings postbacks, whose "
                + "\(Payload.adNetworkIdentifier.name) is \(developmentNetworkIdentifier) (the payload's is in "
                + "fields)"
        },
        Rule(id: .u2, fires: { $0.hasFineValue && $0.hasCoarseValue }) { _ in
            "a body \(PostbackBodyMember.exclusiveValuesSentence)"
        },
        Rule(id: .u3, fires: {
            guard let body = $0.body, $0.conversionType == .reEngagement else { return false }
            if case .click = body.interaction { return false }
            return true
        }) {
            let found: String
            switch $0.body?.interaction {
            case .otherString(let text)?: found = JSONValue.quoted(text)
            case .otherType(let name)?: found = name
            default: found = "none"
            }
            return "a re-engagement postback needs \(Body.adInteractionType.name) \"click\", found \(found)"
        },
        Rule(id: .u4, fires: {
            guard case .absent? = $0.body?.interaction else { return false }
            return true
        }) { _ in
            "the body has no \(Body.adInteractionType.name) (every Apple example has one)"
        },
        Rule(id: .u5, fires: { $0.body != nil && !$0.didWin && ($0.hasFineValue || $0.hasCoarseValue) }) { _ in
            "a nonwinning postback should carry no conversion value"
        },
        Rule(id: .t1, fires: { $0.postbackSequenceIndex >= 1 && $0.sourceIdentifierDigits != 2 }) {
            "postback \($0.postbackSequenceIndex) should carry a 2-digit \(Payload.sourceIdentifier.name), not "
                + "\($0.sourceIdentifierDigits)"
        },
        Rule(id: .t2, fires: { $0.postbackSequenceIndex >= 1 && $0.hasFineValue }) {
            "postback \($0.postbackSequenceIndex) should carry no fine \(Body.conversionValue.name)"
        },
        Rule(id: .t3, fires: { $0.postbackSequenceIndex >= 1 && ($0.hasPublisherItem || $0.hasCountryCode) }) {
            "postback \($0.postbackSequenceIndex) should carry no \(Payload.publisherItemIdentifier.name) and no "
                + Body.countryCode.name
        },
        Rule(id: .t4, fires: { ($0.hasPublisherItem || $0.hasCountryCode) && $0.hasCoarseValue }) { _ in
            "\(Payload.publisherItemIdentifier.name) or \(Body.countryCode.name) means tier 3, which sends no "
                + "coarse value"
        },
        Rule(id: .t5, fires: {
            $0.postbackSequenceIndex == 0 && $0.sourceIdentifierDigits >= 3 && $0.hasCoarseValue
        }) {
            "a \($0.sourceIdentifierDigits)-digit \(Payload.sourceIdentifier.name) at index 0 means tier 2 or 3, "
                + "which sends no coarse value"
        },
        Rule(id: .t6, fires: {
            !$0.hasMarketplace
                && ($0.sourceIdentifierDigits != 2 || $0.hasFineValue || $0.hasCoarseValue || $0.hasPublisherItem)
        }) { _ in
            "no \(Payload.marketplaceIdentifier.name) means tier 0: a 2-digit \(Payload.sourceIdentifier.name), "
                + "no conversion value and no \(Payload.publisherItemIdentifier.name)"
        },
    ]

    /// The findings of every rule that fires, in catalogue order.
    static func findings(_ facts: PostbackFacts) -> [Finding] {
        all.filter { $0.fires(facts) }.map { Finding($0.id, $0.message(facts)) }
    }

    /// Whether any rule fires: all a fast path may ask.
    static func anyFires(_ facts: PostbackFacts) -> Bool {
        all.contains { $0.fires(facts) }
    }
}
