/// The lowest crowd-anonymity tier (0-3) consistent with a postback's fields (spec section 7, "Tier inference"),
/// read in the spec's order: no `marketplace-identifier` is tier 0; at index 0 `publisher-item-identifier` or
/// `country-code` is tier 3; a fine value or a 3- or 4-digit source id is at least tier 2; otherwise tier 1.
package enum CrowdAnonymityTier {
    /// What each tier (0-3, at its index) lets a postback say, in plain words for a reader of a report (spec
    /// section 6): the crowd that saw the ad decides how much a postback may say, and ``lowest(_:)`` reads it back.
    package static let summaries = [
        "the smallest crowd: a 2-digit source identifier, no conversion value, no marketplace",
        "a 2-digit source identifier and, if the app set one, a coarse conversion value",
        "a 2- to 4-digit source identifier and, in the first postback, a fine conversion value",
        "the largest crowd: as tier 2, plus the app that showed the ad and the App Store account's country",
    ]

    static func lowest(_ facts: PostbackFacts) -> Int {
        if !facts.hasMarketplace {
            return 0
        }
        if facts.postbackSequenceIndex == 0 && (facts.hasPublisherItem || facts.hasCountryCode) {
            return 3
        }
        if facts.hasFineValue || facts.sourceIdentifierDigits >= 3 {
            return 2
        }
        return 1
    }
}
