/// The signed members of an SKAdNetwork postback (spec §9), decoded for one signing order, with the string its
/// signature covers.
///
/// Only the members of that order are here as typed values; everything else in the body, including
/// `conversion-value`, `coarse-conversion-value` and `country-code`, is in `unsignedMembers` and proves nothing.
public struct SKAdNetworkPostback: Sendable, Hashable {
    /// The version that chose the order and the key.
    public let version: SKAdNetworkVersion
    /// `ad-network-id`.
    public let adNetworkID: String
    /// `campaign-id` (1.0 to 3.0).
    public let campaignID: UInt64?
    /// `source-identifier` (4.0): 2 to 4 digits once rule S4 passed.
    public let sourceIdentifier: String?
    /// `app-id`: the advertised app.
    public let appID: UInt64
    /// `transaction-id`.
    public let transactionID: String
    /// `redownload` (2.0 and later).
    public let redownload: Bool?
    /// `source-app-id`, when present and signed.
    public let sourceAppID: UInt64?
    /// `source-domain` (4.0), when present.
    public let sourceDomain: String?
    /// `fidelity-type` (2.2 and later, unless the 2.2 fallback order verified): 0 or 1 once rule S4 passed.
    public let fidelityType: UInt64?
    /// `did-win` (3.0 and later).
    public let didWin: Bool?
    /// `postback-sequence-index` (4.0): 0, 1 or 2 once rule S4 passed.
    public let postbackSequenceIndex: UInt64?
    /// The signed members present, in signing order, with their values as received.
    @_spi(CommandLine) @_spi(Servers) @_spi(Stores) public let signedMembers: JSONObject
    /// Every other member of the body except `attribution-signature`, in received order.
    @_spi(CommandLine) @_spi(Servers) @_spi(Stores) public let unsignedMembers: JSONObject
    /// The signed members' values joined by U+2063 (spec §9): what the signature must cover, as UTF-8.
    public let signedString: String

    /// The separator Apple joins the signed values with: U+2063 INVISIBLE SEPARATOR (UTF-8 `E2 81 A3`).
    @_spi(CommandLine) @_spi(Stores) public static let separator: Character = "\u{2063}"

    /// The key under which a repeat is a duplicate (rule D1): `transaction-id` and the signed
    /// `postback-sequence-index` (`0` when the version signs none), as spec §9 says, narrowed by the signed
    /// `version` and `ad-network-id`.
    ///
    /// An unsigned index is never used: anyone could change it to slip a replay past deduplication. The version and
    /// network are signed, so a retry always repeats them, while distinct signed postbacks that share a transaction
    /// are kept apart: Apple's own 2.1, 2.2 and 3.0 examples share one `transaction-id`, and an install's winning
    /// and nonwinning postbacks go to different networks.
    public var deduplicationKey: String {
        [transactionID, String(postbackSequenceIndex ?? 0), version.rawValue, adNetworkID].joined(separator: "\u{1F}")
    }

    /// Reads the members `signedFields` names under rule S2 (present unless optional, with their JSON types;
    /// integers plain and within 0 ... 2^64-1, since they are signed in decimal).
    ///
    /// - Returns: the postback when there are no findings; otherwise nil, with the findings appended.
    static func decode(
        _ body: JSONObject, version: SKAdNetworkVersion, signedFields: [SKAdNetworkField], findings: inout [Finding]
    ) -> SKAdNetworkPostback? {
        var reader = FieldReader(body, owner: "the \(version.rawValue) postback", typeRule: .s2, rangeRule: .s2)
        var strings: [SKAdNetworkField: String] = [:]
        var integers: [SKAdNetworkField: UInt64] = [:]
        var booleans: [SKAdNetworkField: Bool] = [:]
        // S2 reads types only (integers within 0 ... 2^64-1); the values are S4's, once the signature holds.
        for field in signedFields {
            let required = !field.isOptional
            switch field.valueType {
            case .string: strings[field] = reader.string(field.rawValue, required: required)
            case .integer: integers[field] = reader.integer(field.rawValue, required: required)
            case .boolean: booleans[field] = reader.bool(field.rawValue, required: required)
            }
        }
        findings += reader.findings
        guard reader.findings.isEmpty, let adNetworkID = strings[.adNetworkID], let appID = integers[.appID],
              let transactionID = strings[.transactionID] else { return nil }
        let signed = JSONObject(members: signedFields.compactMap { field in
            body[field.rawValue].map { JSONObject.Member(name: field.rawValue, value: $0) }
        })
        return SKAdNetworkPostback(
            version: version, adNetworkID: adNetworkID, campaignID: integers[.campaignID],
            sourceIdentifier: strings[.sourceIdentifier], appID: appID, transactionID: transactionID,
            redownload: booleans[.redownload], sourceAppID: integers[.sourceAppID],
            sourceDomain: strings[.sourceDomain], fidelityType: integers[.fidelityType], didWin: booleans[.didWin],
            postbackSequenceIndex: integers[.postbackSequenceIndex], signedMembers: signed,
            unsignedMembers: unsignedMembers(of: body, signedFields: signedFields),
            signedString: signed.members.map { signedText($0.value) }.joined(separator: String(separator)))
    }

    /// The body's members that `signedFields` does not cover, `attribution-signature` left out, in received order.
    static func unsignedMembers(of body: JSONObject, signedFields: [SKAdNetworkField]) -> JSONObject {
        body.removing(signedFields.map(\.rawValue) + [SKAdNetworkField.attributionSignature])
    }

    /// One value as the signed string writes it: strings as received (after JSON unescaping), Booleans `true` or
    /// `false`, integers in decimal. S2 admits only plain non-negative integers, whose literal is already their
    /// decimal form, except `-0`, which is written `0`.
    static func signedText(_ value: JSONValue) -> String {
        switch value {
        case .string(let string): string
        case .bool(let bool): bool ? "true" : "false"
        case .number(let number): number.uint64Value.map { String($0) } ?? number.literal
        case .null, .array, .object: value.jsonText
        }
    }
}
