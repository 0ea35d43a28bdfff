/// The members ``FastPostbackPath`` reads from a postback body (spec §5.2), by slot.
enum BodyMember {
    static let jwsString = 0, adInteractionType = 1, conversionValue = 2, coarseConversionValue = 3, countryCode = 4
    static let names: [[UInt8]] = [
        "jws-string", "ad-interaction-type", "conversion-value", "coarse-conversion-value", "country-code",
    ].map { Array($0.utf8) }
}
