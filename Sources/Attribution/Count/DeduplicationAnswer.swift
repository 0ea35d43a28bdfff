/// What a ``DeduplicationStore`` answers for one ``PostbackSighting``.
public enum DeduplicationAnswer: Sendable, Hashable {
    /// No valid postback with this key was seen before (within the retention), or the owner of an earlier claim
    /// died before confirming it: this sighting counts, and the caller now holds the key's claim. Write its
    /// record, then ``DeduplicationStore/confirm(_:)`` (or ``DeduplicationStore/release(_:)`` if writing failed).
    case firstSeen
    /// A repeat (rule D1): the first valid occurrence was here. Its record was written (the claim was
    /// confirmed), or a live owner is writing it now (``DuplicateReference/isPending``).
    case duplicate(of: DuplicateReference)

    /// The first occurrence, for a duplicate.
    public var duplicateOf: DuplicateReference? {
        if case .duplicate(let first) = self { return first }
        return nil
    }
}
