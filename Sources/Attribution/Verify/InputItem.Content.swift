extension InputItem {
    /// What an item holds: its bytes, or, past the size cap, only how many there were.
    ///
    /// Bytes stay bytes: NUL and invalid UTF-8 reach the decoders untouched, which reject them with a reason.
    package enum Content: Sendable, Hashable {
        /// The item's bytes with the line terminator (`\n` or `\r\n`) removed.
        ///
        /// The items of a batch slice one shared array, so indices start at `startIndex`, not at 0.
        case bytes(ArraySlice<UInt8>)
        /// An item over the cap, read past without being held in memory (CLI contract, "Guarantees").
        case oversized(byteCount: Int)
    }
}
