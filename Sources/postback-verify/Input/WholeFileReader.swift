@_spi(CommandLine) import Attribution
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
        var buffer = [UInt8](repeating: 0, count: limit)
        var filled = 0
        while filled < limit {
            let count = try descriptor.read(into: &buffer, from: filled)
            if count == 0 {
                break
            }
            filled += count
        }
        let content: InputItem.Content
        let refusal = ByteCursor.over(buffer[..<filled]) { first in
            InputShape.refusal(first: first, isStandardInput: false, isRegularFile: true)
                ?? InputShape.jsonLinesRefusal(first, isWhole: filled <= maximumItemBytes)
        }
        if let refusal {
            content = .refused(reason: refusal)
        } else if filled <= maximumItemBytes {
            // A copy of the bytes read: a slice would keep the whole 16 KiB buffer alive while the item is in
            // flight (a directory of small files holds thousands of items at once).
            content = .bytes(ArraySlice(Array(buffer[..<filled])))
        } else if let size = descriptor.regularFileSize() {
            content = .oversized(byteCount: max(size, filled))
        } else {
            // A pipe or device has no size: count the rest through the same buffer.
            var total = filled
            buffer = [UInt8](repeating: 0, count: max(limit, LineItemReader.readBufferBytes))
            while true {
                let count = try descriptor.read(into: &buffer, from: 0)
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
