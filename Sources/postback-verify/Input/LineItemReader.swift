@_spi(CommandLine) import Attribution

/// Splits one line-oriented input into items, in memory bounded by the item cap whatever the input's size.
///
/// Lines end at `\n` or `\r\n` (one `\r` before the `\n` is removed; a `\r` anywhere else, including just before
/// the end of input, is content). Blank lines and `#` comments yield no item but still count for line numbers.
/// A line over `maximumItemBytes` is read past in chunks and yields `.oversized(byteCount:)`. With
/// `joiningPrintedDocuments` (standard input), a JSON document printed over several lines is one item
/// (``PrintedDocument`` gives the rule); without it (files), it is one refused item that says to name the file
/// `*.json` or pipe it. A document printed with its first member on the `{` line is not joined: each of its lines
/// is a refused item naming the remedy (``UnjoinedDocument``). A compressed or binary input is one refused item
/// (``InputShape``).
///
/// Owned by one thread: not `Sendable`. The items it returns are.
final class LineItemReader {
    /// The item cap of docs/cli.md section 2: 16 KiB.
    static let defaultMaximumItemBytes = 16 * 1024
    /// The size of each `read(2)`: 64 KiB, or more when the cap needs it.
    static let readBufferBytes = 64 * 1024

    /// The source name given to every item: the path, or `-` for standard input.
    let source: String
    /// The largest item, in bytes after the terminator is removed, that is returned as bytes.
    let maximumItemBytes: Int
    /// The read buffer's fixed size in bytes; it never grows.
    var bufferCapacity: Int { capacity }

    private let descriptor: FileDescriptor
    /// The read buffer, allocated once at its full size (`capacity`); read through a ``ByteCursor``.
    private var buffer: [UInt8]
    private let capacity: Int
    // Unscanned bytes are buffer[start..<end]; they never hold a complete line between calls unless a batch
    // filled up.
    private var start = 0
    private var end = 0
    private var lineNumber = 0
    private var oversizedLine: OversizedLine?
    private var deferredError: InputFailure?
    private var isFinished = false
    /// A file read line by line: a printed document in it is one refused item, naming the remedy (InputShape).
    private let refusesPrintedDocuments: Bool
    private var document: PrintedDocument?
    private var documentLastLine = 0
    /// A document printed with a member on its `{` line: its lines stay items, each naming the remedy.
    private var unjoinedDocument: UnjoinedDocument?
    /// Whether the first read's bytes were checked for a compressed or binary input.
    private var hasCheckedShape = false
    /// Set when the input is compressed or binary: it is read past, never held, and is one refused item.
    private var refusal: String?
    /// The bytes of the last batch read, to size the next one's storage.
    private var lastBatchByteCount = 0

    /// Reads from a descriptor that the caller keeps open and closes after use (e.g. `0` for standard input).
    convenience init(
        fileDescriptor: Int32, source: String, maximumItemBytes: Int = LineItemReader.defaultMaximumItemBytes,
        joiningPrintedDocuments: Bool = false
    ) {
        self.init(
            descriptor: FileDescriptor(borrowing: fileDescriptor, path: source),
            maximumItemBytes: maximumItemBytes, joiningPrintedDocuments: joiningPrintedDocuments
        )
    }

    /// Opens a file for reading; it is closed when the reader is released.
    convenience init(
        path: String, maximumItemBytes: Int = LineItemReader.defaultMaximumItemBytes
    ) throws(InputFailure) {
        self.init(
            descriptor: try FileDescriptor(opening: Array(path.utf8), path: path),
            maximumItemBytes: maximumItemBytes
        )
    }

    /// With `joiningPrintedDocuments` (standard input) a printed document is one item; without (files), it is
    /// one refused item naming the remedy.
    init(descriptor: FileDescriptor, maximumItemBytes: Int, joiningPrintedDocuments: Bool = false) {
        precondition(maximumItemBytes >= 0, "maximumItemBytes must not be negative")
        self.refusesPrintedDocuments = !joiningPrintedDocuments
        self.descriptor = descriptor
        self.source = descriptor.path
        self.maximumItemBytes = maximumItemBytes
        // Room for a line at the cap plus a `\r` and one more byte, so a kept partial line always leaves space.
        self.capacity = max(LineItemReader.readBufferBytes, maximumItemBytes + 2)
        self.buffer = [UInt8](repeating: 0, count: capacity)
    }

    /// The next items, at most `maximumCount`, or `nil` at the end of input.
    ///
    /// Waits for input only while it has no item: once it holds one, it returns as soon as reading more would
    /// wait, so a paused pipe's lines come out at once (live streaming). From a regular file it fills the batch.
    /// A read error is thrown once, after the items read before it have been returned; then the input ends.
    func nextBatch(maximumCount: Int) throws(InputFailure) -> [InputItem]? {
        precondition(maximumCount > 0, "maximumCount must be positive")
        var items: [InputItem] = []
        _ = try readItems(into: &items, upTo: maximumCount)
        return items.isEmpty ? nil : items
    }

    /// The next item, or `nil` at the end of input.
    func next() throws(InputFailure) -> InputItem? {
        try nextBatch(maximumCount: 1)?.first
    }

    /// Appends items to `items` until it holds `maximumCount`, the items appended reach `maximumBytes` (passing
    /// it by at most what one read buffer holds), the input ends, or, with items in hand, reading would wait.
    /// Returns whether the input is exhausted.
    ///
    /// Waits only when `items` is empty, so a caller gathering from several inputs keeps the live-stream promise.
    func readItems(
        into items: inout [InputItem], upTo maximumCount: Int, maximumBytes: Int = .max
    ) throws(InputFailure) -> Bool {
        var batch = ItemBatch(reservingCapacity: min(lastBatchByteCount, 1 << 20))
        defer { lastBatchByteCount = batch.byteCount }
        while !isFinished {
            scanBuffer(into: &batch, limit: maximumCount - items.count)
            if items.count + batch.count >= maximumCount || batch.byteCount >= maximumBytes {
                break
            }
            let holdsItems = !items.isEmpty || batch.count > 0
            if let error = deferredError {
                if holdsItems {
                    break
                }
                deferredError = nil
                isFinished = true
                throw error
            }
            if holdsItems && !descriptor.canReadWithoutWaiting() {
                break
            }
            compactBuffer()
            let count: Int
            do {
                count = try descriptor.read(into: &buffer, from: end)
            } catch {
                if holdsItems {
                    deferredError = error
                    break
                }
                isFinished = true
                throw error
            }
            if count == 0 {
                if let refusal {
                    batch.appendRefused(line: 1, reason: refusal)
                } else {
                    finishAtEndOfInput(into: &batch)
                }
                isFinished = true
            } else {
                end += count
                checkShape()
            }
        }
        batch.emit(into: &items, source: source)
        return isFinished
    }

    /// After the first read: a compressed or binary input is one refused item, read past without being held.
    private func checkShape() {
        if !hasCheckedShape {
            hasCheckedShape = true
            refusal = ByteCursor.over(buffer[start..<end]) { first in
                InputShape.refusal(first: first, isStandardInput: source == "-",
                                   isRegularFile: descriptor.isRegularFile)
            }
        }
        if refusal != nil {
            start = 0
            end = 0
        }
    }

    /// Takes every complete line out of the buffer, up to `limit` items; a partial line stays.
    private func scanBuffer(into batch: inout ItemBatch, limit: Int) {
        // The buffer is only read while the cursor is out (the array is not written until the next read).
        ByteCursor.over(buffer) { buffer in scanBuffer(buffer.span(upTo: end), into: &batch, limit: limit) }
    }

    private func scanBuffer(_ buffer: ByteCursor, into batch: inout ItemBatch, limit: Int) {
        while batch.count < limit && start < end {
            let newline = buffer.firstIndex(of: LineKind.newline, from: start)
            if var line = oversizedLine {
                line.consume(buffer.span(start..<(newline ?? end)))
                guard let newline else {
                    oversizedLine = line
                    start = 0
                    end = 0
                    return
                }
                oversizedLine = nil
                lineNumber += 1
                start = newline + 1
                let (kind, byteCount) = line.finish(terminated: true)
                appendOversized(line, kind: kind, byteCount: byteCount, to: &batch)
            } else if let newline {
                var contentEnd = newline
                if contentEnd > start && buffer[contentEnd - 1] == LineKind.carriageReturn {
                    contentEnd -= 1
                }
                lineNumber += 1
                append(buffer.span(start..<contentEnd), to: &batch)
                start = newline + 1
            } else {
                // Past the cap even if a `\r\n` follows: stop holding it and count the rest as it comes.
                if end - start > maximumItemBytes + 1 {
                    var line = OversizedLine()
                    line.consume(buffer.span(start..<end))
                    oversizedLine = line
                    start = 0
                    end = 0
                }
                return
            }
        }
    }

    /// Ends the last line, which has no terminator (so a final `\r` stays content).
    private func finishAtEndOfInput(into batch: inout ItemBatch) {
        if let line = oversizedLine {
            oversizedLine = nil
            lineNumber += 1
            let (kind, byteCount) = line.finish(terminated: false)
            appendOversized(line, kind: kind, byteCount: byteCount, to: &batch)
        } else if end > start {
            lineNumber += 1
            ByteCursor.over(buffer[start..<end]) { append($0, to: &batch) }
        }
        endDocument(into: &batch)
        endUnjoinedDocument(into: &batch)
        start = 0
        end = 0
    }

    private func append(_ line: ByteCursor, to batch: inout ItemBatch) {
        if var open = document {
            if PrintedDocument.continues(first: line.first) || PrintedDocument.closes(first: line.first) {
                open.append(line)
                document = open
                documentLastLine = lineNumber
                if PrintedDocument.closes(first: line.first) { endDocument(into: &batch) }
                return
            }
            endDocument(into: &batch)
        }
        if var unjoined = unjoinedDocument {
            if UnjoinedDocument.continues(line) {
                let reason = InputShape.unjoinedDocumentRefusal(
                    firstLine: unjoined.line, isStandardInput: !refusesPrintedDocuments)
                unjoined.append(line, number: lineNumber, reason: reason, into: &batch)
                unjoinedDocument = PrintedDocument.closes(first: line.first) ? nil : unjoined
                return
            }
            endUnjoinedDocument(into: &batch)
        }
        if PrintedDocument.opens(line) {
            document = PrintedDocument(line: lineNumber, opening: line, maximumItemBytes: maximumItemBytes)
            documentLastLine = lineNumber
            return
        }
        guard LineKind(of: line) == .item else {
            return
        }
        if line.count > maximumItemBytes {
            batch.appendOversized(line: lineNumber, byteCount: line.count)
        } else if UnjoinedDocument.opens(line) {
            unjoinedDocument = UnjoinedDocument(line: lineNumber, opening: line)
        } else {
            batch.append(line: lineNumber, bytes: line)
        }
    }

    /// A line over the cap: part of an open printed document when it would be one at any length, else its own item.
    private func appendOversized(_ line: OversizedLine, kind: LineKind, byteCount: Int, to batch: inout ItemBatch) {
        if var open = document,
           PrintedDocument.continues(first: line.firstByte) || PrintedDocument.closes(first: line.firstByte) {
            open.appendOversized(byteCount: byteCount)
            document = open
            documentLastLine = lineNumber
            if PrintedDocument.closes(first: line.firstByte) { endDocument(into: &batch) }
            return
        }
        endDocument(into: &batch)
        endUnjoinedDocument(into: &batch)
        if kind == .item {
            batch.appendOversized(line: lineNumber, byteCount: byteCount)
        }
    }

    /// Ends the open unjoined document, if any: an opening line no other line joined is emitted as it stands.
    private func endUnjoinedDocument(into batch: inout ItemBatch) {
        unjoinedDocument?.end(into: &batch)
        unjoinedDocument = nil
    }

    /// Emits the open printed document, if any, as one item.
    private func endDocument(into batch: inout ItemBatch) {
        if let document, refusesPrintedDocuments, documentLastLine > document.line {
            batch.appendRefused(line: document.line, reason: InputShape.printedDocumentRefusal(
                firstLine: document.line, lastLine: documentLastLine))
        } else {
            document?.emit(into: &batch)
        }
        document = nil
    }

    /// Moves the partial line to the front so the next read has the rest of the buffer.
    private func compactBuffer() {
        guard start > 0 else {
            return
        }
        if end > start {
            let partialLine = Array(buffer[start..<end])
            buffer.replaceSubrange(0..<partialLine.count, with: partialLine)
        }
        end -= start
        start = 0
    }
}
