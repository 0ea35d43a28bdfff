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

    /// `conversion-value`: the fine value, 0 ... 63 (rule U1; SKAdNetwork S5).
    static let conversionValueRange: ClosedRange<UInt64> = 0...63

    /// `country-code`: two capital ASCII letters (rule U1; SKAdNetwork S5).
    static func isCountryCode(_ utf8: some Collection<UInt8>) -> Bool {
        utf8.count == 2 && utf8.allSatisfy { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") }
    }

    /// Reads the unsigned members under rule U1; the findings are appended, and only valid values are kept.
    package static func decode(_ body: JSONObject, findings: inout [Finding]) -> PostbackBody {
        let members = body.removing("jws-string")
        var reader = FieldReader(members, owner: "body", typeRule: .u1, rangeRule: .u1)
        let interaction = reader.string("ad-interaction-type", required: false)
        let conversionValue = reader.integer("conversion-value", required: false, in: conversionValueRange)
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
            if reader.require(isCountryCode(country.utf8), "country-code",
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
public enum AdInteractionType: String, Sendable, Hashable, CaseIterable, ExactlySpelled {
    static let spellings = makeSpellings()

    case view
    case click
}

/// The coarse conversion value a postback's body may carry (`coarse-conversion-value`).
public enum CoarseConversionValue: String, Sendable, Hashable, CaseIterable, ExactlySpelled {
    static let spellings = makeSpellings()

    case low
    case medium
    case high
}
