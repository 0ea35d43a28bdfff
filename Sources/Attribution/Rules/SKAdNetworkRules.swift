/// The SKAdNetwork value rules applied once the signature holds (spec §9): S4 on the signed members and S5 on the
/// unsigned ones, both reading the tables (``SKAdNetworkField/member``, ``SKAdNetworkVersion/unsignedLayout``).
/// S1 (version) is ``SKAdNetworkVersion/read(_:)``, S2 (members and types) is
/// ``SKAdNetworkPostback/decode(_:version:signedFields:findings:)``; S3 and S6 are the signature check.
enum SKAdNetworkRules {
    /// Rule S4: values of the signed members.
    static func checkSignedValues(_ postback: SKAdNetworkPostback) -> [Finding] {
        var reader = FieldReader(postback.signedMembers, owner: "the \(postback.version.rawValue) postback",
                                 typeRule: .s2, rangeRule: .s4)
        let signed = SKAdNetworkField.allCases.compactMap { field in
            postback.signedMembers[field.rawValue].map { (field.member, $0) }
        }
        for case (let member, .string(let value)) in signed where containsSeparator(value) {
            // The signed string would no longer say where one value ends: one genuine signature could be read as
            // other values (a 2.0 postback re-split as a 1.0 body verifies under the same P-192 key).
            reader.require(false, member.name, "contains U+2063, the separator of the signed string")
        }
        for (member, value) in signed {
            reader.checkValue(member, value)
        }
        let sourceApp = SKAdNetworkField.sourceAppID.rawValue
        if postback.sourceAppID != nil && postback.sourceDomain != nil {
            reader.require(false, "a postback", "names the app (\(sourceApp)) or the web page "
                               + "(\(SKAdNetworkField.sourceDomain.rawValue)) that showed the ad, not both")
        }
        if postback.didWin == false && postback.sourceAppID != nil {
            reader.require(false, "a nonwinning postback",
                           "(\(SKAdNetworkField.didWin.rawValue) false) carries no \(sourceApp)")
        }
        return reader.findings
    }

    /// Whether `value` holds U+2063 INVISIBLE SEPARATOR, compared by its UTF-8 bytes (E2 81 A3).
    static func containsSeparator(_ value: String) -> Bool {
        let separator: [UInt8] = [0xE2, 0x81, 0xA3]
        let bytes = Array(value.utf8)
        guard bytes.count >= 3 else { return false }
        return (0...(bytes.count - 3)).contains { bytes[$0..<($0 + 3)].elementsEqual(separator) }
    }

    /// Rule S5: types and values of the unsigned members Apple defines (the AdAttributionKit body's, by the same
    /// table), and not both conversion values (U2's sentence).
    static func checkUnsignedMembers(_ members: JSONObject) -> [Finding] {
        let layout = SKAdNetworkVersion.unsignedLayout
        var reader = FieldReader(members, owner: layout.owner, typeRule: .s5, rangeRule: .s5)
        _ = reader.read(layout)
        let exclusive = PostbackBodyMember.exclusiveValues
        if members.contains(exclusive.fine.name) && members.contains(exclusive.coarse.name) {
            reader.require(false, layout.owner, PostbackBodyMember.exclusiveValuesSentence)
        }
        return reader.findings
    }
}
