#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@_spi(CommandLine) import Attribution

/// Reads every input of the command line in order and hands out items in batches, across file boundaries.
///
/// Files are opened one at a time, only when the previous one is exhausted, and a directory is listed when it is
/// reached, so memory and descriptors stay bounded for directories of many files. An input that cannot be opened,
/// listed or read is recorded in `failures` and skipped; the others are still read, in order
/// (docs/cli.md section 4: the run ends with status 2, but every readable item gets its record).
///
/// Owned by one thread: not `Sendable`. The items it returns are.
final class InputReader {
    /// The largest item, in bytes, returned as bytes; longer ones are `.oversized(byteCount:)`.
    let maximumItemBytes: Int
    /// The inputs that could not be opened, listed or read so far, in the order met.
    ///
    /// Grows during reading: check it after each batch to report promptly, and at the end for the exit status.
    private(set) var failures: [InputFailure] = []
    /// The directories named on the command line, or found in one, that held no item file at all: nothing was read
    /// from them, which a CI job checking fixtures must hear about.
    private(set) var emptyDirectories: [String] = []

    private var inputs: ArraySlice<InputPath>
    private var listedFiles: ArraySlice<[UInt8]> = []
    private var heldBack: Source?
    private var current: LineItemReader?

    /// Reads the given inputs in order.
    init(inputs: [InputPath], maximumItemBytes: Int = LineItemReader.defaultMaximumItemBytes) {
        self.inputs = inputs[...]
        self.maximumItemBytes = maximumItemBytes
    }

    /// Reads the inputs named by the CLI's PATH arguments, in order: no path, or `-`, is standard input.
    convenience init(paths: [String], maximumItemBytes: Int = LineItemReader.defaultMaximumItemBytes) {
        self.init(inputs: InputPath.parse(arguments: paths), maximumItemBytes: maximumItemBytes)
    }

    /// Bytes of items a batch stops at (it may pass this by less than one read buffer and one item): items of the
    /// 16 KiB cap make batches of about 16, short postbacks (~700 bytes) still fill 256, so the bytes in flight,
    /// and the memory they cost, stay bounded by bytes whatever the items' size.
    static let maximumBatchBytes = 256 * 1024

    /// The next items, at most `maximumCount` and about `maximumBytes` of them, in input order, or `nil` when
    /// every input is exhausted.
    ///
    /// Waits for input only while it has no item: with items in hand it returns rather than wait on a pipe, a
    /// terminal or a FIFO, so live streams are answered line by line. Regular files fill the batch.
    func nextBatch(maximumCount: Int, maximumBytes: Int = InputReader.maximumBatchBytes) -> [InputItem]? {
        precondition(maximumCount > 0, "maximumCount must be positive")
        var items: [InputItem] = []
        var itemBytes = 0
        var counted = 0
        while items.count < maximumCount {
            itemBytes += items[counted...].reduce(0) { $0 + $1.content.storedByteCount }
            counted = items.count
            guard itemBytes < maximumBytes else { break }
            if let reader = current {
                do {
                    guard try reader.readItems(
                        into: &items, upTo: maximumCount, maximumBytes: maximumBytes - itemBytes) else {
                        // The batch is full, or more would mean waiting while items are in hand.
                        break
                    }
                } catch {
                    failures.append(error)
                }
                current = nil
                continue
            }
            guard let source = nextSource() else {
                break
            }
            if !items.isEmpty && source.mayWait {
                heldBack = source
                break
            }
            open(source, into: &items)
        }
        return items.isEmpty ? nil : items
    }

    /// The next item, or `nil` when every input is exhausted.
    func next() -> InputItem? {
        nextBatch(maximumCount: 1)?.first
    }

    /// Starts reading a source: a line reader becomes `current`; a whole `.json` file is read into `items` now.
    private func open(_ source: Source, into items: inout [InputItem]) {
        switch source {
        case .standardInput:
            current = LineItemReader(
                descriptor: FileDescriptor(borrowing: STDIN_FILENO, path: "-"), maximumItemBytes: maximumItemBytes,
                joiningPrintedDocuments: true
            )
        case .file(let path, let name):
            do {
                let descriptor = try FileDescriptor(opening: path, path: name)
                if source.isWholeFile {
                    let item = try WholeFileReader.item(from: descriptor, maximumItemBytes: maximumItemBytes)
                    items.append(item)
                } else {
                    current = LineItemReader(descriptor: descriptor, maximumItemBytes: maximumItemBytes)
                }
            } catch {
                failures.append(error)
            }
        }
    }

    /// The next source in order, listing directories as they are reached.
    private func nextSource() -> Source? {
        if let source = heldBack {
            heldBack = nil
            return source
        }
        while true {
            if let file = listedFiles.popFirst() {
                return .file(path: file, name: String(decoding: file, as: UTF8.self))
            }
            guard let path = inputs.popFirst() else {
                return nil
            }
            guard case .path(let name) = path else {
                return .standardInput
            }
            let bytes = Array(name.utf8)
            var status = stat()
            guard FileDescriptor.withCString(bytes, { stat($0, &status) }) == 0 else {
                failures.append(.system(path: name, code: errno))
                continue
            }
            guard status.st_mode & S_IFMT == S_IFDIR else {
                return .file(path: bytes, name: name)
            }
            let listing = DirectoryListing(directory: bytes)
            failures.append(contentsOf: listing.failures)
            if listing.files.isEmpty && listing.failures.isEmpty {
                emptyDirectories.append(name)
            }
            listedFiles = listing.files[...]
        }
    }
}
