/// The lowest crowd-anonymity tier (0-3) consistent with a postback's fields (spec section 7, "Tier inference"),
/// read in the spec's order: no `marketplace-identifier` is tier 0; at index 0 `publisher-item-identifier` or
/// `country-code` is tier 3; a fine value or a 3- or 4-digit source id is at least tier 2; otherwise tier 1.
enum CrowdAnonymityTier {
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
