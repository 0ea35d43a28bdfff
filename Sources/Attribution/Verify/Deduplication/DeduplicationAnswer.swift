/// What a ``DeduplicationStore`` answers for one ``PostbackSighting``.
public enum DeduplicationAnswer: Sendable, Hashable {
    /// No valid postback with this key was seen before (within the retention): this one counts.
    case firstSeen
    /// A repeat: the first valid occurrence was here (rule D1).
    case duplicate(of: DuplicateReference)

    /// The first occurrence, for a duplicate.
    public var duplicateOf: DuplicateReference? {
        if case .duplicate(let first) = self { return first }
        return nil
    }
}
