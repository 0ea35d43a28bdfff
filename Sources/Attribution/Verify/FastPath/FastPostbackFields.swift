/// The members ``FastPostbackPath`` reads from a postback body (spec §5.2), by slot.
enum BodyMember {
    static let jwsString = 0, adInteractionType = 1, conversionValue = 2, coarseConversionValue = 3, countryCode = 4
    static let names: [[UInt8]] = [
        "jws-string", "ad-interaction-type", "conversion-value", "coarse-conversion-value", "country-code",
    ].map { Array($0.utf8) }
}

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

extension FastPostbackPath {
    /// A payload's fields once rules P1 and P2 hold (`PostbackPayload.decode` finds nothing); nil otherwise.
    struct SignedFields {
        let postbackIdentifier: Range<Int>
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
                  let conversion = members.choice(Slot.conversionType, Self.conversionTypes) ?? nil,
                  let impression = members.string(Slot.impressionType), members.matches(impression, "app-impression"),
                  let didWin = members.boolean(Slot.didWin),
                  let index = members.integer(Slot.postbackSequenceIndex), index <= 2,
                  let source = members.string(Slot.sourceIdentifier),
                  SourceIdentifier.isPostbackForm(utf8: members.bytes(source)),
                  // Optional members, when present, must have their type.
                  members.slots[Slot.marketplaceIdentifier] == nil || members.string(Slot.marketplaceIdentifier) != nil,
                  members.slots[Slot.publisherItemIdentifier] == nil
                    || members.integer(Slot.publisherItemIdentifier) != nil
            else { return nil }
            postbackIdentifier = identifier
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

    /// A body's unsigned fields once rule U1 holds (`PostbackBody.decode` finds nothing); nil otherwise.
    struct UnsignedFields {
        let interaction: AdInteractionType?
        let hasFineValue: Bool
        let hasCoarseValue: Bool
        let hasCountryCode: Bool

        init?(_ members: Members) {
            typealias Slot = BodyMember
            let slots = members.slots
            // Each present member must be well formed: `?? nil` turns "present but not one of the values" into nil.
            let interaction = members.choice(Slot.adInteractionType, Self.interactions)
            let coarse = members.choice(Slot.coarseConversionValue, Self.coarseValues)
            guard slots[Slot.adInteractionType] == nil || (interaction ?? nil) != nil,
                  slots[Slot.coarseConversionValue] == nil || (coarse ?? nil) != nil,
                  slots[Slot.conversionValue] == nil || (members.integer(Slot.conversionValue) ?? 64) <= 63,
                  slots[Slot.countryCode] == nil || members.string(Slot.countryCode).map({ range in
                      range.count == 2 && members.bytes(range).allSatisfy { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") }
                  }) == true
            else { return nil }
            self.interaction = interaction ?? nil
            hasFineValue = slots[Slot.conversionValue] != nil
            hasCoarseValue = slots[Slot.coarseConversionValue] != nil
            hasCountryCode = slots[Slot.countryCode] != nil
        }

        static let interactions: [(StaticString, AdInteractionType)] = [("view", .view), ("click", .click)]
        static let coarseValues: [(StaticString, CoarseConversionValue)] = [
            ("low", .low), ("medium", .medium), ("high", .high),
        ]
    }
}
