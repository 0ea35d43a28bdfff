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
            // Each present member must be well formed: `?? nil` turns "present but not one of the values" into nil.
            let interaction = members.choice(Slot.adInteractionType, Self.interactions)
            let coarse = members.choice(Slot.coarseConversionValue, Self.coarseValues)
            guard slots[Slot.adInteractionType] == nil || (interaction ?? nil) != nil,
                  slots[Slot.coarseConversionValue] == nil || (coarse ?? nil) != nil,
                  slots[Slot.conversionValue] == nil || (members.integer(Slot.conversionValue) ?? 64) <= 63,
                  slots[Slot.countryCode] == nil
                    || members.string(Slot.countryCode).map({ Self.isTwoCapitals(members.bytes($0)) }) == true
            else { return nil }
            self.interaction = interaction ?? nil
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
