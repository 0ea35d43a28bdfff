/// The rule catalogue of spec §7: every rule's ID, class and sentence, in the order results list them.
public enum RuleCatalogue {
    /// One catalogue entry.
    public struct Rule: Sendable, Hashable {
        public let id: RuleID
        /// The error code when the rule rejects; nil for a warning rule.
        public let code: ErrorCode?
        public let appliesTo: String
        public let summary: String
    }

    /// All rules, in catalogue order: the order of the checks (J, then the payload's P, U, T or I rules, then
    /// SKAdNetwork's S1-S6 in the order they are applied), D1 last because it looks across items.
    public static let rules: [Rule] = [
        Rule(id: "J1", code: .malformedInput, appliesTo: "JWS", summary: "envelope, base64url, JSON, size, nesting"),
        Rule(id: "J2", code: .unsupportedAlgorithm, appliesTo: "JWS", summary: "alg is ES256; no crit"),
        Rule(id: "J3", code: .unknownKey, appliesTo: "JWS",
             summary: "kid names a loaded key or an Apple development kid"),
        Rule(id: "J4", code: .untrustedKey, appliesTo: "JWS", summary: "development kid only with --allow-development"),
        Rule(id: "J5", code: .badSignature, appliesTo: "JWS", summary: "signature verifies"),
        Rule(id: "P1", code: .invalidField, appliesTo: "postback payload", summary: "required fields, JSON types"),
        Rule(id: "P2", code: .invalidField, appliesTo: "postback payload", summary: "enumerations and ranges"),
        Rule(id: "P3", code: .invalidField, appliesTo: "postback payload", summary: "re-engagement implies did-win"),
        Rule(id: "P4", code: .invalidField, appliesTo: "postback payload", summary: "nonwinning implies index 0"),
        Rule(id: "P5", code: nil, appliesTo: "postback payload",
             summary: "apple-development-identifier/1 implies network development.adattributionkit"),
        Rule(id: "U1", code: .invalidUnsignedField, appliesTo: "postback body", summary: "types and ranges"),
        Rule(id: "U2", code: .invalidUnsignedField, appliesTo: "postback body", summary: "not both fine and coarse"),
        Rule(id: "U3", code: .invalidUnsignedField, appliesTo: "postback body",
             summary: "re-engagement implies ad-interaction-type click"),
        Rule(id: "U4", code: nil, appliesTo: "postback body", summary: "ad-interaction-type present"),
        Rule(id: "U5", code: nil, appliesTo: "postback body", summary: "nonwinning implies no conversion value"),
        Rule(id: "T1", code: nil, appliesTo: "postback", summary: "index 1-2: 2-digit source-identifier"),
        Rule(id: "T2", code: nil, appliesTo: "postback", summary: "index 1-2: no fine conversion-value"),
        Rule(id: "T3", code: nil, appliesTo: "postback",
             summary: "index 1-2: no publisher-item-identifier, no country-code"),
        Rule(id: "T4", code: nil, appliesTo: "postback", summary: "tier 3 fields: no coarse value"),
        Rule(id: "T5", code: nil, appliesTo: "postback", summary: "3-4-digit source-identifier at index 0: no coarse"),
        Rule(id: "T6", code: nil, appliesTo: "postback",
             summary: "no marketplace-identifier (tier 0): 2 digits, no value, no publisher-item-identifier"),
        Rule(id: "I1", code: .invalidField, appliesTo: "impression", summary: "fields, types and ranges"),
        Rule(id: "I2", code: nil, appliesTo: "impression", summary: "ad-network-identifier equals the kid"),
        Rule(id: "I3", code: nil, appliesTo: "impression", summary: "timestamp not in the future nor too old"),
        Rule(id: "S1", code: .unsupportedVersion, appliesTo: "SKAdNetwork postback",
             summary: "version absent (1.0) or exactly one of \"1.0\", \"2.0\", \"2.1\", \"2.2\", \"3.0\", \"4.0\""),
        Rule(id: "S2", code: .invalidField, appliesTo: "SKAdNetwork postback",
             summary: "the version's signed members present (but optional ones), JSON types, integers 0 ... 2^64-1"),
        Rule(id: "S3", code: .badSignature, appliesTo: "SKAdNetwork postback",
             summary: "attribution-signature (base64 DER) verifies over the U+2063-joined signed values"),
        Rule(id: "S4", code: .invalidField, appliesTo: "SKAdNetwork postback",
             summary: "signed values: no U+2063 separator inside a string value, ids non-empty, fidelity-type 0-1, "
                 + "source-identifier 2-4 digits, index 0-2, not both source-app-id and source-domain, "
                 + "nonwinning has no source-app-id"),
        Rule(id: "S5", code: .invalidUnsignedField, appliesTo: "SKAdNetwork postback",
             summary: "conversion-value 0-63, coarse low/medium/high, not both, country-code two capitals"),
        Rule(id: "S6", code: nil, appliesTo: "SKAdNetwork postback",
             summary: "a 2.2 postback verified only with the 2.0/2.1 order (without fidelity-type)"),
        Rule(id: "D1", code: .duplicate, appliesTo: "postback, SKAdNetwork postback",
             summary: "postback-identifier (SKAdNetwork: transaction-id and index) not already seen valid"),
    ]

    private static let positions: [RuleID: Int] = Dictionary(
        uniqueKeysWithValues: rules.enumerated().map { ($0.element.id, $0.offset) })

    /// A rule's position in the catalogue (unknown IDs sort last), for ordering findings.
    public static func position(of rule: RuleID) -> Int {
        positions[rule] ?? rules.count
    }
}
