/// The signed payload of an AdAttributionKit postback (the JWS inside `jws-string`), spec §5.1
/// [Apple: "Identifying the parameters in a postback"].
public struct PostbackPayload: Sendable, Hashable {
    /// The deduplication key (UUID in practice, either letter case).
    public let postbackIdentifier: String
    /// The ad network the postback is for (`ad-network-identifier`).
    public let adNetworkIdentifier: String
    /// The advertised app's App Store ID; can exceed 2^32 (Apple's example: 10738027756).
    public let advertisedItemIdentifier: UInt64
    /// How the user converted (`conversion-type`).
    public let conversionType: ConversionType
    /// The signed `impression-type`, as spelled.
    public let impressionType: String
    /// The signed `did-win`: false for a nonwinning postback (an ad network that did not win the attribution).
    public let didWin: Bool
    /// The conversion window: 0 (days 0-2), 1 (days 3-7) or 2 (days 8-35).
    public let postbackSequenceIndex: Int
    /// The campaign's source identifier as 2, 3 or 4 ASCII digits (a string here, an integer in impressions).
    public let sourceIdentifier: String
    /// Absent at crowd-anonymity tier 0.
    public let marketplaceIdentifier: String?
    /// Present at tier 3 only; 0 in development postbacks.
    public let publisherItemIdentifier: UInt64?
    /// Every signed member as decoded, unknown ones included (Apple adds fields over time).
    @_spi(CommandLine) @_spi(Servers) @_spi(Stores) public let object: JSONObject

    /// The payload's field errors under rules P1 (presence, JSON type) and P2 (values), as `layout` (Apple's
    /// table, ``MessageLayout/postbackPayload``, unless a test adds a member) defines them.
    ///
    /// - Returns: the payload when there are none; otherwise nil, with the findings appended.
    static func decode(_ object: JSONObject, layout: MessageLayout = .postbackPayload,
                               findings: inout [Finding]) -> PostbackPayload? {
        typealias Slot = PostbackPayloadMember
        var reader = FieldReader(object, owner: layout.owner, typeRule: .p1, rangeRule: .p2)
        let values = reader.read(layout)
        findings += reader.findings
        guard reader.findings.isEmpty,
              let postbackIdentifier = values[Slot.postbackIdentifier.slot]?.stringValue,
              let adNetworkIdentifier = values[Slot.adNetworkIdentifier.slot]?.stringValue,
              let advertisedItem = values[Slot.advertisedItemIdentifier.slot]?.numberValue?.uint64Value,
              let conversion = values[Slot.conversionType.slot]?.stringValue.flatMap(ConversionType.init(exactly:)),
              let impressionType = values[Slot.impressionType.slot]?.stringValue,
              let didWin = values[Slot.didWin.slot]?.boolValue,
              let index = values[Slot.postbackSequenceIndex.slot]?.numberValue?.uint64Value,
              let sourceIdentifier = values[Slot.sourceIdentifier.slot]?.stringValue
        else { return nil }
        return PostbackPayload(
            postbackIdentifier: postbackIdentifier, adNetworkIdentifier: adNetworkIdentifier,
            advertisedItemIdentifier: advertisedItem, conversionType: conversion, impressionType: impressionType,
            didWin: didWin, postbackSequenceIndex: Int(index), sourceIdentifier: sourceIdentifier,
            marketplaceIdentifier: values[Slot.marketplaceIdentifier.slot]?.stringValue,
            publisherItemIdentifier: values[Slot.publisherItemIdentifier.slot]?.numberValue?.uint64Value,
            object: object)
    }
}

/// How the user converted, from a postback's `conversion-type` [Apple: "Identifying the parameters in a postback"].
public enum ConversionType: String, Sendable, Hashable, CaseIterable, ExactlySpelled {
    @_spi(CommandLine) @_spi(Stores) public static let spellings = makeSpellings()

    /// A first download (`download`).
    case download
    /// A download of an app the user had before (`redownload`).
    case redownload
    /// Spelled with a hyphen in every signed postback seen; `reengagement` is refused (spec §10).
    case reEngagement = "re-engagement"
}
