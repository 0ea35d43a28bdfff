/// How the user met the ad, from the unsigned `ad-interaction-type` body member.
public enum AdInteractionType: String, Sendable, Hashable, CaseIterable {
    case view
    case click
}
