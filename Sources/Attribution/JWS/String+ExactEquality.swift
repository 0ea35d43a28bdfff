extension String {
    /// True when both strings have exactly the same UTF-8 bytes.
    ///
    /// Swift's `==` compares by canonical equivalence (`"é"` equals `"e\u{301}"`), which JSON member names must not
    /// do: the parser's duplicate check and member lookups compare bytes. This is a `memcmp` over the contiguous
    /// UTF-8 of native strings, far cheaper than `utf8.elementsEqual`.
    func isExactlyEqual(to other: String) -> Bool {
        // utf8.count is O(1) for native strings: most names differ in length and stop here.
        guard utf8.count == other.utf8.count else { return false }
        return ByteCursor.overUTF8(self) { left in ByteCursor.overUTF8(other, { left.elementsEqual($0) }) }
    }
}
