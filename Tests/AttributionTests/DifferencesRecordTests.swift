import Foundation
import Testing

@_spi(CommandLine) @_spi(Servers) @_spi(Stores) @testable import Attribution

/// `JSONLinesRecord.differences(of:content:)`, what the receiver keeps of a changed duplicate over its quota:
/// byte for byte what the receiver wrote by hand before it came from the records' writer.
@Suite("A changed duplicate's differences, from the records' writer")
struct DifferencesRecordTests {
    /// The receiver's own writer before it moved to the library (DurableSink.differences), kept as the reference.
    static func reference(of postback: VerifiedPostback, content: ContentFingerprint?) -> [UInt8] {
        let named = postback.duplicateDifferences?.unsignedMembers ?? []
        let members = postback.unsignedMembers?.members ?? []
        let beyondLimits = "(other unsigned members)"
        let everything = named.contains(beyondLimits) && !members.contains { $0.name == beyondLimits }
        var text = #"{"content-fingerprint":""#
        text += (content?.bytes ?? []).map { String($0 >> 4, radix: 16) + String($0 & 15, radix: 16) }.joined()
        text += #"","differing-members":{"#
        text += members.filter { everything || named.contains($0.name) }
            .map { JSONValue.string($0.name).jsonText + ":" + $0.value.jsonText }.joined(separator: ",")
        text += #"},"absent-members":["#
        text += named.filter { name in name != beyondLimits && !members.contains { $0.name == name } }
            .map { JSONValue.string($0).jsonText }.joined(separator: ",")
        text += "]}"
        return Array(text.utf8)
    }

    @Test("""
        Changed, absent and added members, escapes, and members beyond the fingerprint's limits: the same bytes as \
        the receiver's writer, on either path
        """, arguments: [true, false])
    func sameBytes(fastPath: Bool) throws {
        let verifier = try FixtureManifest.trusting()
        let pipeline = PostbackPipeline(keyRing: verifier.keyRing, policy: verifier.policy, fastPath: fastPath)
        let signer = try TestPostbackSigner()
        let original = #","conversion-value":21,"note":"caf\u00e9 \"q\"","gone":[1,{"a":null}]"#
        let base = try signer.body(postbackIdentifier: "6D0E6B5C-8F0B-4C57-9E55-2F4E3A1B9C0A", signedExtra: "",
                                   unsignedExtra: original)
        let many = (0..<40).map { #","m\#($0)":"v\#($0)""# }.joined()
        let variants = [
            base,
            base.replacingOccurrences(of: original, with: #","conversion-value":22,"note":"caf\u00e9 \"q\"""#),
            base.replacingOccurrences(of: original, with: #","conversion-value":21,"added":{"k":"\u2028"}"#),
            base.replacingOccurrences(of: original, with: original + many),
            base.replacingOccurrences(of: original, with: many),
        ]
        var postbacks = pipeline.verify(variants.enumerated().map { (Array($1.utf8), source: "request-\($0)") })
        #expect(postbacks.allSatisfy { $0.verdict == .valid })
        let sighted = PostbackPipeline.Sightings(postbacks)
        let answers = MemoryDeduplicationStore().claim(sighted.sightings, at: Date())
        pipeline.mark(&postbacks, sighted, answers: answers)
        var compared = 0
        for (index, sighting) in zip(sighted.indices, sighted.sightings) where postbacks[index].isDuplicate {
            let written = JSONLinesRecord.differences(of: postbacks[index], content: sighting.content)
            #expect(written == Self.reference(of: postbacks[index], content: sighting.content),
                    "\(String(decoding: written, as: UTF8.self))")
            #expect((try? JSONSerialization.jsonObject(with: Data(written))) != nil)
            compared += 1
        }
        #expect(compared == 4)
        #expect(JSONLinesRecord.differences(of: postbacks[0], content: nil)
                == Self.reference(of: postbacks[0], content: nil))
        #expect(postbacks[4].duplicateDifferences?.unsignedMembers.contains(
            ContentFingerprint.Differences.beyondLimits) == true)
    }
}
