/// The signed payload of an ad network's impression JWS, spec §4 [Apple: "Generating JWS impressions"].
public struct ImpressionPayload: Sendable, Hashable {
    /// A UUID, either letter case.
    public let impressionIdentifier: String
    /// The publisher app's App Store ID; 0 marks a development impression.
    public let publisherItemIdentifier: UInt64
    /// The signed `impression-type`, as spelled.
    public let impressionType: String
    /// The signed `ad-network-identifier`: the ad network that signed the impression (I2 checks it equals the kid).
    public let adNetworkIdentifier: String
    /// 0 ... 9999: an integer here, unlike the postback's string.
    public let sourceIdentifier: UInt64
    /// Milliseconds since 1970.
    public let timestamp: UInt64
    /// The advertised app's App Store ID (`advertised-item-identifier`).
    public let advertisedItemIdentifier: UInt64
    /// The signed `eligible-for-re-engagement`, when present.
    public let eligibleForReEngagement: Bool?
    /// Every signed member as decoded.
    @_spi(CommandLine) @_spi(Servers) @_spi(Stores) public let object: JSONObject

    /// The payload's field errors under rule I1 (presence, types and values alike), as `layout` (Apple's table,
    /// ``MessageLayout/impressionPayload``, unless a test adds a member) defines them.
    ///
    /// - Returns: the payload when there are none; otherwise nil, with the findings appended.
    static func decode(_ object: JSONObject, layout: MessageLayout = .impressionPayload,
                               findings: inout [Finding]) -> ImpressionPayload? {
        typealias Slot = ImpressionMember
        var reader = FieldReader(object, owner: layout.owner, typeRule: .i1, rangeRule: .i1)
        let values = reader.read(layout)
        findings += reader.findings
        guard reader.findings.isEmpty,
              let identifier = values[Slot.impressionIdentifier.slot]?.stringValue,
              let publisherItem = values[Slot.publisherItemIdentifier.slot]?.numberValue?.uint64Value,
              let impressionType = values[Slot.impressionType.slot]?.stringValue,
              let adNetworkIdentifier = values[Slot.adNetworkIdentifier.slot]?.stringValue,
              let sourceIdentifier = values[Slot.sourceIdentifier.slot]?.numberValue?.uint64Value,
              let timestamp = values[Slot.timestamp.slot]?.numberValue?.uint64Value,
              let advertisedItem = values[Slot.advertisedItemIdentifier.slot]?.numberValue?.uint64Value
        else { return nil }
        return ImpressionPayload(
            impressionIdentifier: identifier, publisherItemIdentifier: publisherItem, impressionType: impressionType,
            adNetworkIdentifier: adNetworkIdentifier, sourceIdentifier: sourceIdentifier, timestamp: timestamp,
            advertisedItemIdentifier: advertisedItem,
            eligibleForReEngagement: values[Slot.eligibleForReEngagement.slot]?.boolValue, object: object)
    }
}
