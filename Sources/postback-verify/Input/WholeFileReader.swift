import Attribution
/// Reads a `.json` file as one item at line 1: the whole file is one JSON document, pretty-printed or not.
///
/// Reads at most one byte past the cap; a larger regular file is sized with `fstat` and never read further.
/// A compressed or binary file, or JSON Lines (several documents, one per line), is refused as one item naming
/// the remedy (``InputShape``).
/// Nothing is skipped or trimmed: an empty file is an item too, which the decoders then reject.
enum WholeFileReader {
    /// The file's single item.
    static func item(from descriptor: FileDescriptor, maximumItemBytes: Int) throws(InputFailure) -> InputItem {
        let limit = maximumItemBytes + 1
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: max(limit, LineItemReader.readBufferBytes))
        defer { buffer.deallocate() }
        var filled = 0
        while filled < limit {
            let count = try descriptor.read(into: buffer + filled, count: limit - filled)
            if count == 0 {
                break
            }
            filled += count
        }
        let content: InputItem.Content
        let first = UnsafeBufferPointer(start: buffer, count: filled)
        if let refusal = InputShape.refusal(first: first, isStandardInput: false, isRegularFile: true)
            ?? InputShape.jsonLinesRefusal(first, isWhole: filled <= maximumItemBytes) {
            content = .refused(reason: refusal)
        } else if filled <= maximumItemBytes {
            content = .bytes(ArraySlice(UnsafeBufferPointer(start: buffer, count: filled)))
        } else if let size = descriptor.regularFileSize() {
            content = .oversized(byteCount: max(size, filled))
        } else {
            // A pipe or device has no size: count the rest through the same buffer.
            var total = filled
            while true {
                let count = try descriptor.read(into: buffer, count: max(limit, LineItemReader.readBufferBytes))
                if count == 0 {
                    break
                }
                total += count
            }
            content = .oversized(byteCount: total)
        }
        return InputItem(source: descriptor.path, line: 1, content: content)
    }
}
