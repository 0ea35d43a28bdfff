/// A member of an SKAdNetwork postback that some version's signature covers, named as the JSON body names it
/// (spec §9). Types are those of Apple's examples (`Tests/AttributionTests/Vectors/reference/skadnetwork/`).
enum SKAdNetworkField: String, Sendable, Hashable, CaseIterable {
    /// The postback version, a string such as `"4.0"` (absent in 1.0).
    case version
    /// The ad network's ID, e.g. `com.example` or `example123.skadnetwork`.
    case adNetworkID = "ad-network-id"
    /// The campaign, an integer (1.0 to 3.0).
    case campaignID = "campaign-id"
    /// The hierarchical source identifier, 2 to 4 digits as a string (4.0, in place of `campaign-id`).
    case sourceIdentifier = "source-identifier"
    /// The advertised app's App Store ID, an integer.
    case appID = "app-id"
    /// The install's unique ID, a string; with `postback-sequence-index`, the deduplication key.
    case transactionID = "transaction-id"
    /// Whether the app was downloaded again, a Boolean (2.0 and later).
    case redownload
    /// The App Store ID of the app that showed the ad, an integer; optional.
    case sourceAppID = "source-app-id"
    /// The domain of the web page that showed the ad, a string; optional (4.0).
    case sourceDomain = "source-domain"
    /// 1 for a StoreKit-rendered ad (click), 0 for a view-through ad, an integer (2.2 and later).
    case fidelityType = "fidelity-type"
    /// Whether this network won the attribution, a Boolean (3.0 and later).
    case didWin = "did-win"
    /// The conversion window, 0, 1 or 2, an integer (4.0).
    case postbackSequenceIndex = "postback-sequence-index"

    /// The member as the tables define it: JSON type, signed, required unless optional (in the versions that sign
    /// it: ``SKAdNetworkVersion/signedFields``), and its values (rule S4). The conversion window and the source
    /// identifier are AdAttributionKit's (``PostbackPayloadMember``).
    var member: MessageMember {
        MessageMember(rawValue, valueType, signed: true, required: !isOptional, domain: domain)
    }

    /// The member's JSON type.
    var valueType: ValueType {
        switch self {
        case .version, .adNetworkID, .sourceIdentifier, .transactionID, .sourceDomain: .string
        case .campaignID, .appID, .sourceAppID, .fidelityType, .postbackSequenceIndex: .integer
        case .redownload, .didWin: .boolean
        }
    }

    /// The values the member may take (rule S4, once the signature holds).
    var domain: ValueDomain {
        switch self {
        case .adNetworkID, .transactionID: .nonEmpty(lowercase: false)
        case .sourceIdentifier: PostbackPayloadMember.sourceIdentifiers
        case .fidelityType: .integers(0...1, wording: "0 (view-through) or 1 (StoreKit-rendered)")
        case .postbackSequenceIndex: PostbackPayloadMember.sequenceIndexes
        case .version, .sourceDomain, .campaignID, .appID, .sourceAppID, .redownload, .didWin: .any
        }
    }

    /// True for the members a postback may leave out (then the signed string leaves them out too).
    var isOptional: Bool {
        self == .sourceAppID || self == .sourceDomain
    }

    /// The body member that holds the signature (base64 DER), beside the signed ones.
    static let attributionSignature = "attribution-signature"

    /// The JSON type of a signed SKAdNetwork member, which also decides how it is written in the signed string.
    typealias ValueType = MessageMember.ValueType
}
