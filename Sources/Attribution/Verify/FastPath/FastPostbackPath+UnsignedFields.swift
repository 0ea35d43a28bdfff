extension FastPostbackPath {
    /// A body's unsigned fields once rule U1 holds (`PostbackBody.decode` finds nothing, both reading the body's
    /// table); nil otherwise.
    struct UnsignedFields {
        let interaction: AdInteractionType?
        let hasFineValue: Bool
        let hasCoarseValue: Bool
        let hasCountryCode: Bool

        init?(_ members: Members, layout: MessageLayout) {
            typealias Slot = PostbackBodyMember
            guard members.conform(to: layout) else { return nil }
            let slots = members.slots
            interaction = members.choice(Slot.adInteractionType.slot, AdInteractionType.self)
            hasFineValue = slots.isPresent(Slot.conversionValue.slot)
            hasCoarseValue = slots.isPresent(Slot.coarseConversionValue.slot)
            hasCountryCode = slots.isPresent(Slot.countryCode.slot)
        }
    }
}
