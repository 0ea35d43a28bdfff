/// Warnings on an impression: I2 (network ID matches the signing kid) and I3 (timestamp plausible).
/// I1 (fields, types, ranges) is applied while decoding ``ImpressionPayload``.
enum ImpressionRules {
    static func check(_ impression: ImpressionPayload, keyID: String, policy: VerificationPolicy) -> [Finding] {
        var findings: [Finding] = []
        if impression.adNetworkIdentifier != keyID {
            findings.append(.warning(
                "I2", "ad-network-identifier \(JSONValue.quoted(impression.adNetworkIdentifier)) is not the "
                    + "signing kid \(JSONValue.quoted(keyID))"))
        }
        let now = policy.clock()
        if impression.timestamp > now {
            findings.append(.warning(
                "I3", "timestamp \(impression.timestamp) is in the future (now is \(now) ms since 1970)"))
        } else if let maximumAge = policy.maximumImpressionAge, now - impression.timestamp > maximumAge {
            findings.append(.warning(
                "I3", "timestamp \(impression.timestamp) is older than the limit of \(maximumAge) ms"))
        }
        return findings
    }
}
