/// How the user converted, from a postback's `conversion-type` [Apple: "Identifying the parameters in a postback"].
public enum ConversionType: String, Sendable, Hashable, CaseIterable {
    case download
    case redownload
    /// Spelled with a hyphen in every signed postback seen; `reengagement` is refused (spec §10).
    case reEngagement = "re-engagement"
}
