/// A rule of the catalogue (spec section 7), and the catalogue itself: the cases are the rules in catalogue order,
/// which is the order of the checks and orders a result's findings (J, then the payload's P, U, T or I rules, then
/// SKAdNetwork's S1-S6 as they are applied, D1 and D2 last because they look across items); each case's class, error
/// code and sentence are in the switches below, and nowhere else.
///
/// A closed set: a new rule is a new case, and the compiler then asks for its code and sentence. A finding can
/// only name a rule of the catalogue, and its class (error or warning) comes from here, not from the caller.
public enum RuleID: String, CaseIterable, Sendable, Comparable, CustomStringConvertible {
    /// J1 (the JWS, error): envelope, base64url, JSON, size, nesting.
    case j1 = "J1"
    /// J2 (the JWS, error): alg is ES256; no crit.
    case j2 = "J2"
    /// J3 (the JWS, error): kid names a loaded key or an Apple development kid.
    case j3 = "J3"
    /// J4 (the JWS, error): development kid only with --allow-development.
    case j4 = "J4"
    /// J5 (the JWS, error): signature verifies.
    case j5 = "J5"
    /// P1 (a postback payload, error): required fields, JSON types.
    case p1 = "P1"
    /// P2 (a postback payload, error): enumerations and ranges.
    case p2 = "P2"
    /// P3 (a postback payload, error): re-engagement implies did-win.
    case p3 = "P3"
    /// P4 (a postback payload, error): nonwinning implies index 0.
    case p4 = "P4"
    /// P5 (a postback payload, warning): apple-development-identifier/1 implies network development.adattributionkit.
    case p5 = "P5"
    /// U1 (a postback body, error): types and ranges.
    case u1 = "U1"
    /// U2 (a postback body, error): not both fine and coarse.
    case u2 = "U2"
    /// U3 (a postback body, error): re-engagement implies ad-interaction-type click.
    case u3 = "U3"
    /// U4 (a postback body, warning): ad-interaction-type present.
    case u4 = "U4"
    /// U5 (a postback body, warning): nonwinning implies no conversion value.
    case u5 = "U5"
    /// T1 (a postback (tier rules), warning): index 1-2: 2-digit source-identifier.
    case t1 = "T1"
    /// T2 (a postback (tier rules), warning): index 1-2: no fine conversion-value.
    case t2 = "T2"
    /// T3 (a postback (tier rules), warning): index 1-2: no publisher-item-identifier, no country-code.
    case t3 = "T3"
    /// T4 (a postback (tier rules), warning): tier 3 fields: no coarse value.
    case t4 = "T4"
    /// T5 (a postback (tier rules), warning): 3-4-digit source-identifier at index 0: no coarse.
    case t5 = "T5"
    /// T6 (a postback (tier rules), warning): no marketplace-identifier (tier 0): 2 digits, no value, no publisher-
    /// item-identifier.
    case t6 = "T6"
    /// I1 (an impression, error): fields, types and ranges.
    case i1 = "I1"
    /// I2 (an impression, warning): ad-network-identifier equals the kid.
    case i2 = "I2"
    /// I3 (an impression, warning): timestamp not in the future nor too old.
    case i3 = "I3"
    /// S1 (an SKAdNetwork postback, error): version absent (1.0) or exactly one of "1.0", "2.0", "2.1", "2.2", "3.0",
    /// "4.0".
    case s1 = "S1"
    /// S2 (an SKAdNetwork postback, error): the version's signed members present (but optional ones), JSON types,
    /// integers 0 ... 2^64-1.
    case s2 = "S2"
    /// S3 (an SKAdNetwork postback, error): attribution-signature (base64 DER) verifies over the U+2063-joined signed
    /// values.
    case s3 = "S3"
    /// S4 (an SKAdNetwork postback, error): signed values: no U+2063 separator inside a string value, ids non-empty,
    /// fidelity-type 0-1, source-identifier 2-4 digits, index 0-2, not both source-app-id and source-domain,
    /// nonwinning has no source-app-id.
    case s4 = "S4"
    /// S5 (an SKAdNetwork postback, error): conversion-value 0-63, coarse low/medium/high, not both, country-code two
    /// capitals.
    case s5 = "S5"
    /// S6 (an SKAdNetwork postback, warning): a 2.2 postback verified only with the 2.0/2.1 order (without fidelity-
    /// type).
    case s6 = "S6"
    /// D1 (valid postbacks across items, error): postback-identifier (SKAdNetwork: transaction-id and index) not
    /// already seen valid.
    case d1 = "D1"
    /// D2 (valid postbacks across items, warning): a duplicate holds the same signed payload and unsigned members as
    /// its first sighting.
    case d2 = "D2"

    /// The error code when the rule rejects; nil for a warning rule (which `--strict` reports as `rule-warning`).
    public var code: AttributionError.Code? {
        switch self {
        case .j1: .malformedInput
        case .j2: .unsupportedAlgorithm
        case .j3: .unknownKey
        case .j4: .untrustedKey
        case .j5, .s3: .badSignature
        case .p1, .p2, .p3, .p4, .i1, .s2, .s4: .invalidField
        case .p5, .u4, .u5, .t1, .t2, .t3, .t4, .t5, .t6, .i2, .i3, .s6, .d2: nil
        case .u1, .u2, .u3, .s5: .invalidUnsignedField
        case .s1: .unsupportedVersion
        case .d1: .duplicate
        }
    }

    /// Whether the rule only warns: it never changes a verdict unless strict mode promotes it.
    public var isWarning: Bool { code == nil }

    /// What the rule applies to, as the catalogue says.
    public var appliesTo: String {
        switch self {
        case .j1, .j2, .j3, .j4, .j5: "JWS"
        case .p1, .p2, .p3, .p4, .p5: "postback payload"
        case .u1, .u2, .u3, .u4, .u5: "postback body"
        case .t1, .t2, .t3, .t4, .t5, .t6: "postback"
        case .i1, .i2, .i3: "impression"
        case .s1, .s2, .s3, .s4, .s5, .s6: "SKAdNetwork postback"
        case .d1, .d2: "postback, SKAdNetwork postback"
        }
    }

    /// The rule in a few words.
    public var summary: String {
        switch self {
        case .j1: "envelope, base64url, JSON, size, nesting"
        case .j2: "alg is ES256; no crit"
        case .j3: "kid names a loaded key or an Apple development kid"
        case .j4: "development kid only with --allow-development"
        case .j5: "signature verifies"
        case .p1: "required fields, JSON types"
        case .p2: "enumerations and ranges"
        case .p3: "re-engagement implies did-win"
        case .p4: "nonwinning implies index 0"
        case .p5: "apple-development-identifier/1 implies network development.adattributionkit"
        case .u1: "types and ranges"
        case .u2: "not both fine and coarse"
        case .u3: "re-engagement implies ad-interaction-type click"
        case .u4: "ad-interaction-type present"
        case .u5: "nonwinning implies no conversion value"
        case .t1: "index 1-2: 2-digit source-identifier"
        case .t2: "index 1-2: no fine conversion-value"
        case .t3: "index 1-2: no publisher-item-identifier, no country-code"
        case .t4: "tier 3 fields: no coarse value"
        case .t5: "3-4-digit source-identifier at index 0: no coarse"
        case .t6: "no marketplace-identifier (tier 0): 2 digits, no value, no publisher-item-identifier"
        case .i1: "fields, types and ranges"
        case .i2: "ad-network-identifier equals the kid"
        case .i3: "timestamp not in the future nor too old"
        case .s1: "version absent (1.0) or exactly one of \"1.0\", \"2.0\", \"2.1\", \"2.2\", \"3.0\", \"4.0\""
        case .s2: "the version's signed members present (but optional ones), JSON types, integers 0 ... 2^64-1"
        case .s3: "attribution-signature (base64 DER) verifies over the U+2063-joined signed values"
        case .s4:
            "signed values: no U+2063 separator inside a string value, ids non-empty, fidelity-type 0-1, "
                + "source-identifier 2-4 digits, index 0-2, not both source-app-id and source-domain, "
                + "nonwinning has no source-app-id"
        case .s5: "conversion-value 0-63, coarse low/medium/high, not both, country-code two capitals"
        case .s6: "a 2.2 postback verified only with the 2.0/2.1 order (without fidelity-type)"
        case .d1: "postback-identifier (SKAdNetwork: transaction-id and index) not already seen valid"
        case .d2: "a duplicate holds the same signed payload and unsigned members as its first sighting"
        }
    }

    /// The rule's name, as the catalogue and records write it (`J1`): its raw value.
    public var description: String { rawValue }

    /// Catalogue order: the order of the checks, which orders a result's findings.
    /// - Parameters:
    ///   - left: a rule.
    ///   - right: another rule.
    /// - Returns: true when `left` comes before `right` in the catalogue.
    public static func < (left: RuleID, right: RuleID) -> Bool {
        positions[left]! < positions[right]!
    }

    private static let positions: [RuleID: Int] = Dictionary(
        uniqueKeysWithValues: allCases.enumerated().map { ($0.element, $0.offset) })
}
