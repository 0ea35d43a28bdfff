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
            let interaction = members.choice(Slot.adInteractionType, Self.interactions)
            let fineValue = members.integer(Slot.conversionValue)
            let country = members.string(Slot.countryCode)
            guard members.isAbsent(Slot.adInteractionType, or: interaction != nil),
                  members.isAbsent(Slot.coarseConversionValue,
                                   or: members.choice(Slot.coarseConversionValue, Self.coarseValues) != nil),
                  members.isAbsent(Slot.conversionValue, or: fineValue.map { $0 <= 63 } == true),
                  members.isAbsent(Slot.countryCode, or: country.map { Self.isTwoCapitals(members.bytes($0)) } == true)
            else { return nil }
            self.interaction = interaction
            hasFineValue = slots[Slot.conversionValue] != nil
            hasCoarseValue = slots[Slot.coarseConversionValue] != nil
            hasCountryCode = slots[Slot.countryCode] != nil
        }

        private static func isTwoCapitals(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
            bytes.count == 2 && bytes.allSatisfy { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") }
        }

        static let interactions: [(StaticString, AdInteractionType)] = [("view", .view), ("click", .click)]
        static let coarseValues: [(StaticString, CoarseConversionValue)] = [
            ("low", .low), ("medium", .medium), ("high", .high),
        ]
    }
}
