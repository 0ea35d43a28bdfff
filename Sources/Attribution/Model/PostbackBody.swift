/// The unsigned members of a postback's HTTP body, spec §5.2: everything beside `jws-string`.
///
/// Nothing here is signed: anyone on the path could have changed it. Results keep these apart from the signed
/// fields (`unsigned` versus `fields`) so no one mistakes them for proof.
public struct PostbackBody: Sendable, Hashable {
    public let adInteractionType: AdInteractionType?
    /// The fine conversion value, 0 ... 63.
    public let conversionValue: Int?
    public let coarseConversionValue: CoarseConversionValue?
    /// Two capital letters (added in 2025).
    public let countryCode: String?
    /// Every member except `jws-string`, in received order, unknown ones included.
    public let members: JSONObject

    /// Reads the unsigned members under rule U1; the findings are appended, and only valid values are kept.
    package static func decode(_ body: JSONObject, findings: inout [Finding]) -> PostbackBody {
        let members = body.removing("jws-string")
        var reader = FieldReader(members, owner: "body", typeRule: .u1, rangeRule: .u1)
        let interaction = reader.string("ad-interaction-type", required: false)
        let conversionValue = reader.integer("conversion-value", required: false, in: 0...63)
        let coarse = reader.string("coarse-conversion-value", required: false)
        let country = reader.string("country-code", required: false)

        let interactionType = interaction.flatMap { AdInteractionType(exactly: $0) }
        if let interaction {
            reader.require(interactionType != nil, "ad-interaction-type",
                           "is \(JSONValue.quoted(interaction)), not \"view\" or \"click\"")
        }
        let coarseValue = coarse.flatMap { CoarseConversionValue(exactly: $0) }
        if let coarse {
            reader.require(coarseValue != nil, "coarse-conversion-value",
                           "is \(JSONValue.quoted(coarse)), not \"low\", \"medium\" or \"high\"")
        }
        var countryCode: String?
        if let country {
            let isTwoCapitals = country.utf8.count == 2
                && country.utf8.allSatisfy { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") }
            if reader.require(isTwoCapitals, "country-code",
                              "is \(JSONValue.quoted(country)), not two capital letters") {
                countryCode = country
            }
        }
        findings += reader.findings
        return PostbackBody(
            adInteractionType: interactionType, conversionValue: conversionValue.map(Int.init),
            coarseConversionValue: coarseValue, countryCode: countryCode, members: members)
    }

    /// True when the body carries a fine or a coarse conversion value.
    public var hasConversionValue: Bool {
        conversionValue != nil || coarseConversionValue != nil
    }
}

/// How the user met the ad, from the unsigned `ad-interaction-type` body member.
public enum AdInteractionType: String, Sendable, Hashable, CaseIterable {
    case view
    case click
}

/// The coarse conversion value a postback's body may carry (`coarse-conversion-value`).
public enum CoarseConversionValue: String, Sendable, Hashable, CaseIterable {
    case low
    case medium
    case high
}
