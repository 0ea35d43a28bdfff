/// The one-word outcome of verifying an item.
public enum Verdict: String, Sendable, Hashable {
    /// Signature verified and no rule rejected the item.
    case valid
    /// At least one error; the first error says why.
    case invalid
}
