/// The lowest crowd-anonymity ("postback data") tier consistent with a postback's fields (spec §6-7).
///
/// The fields that define a tier are read in the spec's order, the way rules T6, T4 and T5 frame them: no
/// `marketplace-identifier` is tier 0 (whatever else the postback carries; T6 warns about the rest); at index 0 a
/// `publisher-item-identifier` or `country-code` is tier 3; a fine value or a 3- or 4-digit source identifier is
/// tier 2; anything else is tier 1 (a coarse value at index 0, or any second or third postback). Analysts want
/// it; it proves nothing, since the device decides the tier.
public enum CrowdAnonymityTier {
    /// - Parameter body: the unsigned members, or nil for a bare postback JWS.
    public static func lowest(_ payload: PostbackPayload, body: PostbackBody?) -> Int {
        let members = body?.members
        if payload.marketplaceIdentifier == nil {
            return 0
        }
        if payload.postbackSequenceIndex == 0
            && (payload.publisherItemIdentifier != nil || members?.contains("country-code") == true) {
            return 3
        }
        if members?.contains("conversion-value") == true || SourceIdentifier.digitCount(payload.sourceIdentifier) >= 3 {
            return 2
        }
        return 1
    }
}
