@_spi(CommandLine) import Attribution
@_spi(CommandLine) import AttributionStores
import Foundation

/// The file an `export --to` run is writing: rows go through gzip into a temporary name in the directory
/// (`.postbacks-00000001.jsonl.gz.partial`), its SHA-256 and size counted as the bytes are written.
/// ``ExportDirectory/finish(_:)`` makes it whole and gives it its name.
final class ExportFile {
    let sequence: Int
    let temporaryPath: String
    /// When it was started, on the monotonic clock: it rolls `--roll-seconds` later.
    let started: ContinuousClock.Instant
    private let file: DurableFile
    private let gzip: GzipStream
    private let digest = SHA256Stream()
    private var pending: [UInt8] = []
    private(set) var rows = 0
    /// Compressed bytes written so far (deflate holds back what it has not yet made into a block).
    private(set) var bytes = 0
    private(set) var firstCursor: ArchiveCursor?
    private(set) var lastCursor: ArchiveCursor?

    /// The temporary name of the file numbered `sequence`: hidden, and ending in neither `.gz` nor `.jsonl`, so no
    /// loader's pattern takes it.
    static func temporaryName(_ sequence: Int) -> String {
        "." + ExportManifestEntry.fileName(sequence) + ".partial"
    }

    init(sequence: Int, directory: String) throws(AttributionError) {
        self.sequence = sequence
        temporaryPath = directory + "/" + Self.temporaryName(sequence)
        file = try DurableFile(path: temporaryPath, appending: false)
        do {
            gzip = try GzipStream()
        } catch {
            throw AttributionError(.failed, error.reason)
        }
        started = .now
    }

    /// Adds one row, its line and a line end.
    func append(line: [UInt8], cursor: ArchiveCursor) throws(AttributionError) {
        do {
            try gzip.compress(line + [UInt8(ascii: "\n")], into: &pending)
        } catch {
            throw AttributionError(.failed, error.reason)
        }
        try writePending()
        rows += 1
        if firstCursor == nil { firstCursor = cursor }
        lastCursor = cursor
    }

    /// Ends the gzip member and writes it out, then `fsync`; the file is whole from here on, and closed.
    func close() throws(AttributionError) {
        do {
            try gzip.finish(into: &pending)
        } catch {
            throw AttributionError(.failed, error.reason)
        }
        try writePending()
        try file.sync()
        try file.close()
    }

    /// The finished file's SHA-256, once ``close()`` has returned.
    func finishDigest() -> String {
        digest.finish()
    }

    private func writePending() throws(AttributionError) {
        guard !pending.isEmpty else { return }
        digest.update(pending)
        try file.write(pending)
        bytes += pending.count
        pending.removeAll(keepingCapacity: true)
    }
}
