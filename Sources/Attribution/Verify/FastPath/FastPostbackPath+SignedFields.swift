extension FastPostbackPath {
    /// A payload's fields once rules P1 and P2 hold (`PostbackPayload.decode` finds nothing); nil otherwise.
    struct SignedFields {
        let postbackIdentifier: Range<Int>
        let adNetworkIdentifier: Range<Int>
        let conversionType: ConversionType
        let didWin: Bool
        let postbackSequenceIndex: UInt64
        let sourceIdentifierDigits: Int
        let hasMarketplace: Bool
        let hasPublisherItem: Bool

        init?(_ members: Members) {
            typealias Slot = PayloadMember
            guard let identifier = members.string(Slot.postbackIdentifier), !identifier.isEmpty,
                  let network = members.string(Slot.adNetworkIdentifier), !network.isEmpty,
                  members.integer(Slot.advertisedItemIdentifier) != nil,
                  let conversion = members.choice(Slot.conversionType, Self.conversionTypes),
                  let impression = members.string(Slot.impressionType), members.matches(impression, "app-impression"),
                  let didWin = members.boolean(Slot.didWin),
                  let index = members.integer(Slot.postbackSequenceIndex), index <= 2,
                  let source = members.string(Slot.sourceIdentifier),
                  SourceIdentifier.isPostbackForm(utf8: members.bytes(source)),
                  members.isAbsent(Slot.marketplaceIdentifier, or: members.string(Slot.marketplaceIdentifier) != nil),
                  members.isAbsent(Slot.publisherItemIdentifier,
                                   or: members.integer(Slot.publisherItemIdentifier) != nil)
            else { return nil }
            postbackIdentifier = identifier
            adNetworkIdentifier = network
            conversionType = conversion
            self.didWin = didWin
            postbackSequenceIndex = index
            sourceIdentifierDigits = source.count
            hasMarketplace = members.slots[Slot.marketplaceIdentifier] != nil
            hasPublisherItem = members.slots[Slot.publisherItemIdentifier] != nil
        }

        static let conversionTypes: [(StaticString, ConversionType)] = [
            ("download", .download), ("redownload", .redownload), ("re-engagement", .reEngagement),
        ]
    }
}
