/// The unsigned members of a postback's HTTP body, spec §5.2: everything beside `jws-string`.
///
/// Nothing here is signed: anyone on the path could have changed it. Results keep these apart from the signed
/// fields (`unsigned` versus `fields`) so no one mistakes them for proof.
public struct PostbackBody: Sendable, Hashable {
    /// The unsigned `ad-interaction-type` (`view` or `click`), when present.
    public let adInteractionType: AdInteractionType?
    /// The fine conversion value, 0 ... 63.
    public let conversionValue: Int?
    /// The unsigned coarse conversion value (`coarse-conversion-value`), when present.
    public let coarseConversionValue: CoarseConversionValue?
    /// Two capital letters (added in 2025).
    public let countryCode: String?
    /// Every member except `jws-string`, in received order, unknown ones included.
    @_spi(CommandLine) @_spi(Servers) @_spi(Stores) public let members: JSONObject

    /// Reads the unsigned members under rule U1, as `layout` (Apple's table, ``MessageLayout/postbackBody``,
    /// unless a test adds a member) defines them; the findings are appended, and only valid values are kept.
    static func decode(_ body: JSONObject, layout: MessageLayout = .postbackBody,
                               findings: inout [Finding]) -> PostbackBody {
        typealias Slot = PostbackBodyMember
        let members = body.removing(Slot.jwsString.name)
        var reader = FieldReader(members, owner: layout.owner, typeRule: .u1, rangeRule: .u1)
        // `jws-string` is the J rules'.
        let values = reader.read(layout, skipping: Slot.jwsString.slot)
        findings += reader.findings
        return PostbackBody(
            adInteractionType: values[Slot.adInteractionType.slot]?.stringValue
                .flatMap(AdInteractionType.init(exactly:)),
            conversionValue: values[Slot.conversionValue.slot]?.numberValue?.uint64Value.map(Int.init),
            coarseConversionValue: values[Slot.coarseConversionValue.slot]?.stringValue
                .flatMap(CoarseConversionValue.init(exactly:)),
            countryCode: values[Slot.countryCode.slot]?.stringValue, members: members)
    }

    /// True when the body carries a fine or a coarse conversion value.
    public var hasConversionValue: Bool {
        conversionValue != nil || coarseConversionValue != nil
    }
}

/// How the user met the ad, from the unsigned `ad-interaction-type` body member.
public enum AdInteractionType: String, Sendable, Hashable, CaseIterable, ExactlySpelled {
    @_spi(CommandLine) @_spi(Stores) public static let spellings = makeSpellings()

    /// The ad was viewed (`view`).
    case view
    /// The ad was tapped (`click`).
    case click
}

/// The coarse conversion value a postback's body may carry (`coarse-conversion-value`).
public enum CoarseConversionValue: String, Sendable, Hashable, CaseIterable, ExactlySpelled {
    @_spi(CommandLine) @_spi(Stores) public static let spellings = makeSpellings()

    /// `low`.
    case low
    /// `medium`.
    case medium
    /// `high`.
    case high
}
