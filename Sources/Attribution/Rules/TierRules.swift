/// The crowd-anonymity rules T1-T6 (spec §6): warnings only, because Apple's own genuinely signed examples break
/// them, so a tier mismatch is never proof of forgery.
enum TierRules {
    /// - Parameter body: the unsigned members, or nil for a bare postback JWS (which has none).
    static func check(_ payload: PostbackPayload, body: PostbackBody?) -> [Finding] {
        var findings: [Finding] = []
        let index = payload.postbackSequenceIndex
        let digits = SourceIdentifier.digitCount(payload.sourceIdentifier)
        let fine = body?.members.contains("conversion-value") ?? false
        let coarse = body?.members.contains("coarse-conversion-value") ?? false
        let country = body?.members.contains("country-code") ?? false
        let publisherItem = payload.publisherItemIdentifier != nil

        if index >= 1 {
            if digits != 2 {
                findings.append(Finding(.t1, "postback \(index) should carry a 2-digit source-identifier, not \(digits)"))
            }
            if fine {
                findings.append(Finding(.t2, "postback \(index) should carry no fine conversion-value"))
            }
            if publisherItem || country {
                findings.append(Finding(.t3, "postback \(index) should carry no publisher-item-identifier and no country-code"))
            }
        }
        if (publisherItem || country) && coarse {
            findings.append(Finding(.t4, "publisher-item-identifier or country-code means tier 3, which sends no coarse value"))
        }
        if index == 0 && digits >= 3 && coarse {
            findings.append(Finding(.t5, "a \(digits)-digit source-identifier at index 0 means tier 2 or 3, which sends no coarse value"))
        }
        if payload.marketplaceIdentifier == nil && (digits != 2 || fine || coarse || publisherItem) {
            findings.append(Finding(.t6, "no marketplace-identifier means tier 0: a 2-digit source-identifier, no conversion value "
                    + "and no publisher-item-identifier"))
        }
        return findings
    }
}
