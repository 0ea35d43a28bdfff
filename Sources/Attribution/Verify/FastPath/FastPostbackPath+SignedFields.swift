extension FastPostbackPath {
    /// A payload's fields once rules P1 and P2 hold (`PostbackPayload.decode` finds nothing); nil otherwise: the
    /// identifier's place in the payload, and the facts the postback rules read (key and body left to the caller).
    struct SignedFields {
        let postbackIdentifier: Range<Int>
        let facts: PostbackFacts

        init?(_ members: Members) {
            typealias Slot = PayloadMember
            guard let identifier = members.string(Slot.postbackIdentifier), !identifier.isEmpty,
                  let network = members.string(Slot.adNetworkIdentifier), !network.isEmpty,
                  members.integer(Slot.advertisedItemIdentifier) != nil,
                  let conversion = members.choice(Slot.conversionType, ConversionType.self),
                  let impression = members.string(Slot.impressionType),
                  members.bytes(impression).elementsEqual(PostbackPayload.appImpression.utf8),
                  let didWin = members.boolean(Slot.didWin),
                  let index = members.integer(Slot.postbackSequenceIndex),
                  PostbackPayload.sequenceIndexRange.contains(index),
                  let source = members.string(Slot.sourceIdentifier),
                  SourceIdentifier.isPostbackForm(utf8: members.bytes(source)),
                  members.isAbsent(Slot.marketplaceIdentifier, or: members.string(Slot.marketplaceIdentifier) != nil),
                  members.isAbsent(Slot.publisherItemIdentifier,
                                   or: members.integer(Slot.publisherItemIdentifier) != nil)
            else { return nil }
            postbackIdentifier = identifier
            facts = PostbackFacts(
                isDevelopmentSettingsKey: false,
                isDevelopmentNetwork: members.bytes(network)
                    .elementsEqual(PostbackRules.developmentNetworkIdentifier.utf8),
                conversionType: conversion, didWin: didWin,
                postbackSequenceIndex: Int(index), sourceIdentifierDigits: source.count,
                hasMarketplace: members.slots[Slot.marketplaceIdentifier] != nil,
                hasPublisherItem: members.slots[Slot.publisherItemIdentifier] != nil, body: nil)
        }
    }
}
