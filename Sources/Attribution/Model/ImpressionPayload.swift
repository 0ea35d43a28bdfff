/// The signed payload of an ad network's impression JWS, spec §4 [Apple: "Generating JWS impressions"].
public struct ImpressionPayload: Sendable, Hashable {
    /// A UUID, either letter case.
    public let impressionIdentifier: String
    /// The publisher app's App Store ID; 0 marks a development impression.
    public let publisherItemIdentifier: UInt64
    public let impressionType: String
    public let adNetworkIdentifier: String
    /// 0 ... 9999: an integer here, unlike the postback's string.
    public let sourceIdentifier: UInt64
    /// Milliseconds since 1970.
    public let timestamp: UInt64
    public let advertisedItemIdentifier: UInt64
    public let eligibleForReEngagement: Bool?
    /// Every signed member as decoded.
    public let object: JSONObject

    /// The payload's field errors under rule I1 (presence, types and values alike).
    ///
    /// - Returns: the payload when there are none; otherwise nil, with the findings appended.
    package static func decode(_ object: JSONObject, findings: inout [Finding]) -> ImpressionPayload? {
        var reader = FieldReader(object, owner: "impression", typeRule: .i1, rangeRule: .i1)
        let identifier = reader.string("impression-identifier")
        let publisherItem = reader.integer("publisher-item-identifier")
        let impressionType = reader.string("impression-type")
        let adNetworkIdentifier = reader.string("ad-network-identifier")
        let sourceIdentifier = reader.integer("source-identifier", in: 0...9999)
        let timestamp = reader.integer("timestamp")
        let advertisedItem = reader.integer("advertised-item-identifier")
        let eligible = reader.bool("eligible-for-re-engagement", required: false)

        if let identifier {
            reader.require(Self.isUUID(identifier), "impression-identifier",
                           "is \(JSONValue.quoted(identifier)), not a UUID (8-4-4-4-12 hex digits)")
        }
        if let impressionType {
            reader.require(impressionType.isExactlyEqual(to: "app-impression"), "impression-type",
                           "is \(JSONValue.quoted(impressionType)), not \"app-impression\"")
        }
        if let adNetworkIdentifier {
            reader.require(!adNetworkIdentifier.isEmpty, "ad-network-identifier", "must not be empty")
            reader.require(!adNetworkIdentifier.utf8.contains { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") },
                           "ad-network-identifier", "must be lowercase")
        }
        findings += reader.findings
        guard reader.findings.isEmpty, let identifier, let publisherItem, let impressionType,
              let adNetworkIdentifier, let sourceIdentifier, let timestamp, let advertisedItem
        else { return nil }
        return ImpressionPayload(
            impressionIdentifier: identifier, publisherItemIdentifier: publisherItem, impressionType: impressionType,
            adNetworkIdentifier: adNetworkIdentifier, sourceIdentifier: sourceIdentifier, timestamp: timestamp,
            advertisedItemIdentifier: advertisedItem, eligibleForReEngagement: eligible, object: object)
    }

    /// 36 characters, hex digits in groups 8-4-4-4-12, either case; version and variant bits not checked.
    static func isUUID(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard bytes.count == 36 else { return false }
        for (offset, byte) in bytes.enumerated() {
            if [8, 13, 18, 23].contains(offset) {
                guard byte == UInt8(ascii: "-") else { return false }
            } else {
                let isHex = (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                    || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
                    || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(byte)
                guard isHex else { return false }
            }
        }
        return true
    }
}
