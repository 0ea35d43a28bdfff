@_spi(CommandLine) import Attribution
/// Items being gathered by one read call, their bytes packed in one array that the items then slice.
///
/// One allocation per batch instead of one per item: a million short lines cost a few thousand allocations.
struct ItemBatch {
    private var storage: [UInt8] = []
    private var entries: [(line: Int, bytes: Range<Int>?, byteCount: Int, refusal: String?)] = []

    /// An empty batch with room for `byteCount` bytes of items (the previous batch's size is a good guess: one
    /// allocation instead of a doubling series, and no copying on the way).
    init(reservingCapacity byteCount: Int = 0) {
        storage.reserveCapacity(byteCount)
    }

    /// The bytes of the items gathered so far.
    var byteCount: Int { storage.count }

    /// How many items are gathered.
    var count: Int { entries.count }

    /// Adds an item whose bytes are copied out of the read buffer.
    mutating func append(line: Int, bytes: ByteCursor) {
        let lowerBound = storage.count
        bytes.append(to: &storage)
        entries.append((line, lowerBound..<storage.count, bytes.count, nil))
    }

    /// Adds an item over the cap, known only by its size.
    mutating func appendOversized(line: Int, byteCount: Int) {
        entries.append((line, nil, byteCount, nil))
    }

    /// Adds an item the reader refused as a whole, with the message that says why (``InputShape``).
    mutating func appendRefused(line: Int, reason: String) {
        entries.append((line, nil, 0, reason))
    }

    /// Appends the gathered items, in order, to `items`.
    func emit(into items: inout [InputItem], source: String) {
        let shared = storage
        items.reserveCapacity(items.count + entries.count)
        for entry in entries {
            let content: InputItem.Content = if let reason = entry.refusal {
                .refused(reason: reason)
            } else if let range = entry.bytes {
                .bytes(shared[range])
            } else {
                .oversized(byteCount: entry.byteCount)
            }
            items.append(InputItem(source: source, line: entry.line, content: content))
        }
    }
}
