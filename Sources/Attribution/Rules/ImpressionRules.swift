/// Warnings on an impression: I2 (network ID matches the signing kid) and I3 (timestamp plausible).
/// I1 (fields, types, ranges) is applied while decoding ``ImpressionPayload``.
///
/// These read the raw signed members rather than a decoded ``ImpressionPayload``, so they still apply when I1
/// rejects another field, and simply skip a member that is missing or mistyped (I1 reports that).
enum ImpressionRules {
    static func check(_ payload: JSONObject, keyID: String, policy: VerificationPolicy) -> [Finding] {
        var findings: [Finding] = []
        let networkName = ImpressionMember.adNetworkIdentifier.name
        if case .string(let network)? = payload[networkName], !network.isExactlyEqual(to: keyID) {
            findings.append(Finding(.i2, "\(networkName) \(JSONValue.quoted(network)) is not the signing kid "
                    + JSONValue.quoted(keyID)))
        }
        guard let timestamp = payload[ImpressionMember.timestamp.name]?.numberValue?.uint64Value else {
            return findings
        }
        let now = policy.clock()
        if timestamp > now {
            // The message names no clock reading, so one input gives the same record on every run.
            findings.append(Finding(.i3,
                "\(ImpressionMember.timestamp.name) \(timestamp) ms since 1970 is in the future (later than the "
                    + "verifying machine's clock)"))
        } else if let maximumAge = policy.maximumImpressionAge, now - timestamp > maximumAge {
            findings.append(Finding(.i3,
                "\(ImpressionMember.timestamp.name) \(timestamp) is older than the limit of \(maximumAge) ms"))
        }
        return findings
    }
}
