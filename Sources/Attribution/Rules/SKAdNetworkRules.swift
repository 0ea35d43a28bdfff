/// The SKAdNetwork value rules applied once the signature holds (spec §9): S4 on the signed members and S5 on the
/// unsigned ones. S1 (version) is ``SKAdNetworkVersion/read(_:)``, S2 (members and types) is
/// ``SKAdNetworkPostback/decode(_:version:signedFields:findings:)``; S3 and S6 are the signature check.
enum SKAdNetworkRules {
    /// Rule S4: values of the signed members.
    static func checkSignedValues(_ postback: SKAdNetworkPostback) -> [Finding] {
        var findings: [Finding] = []
        func reject(_ message: String) {
            findings.append(Finding(.s4, message))
        }
        let strings: [(SKAdNetworkField, String?)] = [
            (.version, postback.version == .v1_0 ? nil : postback.version.rawValue),
            (.adNetworkID, postback.adNetworkID), (.sourceIdentifier, postback.sourceIdentifier),
            (.transactionID, postback.transactionID), (.sourceDomain, postback.sourceDomain),
        ]
        for case (let field, let value?) in strings where containsSeparator(value) {
            // The signed string would no longer say where one value ends: one genuine signature could be read as
            // other values (a 2.0 postback re-split as a 1.0 body verifies under the same P-192 key).
            reject("\(field.rawValue) contains U+2063, the separator of the signed string")
        }
        if postback.adNetworkID.isEmpty {
            reject("ad-network-id must not be empty")
        }
        if postback.transactionID.isEmpty {
            reject("transaction-id must not be empty")
        }
        if let fidelity = postback.fidelityType, fidelity > 1 {
            reject("fidelity-type is \(fidelity), not 0 (view-through) or 1 (StoreKit-rendered)")
        }
        if let source = postback.sourceIdentifier, !SourceIdentifier.isPostbackForm(source) {
            reject("source-identifier is \(JSONValue.quoted(source)), not 2, 3 or 4 ASCII digits")
        }
        if let index = postback.postbackSequenceIndex, index > 2 {
            reject("postback-sequence-index is \(index), not 0, 1 or 2")
        }
        if postback.sourceAppID != nil && postback.sourceDomain != nil {
            reject("a postback names the app (source-app-id) or the web page (source-domain) that showed the ad, "
                   + "not both")
        }
        if postback.didWin == false && postback.sourceAppID != nil {
            reject("a nonwinning postback (did-win false) carries no source-app-id")
        }
        return findings
    }

    /// Whether `value` holds U+2063 INVISIBLE SEPARATOR, compared by its UTF-8 bytes (E2 81 A3).
    static func containsSeparator(_ value: String) -> Bool {
        let separator: [UInt8] = [0xE2, 0x81, 0xA3]
        let bytes = Array(value.utf8)
        guard bytes.count >= 3 else { return false }
        return (0...(bytes.count - 3)).contains { bytes[$0..<($0 + 3)].elementsEqual(separator) }
    }

    /// Rule S5: types and values of the unsigned members Apple defines, and not both conversion values.
    static func checkUnsignedMembers(_ members: JSONObject) -> [Finding] {
        var reader = FieldReader(
            members, owner: "the body", typeRule: .s5, rangeRule: .s5)
        _ = reader.integer("conversion-value", required: false, in: PostbackBody.conversionValueRange)
        if let coarse = reader.string("coarse-conversion-value", required: false) {
            reader.require(CoarseConversionValue(exactly: coarse) != nil, "coarse-conversion-value",
                           "is \(JSONValue.quoted(coarse)), not \"low\", \"medium\" or \"high\"")
        }
        if let country = reader.string("country-code", required: false) {
            reader.require(PostbackBody.isCountryCode(country.utf8), "country-code",
                           "is \(JSONValue.quoted(country)), not two capital letters")
        }
        if members.contains("conversion-value") && members.contains("coarse-conversion-value") {
            reader.require(false, "the body", "carries conversion-value or coarse-conversion-value, not both")
        }
        return reader.findings
    }
}
