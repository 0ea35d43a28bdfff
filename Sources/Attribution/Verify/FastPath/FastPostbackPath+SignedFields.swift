extension FastPostbackPath {
    /// A payload's fields once rules P1 and P2 hold (`PostbackPayload.decode` finds nothing, both reading the
    /// payload's table); nil otherwise: the identifier's place in the payload, and the facts the postback rules
    /// read (key and body left to the caller).
    struct SignedFields {
        let postbackIdentifier: Range<Int>
        let facts: PostbackFacts

        init?(_ members: Members, layout: MessageLayout) {
            typealias Slot = PostbackPayloadMember
            guard members.conform(to: layout),
                  let identifier = members.string(Slot.postbackIdentifier.slot),
                  let network = members.string(Slot.adNetworkIdentifier.slot),
                  let conversion = members.choice(Slot.conversionType.slot, ConversionType.self),
                  let didWin = members.boolean(Slot.didWin.slot),
                  let index = members.integer(Slot.postbackSequenceIndex.slot),
                  let source = members.string(Slot.sourceIdentifier.slot)
            else { return nil }
            postbackIdentifier = identifier
            facts = PostbackFacts(
                isDevelopmentSettingsKey: false,
                isDevelopmentNetwork: members.bytes(network)
                    .elementsEqual(PostbackRules.developmentNetworkIdentifier.utf8),
                conversionType: conversion, didWin: didWin,
                postbackSequenceIndex: Int(index), sourceIdentifierDigits: source.count,
                hasMarketplace: members.slots.isPresent(Slot.marketplaceIdentifier.slot),
                hasPublisherItem: members.slots.isPresent(Slot.publisherItemIdentifier.slot), body: nil)
        }
    }
}
