extension JSONLinesRecord {
    /// What a server keeps of a changed-content duplicate instead of its body (the receiver's archive rows whose
    /// `kept` is `differences`), written by the records' writer:
    /// `{"content-fingerprint":"HEX","differing-members":{NAME:VALUE,...},"absent-members":[NAME,...]}`: the
    /// fingerprint of its whole content (what rule D2 compared, in lowercase hexadecimal), the value of each
    /// unsigned member that differs from its first sighting's (every unsigned member when some were beyond the
    /// fingerprint's limits, ``ContentFingerprint/Differences/beyondLimits``), in the body's order, and the names of
    /// those its first sighting had and it has not.
    /// - Parameters:
    ///   - postback: the duplicate, marked (``PostbackPipeline/markDuplicate(_:of:content:)``).
    ///   - content: its sighting's fingerprint (``PostbackSighting/content``); nil writes an empty one.
    /// - Returns: the object: UTF-8, on one line.
    public static func differences(of postback: VerifiedPostback, content: ContentFingerprint?) -> [UInt8] {
        let named = postback.duplicateDifferences?.unsignedMembers ?? []
        let members = postback.unsignedMembers?.members ?? []
        let beyondLimits = ContentFingerprint.Differences.beyondLimits
        let everything = named.contains(beyondLimits) && !members.contains { $0.name == beyondLimits }
        var out: [UInt8] = []
        appendLiteral(#"{"content-fingerprint":""#, to: &out)
        let digits = Array("0123456789abcdef".utf8)
        for byte in content?.bytes ?? [] {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 15)])
        }
        appendLiteral(#"","differing-members":{"#, to: &out)
        var first = true
        for member in members where everything || named.contains(member.name) {
            if !first { out.append(UInt8(ascii: ",")) }
            first = false
            JSONValue.appendQuoted(member.name, to: &out)
            out.append(UInt8(ascii: ":"))
            member.value.appendJSON(to: &out)
        }
        appendLiteral(#"},"absent-members":["#, to: &out)
        first = true
        for name in named where name != beyondLimits && !members.contains(where: { $0.name == name }) {
            if !first { out.append(UInt8(ascii: ",")) }
            first = false
            JSONValue.appendQuoted(name, to: &out)
        }
        appendLiteral("]}", to: &out)
        return out
    }
}
