/// The lowest crowd-anonymity ("postback data") tier consistent with a postback's fields (spec §6-7).
///
/// Each field that only a higher tier sends raises the floor; the result is the highest floor. Analysts want it;
/// it proves nothing, since the device decides the tier.
public enum CrowdAnonymityTier {
    /// - Parameter body: the unsigned members, or nil for a bare postback JWS.
    public static func lowest(_ payload: PostbackPayload, body: PostbackBody?) -> Int {
        let index = payload.postbackSequenceIndex
        let members = body?.members
        var tier = 0
        if payload.marketplaceIdentifier != nil || index >= 1 {
            tier = 1
        }
        if index == 0 && members?.contains("coarse-conversion-value") == true {
            tier = max(tier, 1)
        }
        if members?.contains("conversion-value") == true || SourceIdentifier.digitCount(payload.sourceIdentifier) >= 3 {
            tier = max(tier, 2)
        }
        if index == 0 && (payload.publisherItemIdentifier != nil || members?.contains("country-code") == true) {
            tier = 3
        }
        return tier
    }
}
