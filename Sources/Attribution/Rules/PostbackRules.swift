/// Cross-field rules of a postback's signed payload: P3, P4 (reject) and P5 (warn).
enum PostbackRules {
    /// The development network ID Apple signs into postbacks made in a device's developer settings.
    static let developmentNetworkIdentifier = "development.adattributionkit"

    static func check(_ payload: PostbackPayload, keyID: String) -> [Finding] {
        var findings: [Finding] = []
        if payload.conversionType == .reEngagement && !payload.didWin {
            findings.append(Finding(.p3, "a re-engagement postback must have did-win true"))
        }
        if !payload.didWin && payload.postbackSequenceIndex != 0 {
            findings.append(Finding(.p4, "a nonwinning postback is sent once, at index 0; this one has index \(payload.postbackSequenceIndex)"))
        }
        if keyID.isExactlyEqual(to: ApplePublishedKey.development1.keyID)
            && !payload.adNetworkIdentifier.isExactlyEqual(to: developmentNetworkIdentifier) {
            findings.append(Finding(.p5, "kid \(keyID) signs developer-settings postbacks, whose ad-network-identifier is "
                    + "\(developmentNetworkIdentifier), not \(JSONValue.quoted(payload.adNetworkIdentifier))"))
        }
        return findings
    }
}
