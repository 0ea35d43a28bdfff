/// The members ``FastPostbackPath`` reads from a postback's signed payload (spec §5.1), by slot.
enum PayloadMember {
    static let postbackIdentifier = 0, adNetworkIdentifier = 1, advertisedItemIdentifier = 2, conversionType = 3,
               impressionType = 4, didWin = 5, postbackSequenceIndex = 6, sourceIdentifier = 7,
               marketplaceIdentifier = 8, publisherItemIdentifier = 9
    static let names: [[UInt8]] = [
        "postback-identifier", "ad-network-identifier", "advertised-item-identifier", "conversion-type",
        "impression-type", "did-win", "postback-sequence-index", "source-identifier", "marketplace-identifier",
        "publisher-item-identifier",
    ].map { Array($0.utf8) }
}
