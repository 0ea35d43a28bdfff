/// An SKAdNetwork postback version and the members its signature covers, in signing order (spec §9)
/// [Apple: "Verifying an install-validation postback"; "Combining parameters for previous postback versions"].
///
/// The order is the whole contract: the signature is over the members' values joined by U+2063, so a verifier
/// that puts one member in the wrong place rejects every genuine postback of that version.
public enum SKAdNetworkVersion: String, Sendable, Hashable, CaseIterable, ExactlySpelled {
    @_spi(CommandLine) @_spi(Stores) public static let spellings = makeSpellings()

    /// No `version` member, or `"1.0"`: four members, Apple's P-192 key.
    case v1_0 = "1.0"
    /// Adds `version`, `redownload` and the optional `source-app-id`; still the P-192 key.
    case v2_0 = "2.0"
    /// The 2.0 members under Apple's P-256 key.
    case v2_1 = "2.1"
    /// Adds `fidelity-type` at the end (some real postbacks verify only without it: rule S6).
    case v2_2 = "2.2"
    /// Adds `did-win` (nonwinning postbacks).
    case v3_0 = "3.0"
    /// `source-identifier` replaces `campaign-id`; adds `source-domain` (web ads) and `postback-sequence-index`.
    case v4_0 = "4.0"

    /// The members the signature covers, in signing order. The optional ones (``SKAdNetworkField/isOptional``)
    /// are left out of the signed string when absent.
    var signedFields: [SKAdNetworkField] {
        switch self {
        case .v1_0:
            [.adNetworkID, .campaignID, .appID, .transactionID]
        case .v2_0, .v2_1:
            [.version, .adNetworkID, .campaignID, .appID, .transactionID, .redownload, .sourceAppID]
        case .v2_2:
            Self.v2_1.signedFields + [.fidelityType]
        case .v3_0:
            Self.v2_2.signedFields + [.didWin]
        case .v4_0:
            [.version, .adNetworkID, .sourceIdentifier, .appID, .transactionID, .redownload, .sourceAppID,
             .sourceDomain, .fidelityType, .didWin, .postbackSequenceIndex]
        }
    }

    /// The unsigned members Apple defines for an SKAdNetwork body, every version alike (rule S5): the
    /// AdAttributionKit body's conversion values and country code (``PostbackBodyMember``), which no signature
    /// covers here either.
    static let unsignedLayout = MessageLayout(
        owner: "the body",
        members: [PostbackBodyMember.conversionValue, .coarseConversionValue, .countryCode].map {
            MessageLayout.postbackBody[$0.slot]
        })

    /// The other order a postback of this version may be signed over: for 2.2 only, the 2.0/2.1 order (no
    /// `fidelity-type`), which real 2.2 postbacks have been seen to use (spec §9, rule S6).
    var fallbackSignedFields: [SKAdNetworkField]? {
        self == .v2_2 ? Self.v2_1.signedFields : nil
    }

    /// The curve of Apple's signing key: P-192 for 1.0 and 2.0, P-256 from 2.1 on (spec §3).
    var curve: ECPublicKey.Curve {
        switch self {
        case .v1_0, .v2_0: .p192
        case .v2_1, .v2_2, .v3_0, .v4_0: .p256
        }
    }

    /// Reads a body's version under rule S1: no `version` member is 1.0; otherwise it must be one of the known
    /// version strings exactly (`"4.0"`, not `4.0`, `"4"` or `" 4.0"`), else `unsupported-version`.
    @_spi(CommandLine) @_spi(Stores)
    public static func read(_ body: JSONObject) -> Result<SKAdNetworkVersion, AttributionError> {
        guard let value = body[SKAdNetworkField.version.rawValue] else { return .success(.v1_0) }
        let known = allCases.map { JSONValue.quoted($0.rawValue) }.joined(separator: ", ")
        guard case .string(let text) = value else {
            return .failure(AttributionError(.s1, "version is \(value.typeName), not one of the strings \(known)"))
        }
        guard let version = allCases.first(where: { $0.rawValue.utf8.elementsEqual(text.utf8) }) else {
            return .failure(AttributionError(.s1, "version \(JSONValue.quoted(text)) is not one of \(known)"))
        }
        return .success(version)
    }
}
