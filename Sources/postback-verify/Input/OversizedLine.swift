@_spi(CommandLine) import Attribution
/// A line over the item cap, counted and classified as its chunks go by, never held.
///
/// Only the first non-blank byte matters for the kind, so classification stops there; a `\r` seen last may still
/// turn out to be the first half of a CRLF terminator, which is why it stays pending until the next byte.
struct OversizedLine {
    private(set) var byteCount = 0
    /// The line's first byte (a printed document's indented member starts with a blank, its end with `}`).
    private(set) var firstByte: UInt8?
    private var lastByteWasCarriageReturn = false
    private var decidedKind: LineKind?
    private var pendingCarriageReturn = false

    /// Counts a chunk of the line (terminator excluded) and classifies the line if not done yet.
    mutating func consume(_ chunk: ByteCursor) {
        guard let last = chunk.last else {
            return
        }
        if byteCount == 0 { firstByte = chunk.first }
        byteCount += chunk.count
        lastByteWasCarriageReturn = last == LineKind.carriageReturn
        guard decidedKind == nil else {
            return
        }
        for byte in chunk {
            if pendingCarriageReturn {
                // The `\r` was not followed by `\n`: it is content, and the first non-blank byte.
                decidedKind = .item
                return
            }
            switch byte {
            case LineKind.space, LineKind.tab:
                continue
            case LineKind.carriageReturn:
                pendingCarriageReturn = true
            case LineKind.hash:
                decidedKind = .comment
                return
            default:
                decidedKind = .item
                return
            }
        }
    }

    /// The line's kind and content length, once its end is known: a `\n` (`terminated`) or the end of input.
    func finish(terminated: Bool) -> (kind: LineKind, byteCount: Int) {
        let stripsCarriageReturn = terminated && lastByteWasCarriageReturn
        let count = byteCount - (stripsCarriageReturn ? 1 : 0)
        if let decidedKind {
            return (decidedKind, count)
        }
        return (pendingCarriageReturn && !stripsCarriageReturn ? .item : .blank, count)
    }
}
