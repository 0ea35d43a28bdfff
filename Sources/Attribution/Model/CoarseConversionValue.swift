/// The coarse conversion value a postback's body may carry (`coarse-conversion-value`).
public enum CoarseConversionValue: String, Sendable, Hashable, CaseIterable {
    case low
    case medium
    case high
}
