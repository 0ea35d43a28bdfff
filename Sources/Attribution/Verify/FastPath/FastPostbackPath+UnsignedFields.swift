extension FastPostbackPath {
    /// A body's unsigned fields once rule U1 holds (`PostbackBody.decode` finds nothing); nil otherwise.
    struct UnsignedFields {
        let interaction: AdInteractionType?
        let hasFineValue: Bool
        let hasCoarseValue: Bool
        let hasCountryCode: Bool

        init?(_ members: Members) {
            typealias Slot = BodyMember
            let slots = members.slots
            // Each member, when present, must be well formed.
            let interaction = members.choice(Slot.adInteractionType, AdInteractionType.self)
            let fineValue = members.integer(Slot.conversionValue)
            let country = members.string(Slot.countryCode)
            guard members.isAbsent(Slot.adInteractionType, or: interaction != nil),
                  members.isAbsent(Slot.coarseConversionValue,
                                   or: members.choice(Slot.coarseConversionValue, CoarseConversionValue.self) != nil),
                  members.isAbsent(Slot.conversionValue,
                                   or: fineValue.map(PostbackBody.conversionValueRange.contains) == true),
                  members.isAbsent(Slot.countryCode,
                                   or: country.map { PostbackBody.isCountryCode(members.bytes($0)) } == true)
            else { return nil }
            self.interaction = interaction
            hasFineValue = slots[Slot.conversionValue] != nil
            hasCoarseValue = slots[Slot.coarseConversionValue] != nil
            hasCountryCode = slots[Slot.countryCode] != nil
        }
    }
}
