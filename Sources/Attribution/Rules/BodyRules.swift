/// Rules across a postback body's unsigned members and its signed payload: U2, U3 (reject), U4, U5 (warn).
/// U1 (types and ranges) is applied while decoding ``PostbackBody``.
enum BodyRules {
    static func check(_ body: PostbackBody, payload: PostbackPayload) -> [Finding] {
        var findings: [Finding] = []
        let members = body.members
        if members.contains("conversion-value") && members.contains("coarse-conversion-value") {
            findings.append(Finding(.u2, "a body carries conversion-value or coarse-conversion-value, not both"))
        }
        if payload.conversionType == .reEngagement, members["ad-interaction-type"] != .string("click") {
            let found = members["ad-interaction-type"].map { $0.stringValue.map(JSONValue.quoted) ?? $0.typeName }
            findings.append(Finding(.u3, "a re-engagement postback needs ad-interaction-type \"click\", found \(found ?? "none")"))
        }
        if !members.contains("ad-interaction-type") {
            findings.append(Finding(.u4, "the body has no ad-interaction-type (every Apple example has one)"))
        }
        if !payload.didWin && (members.contains("conversion-value") || members.contains("coarse-conversion-value")) {
            findings.append(Finding(.u5, "a nonwinning postback should carry no conversion value"))
        }
        return findings
    }
}
