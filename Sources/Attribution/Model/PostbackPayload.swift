/// The signed payload of an AdAttributionKit postback (the JWS inside `jws-string`), spec §5.1
/// [Apple: "Identifying the parameters in a postback"].
public struct PostbackPayload: Sendable, Hashable {
    /// The deduplication key (UUID in practice, either letter case).
    public let postbackIdentifier: String
    public let adNetworkIdentifier: String
    /// The advertised app's App Store ID; can exceed 2^32 (Apple's example: 10738027756).
    public let advertisedItemIdentifier: UInt64
    public let conversionType: ConversionType
    public let impressionType: String
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
    public let object: JSONObject

    /// The payload's field errors under rules P1 (presence, JSON type) and P2 (values).
    ///
    /// - Returns: the payload when there are none; otherwise nil, with the findings appended.
    package static func decode(_ object: JSONObject, findings: inout [Finding]) -> PostbackPayload? {
        var reader = FieldReader(object, owner: "payload", typeRule: .p1, rangeRule: .p2)
        let postbackIdentifier = reader.string("postback-identifier")
        let adNetworkIdentifier = reader.string("ad-network-identifier")
        let advertisedItem = reader.integer("advertised-item-identifier")
        let conversionType = reader.string("conversion-type")
        let impressionType = reader.string("impression-type")
        let didWin = reader.bool("did-win")
        let index = reader.integer("postback-sequence-index", in: 0...2)
        let sourceIdentifier = reader.string("source-identifier")
        let marketplace = reader.string("marketplace-identifier", required: false)
        let publisherItem = reader.integer("publisher-item-identifier", required: false)

        if let postbackIdentifier {
            reader.require(!postbackIdentifier.isEmpty, "postback-identifier", "must not be empty")
        }
        if let adNetworkIdentifier {
            reader.require(!adNetworkIdentifier.isEmpty, "ad-network-identifier", "must not be empty")
        }
        let conversion = conversionType.flatMap { ConversionType(exactly: $0) }
        if let conversionType, conversion == nil {
            let hint = conversionType.isExactlyEqual(to: "reengagement")
                ? " (Apple signs the spelling \"re-engagement\")" : ""
            reader.require(false, "conversion-type",
                           "is \(JSONValue.quoted(conversionType)), not download, redownload or re-engagement\(hint)")
        }
        if let impressionType {
            reader.require(impressionType.isExactlyEqual(to: "app-impression"), "impression-type",
                           "is \(JSONValue.quoted(impressionType)), not \"app-impression\"")
        }
        if let sourceIdentifier {
            reader.require(SourceIdentifier.isPostbackForm(sourceIdentifier), "source-identifier",
                           "is \(JSONValue.quoted(sourceIdentifier)), not 2, 3 or 4 ASCII digits")
        }
        findings += reader.findings
        guard reader.findings.isEmpty, let postbackIdentifier, let adNetworkIdentifier, let advertisedItem,
              let conversion, let impressionType, let didWin, let index, let sourceIdentifier
        else { return nil }
        return PostbackPayload(
            postbackIdentifier: postbackIdentifier, adNetworkIdentifier: adNetworkIdentifier,
            advertisedItemIdentifier: advertisedItem, conversionType: conversion, impressionType: impressionType,
            didWin: didWin, postbackSequenceIndex: Int(index), sourceIdentifier: sourceIdentifier,
            marketplaceIdentifier: marketplace, publisherItemIdentifier: publisherItem, object: object)
    }
}

/// How the user converted, from a postback's `conversion-type` [Apple: "Identifying the parameters in a postback"].
public enum ConversionType: String, Sendable, Hashable, CaseIterable {
    case download
    case redownload
    /// Spelled with a hyphen in every signed postback seen; `reengagement` is refused (spec §10).
    case reEngagement = "re-engagement"
}
