@_spi(CommandLine) import Attribution
@_spi(CommandLine) import AttributionStores
import Foundation

/// The directory of `postback-verify export --to DIR`: gzip JSON Lines files and `manifest.jsonl`, a line per
/// finished file. One export at a time writes it (an exclusive `flock` on the manifest, held while it runs).
///
/// What survives a crash (even `kill -9`, or a power loss): a file is written under a temporary name, synced,
/// renamed to its own name, the directory synced, and only then named in the manifest (a line written whole and
/// synced). So the manifest names only whole files, and its last line's `last-cursor` is where the next export
/// starts. Opening the directory clears what a stopped export left: a temporary file, a file renamed but not yet
/// named in the manifest (it is written again, with the same name and rows), and a manifest line cut short.
final class ExportDirectory {
    static let manifestName = "manifest.jsonl"

    let path: String
    let manifestPath: String
    /// The manifest's lines, as read when opened and appended since.
    private(set) var entries: [ExportManifestEntry] = []
    /// Open for appending, and locked.
    private let manifest: DurableFile
    /// What opening cleared, for the message on standard error.
    private(set) var cleared: [String] = []

    /// Where the next export starts: after the last cursor the manifest names (nil: from the first row).
    var resumeCursor: ArchiveCursor? { entries.last?.lastCursor }

    /// Opens DIR (creating it, and its parents, when missing), locks it, reads the manifest and clears what a
    /// stopped export left.
    /// - Throws: `busy` while another export writes DIR; `damaged` for a manifest line this release cannot read;
    ///   `cannot-open` or `failed` when the system refuses.
    init(path: String) throws(AttributionError) {
        self.path = path
        manifestPath = path + "/" + Self.manifestName
        var isDirectory: ObjCBool = false
        if !FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) {
            do {
                try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            } catch {
                throw AttributionError(.cannotOpen, "cannot create the directory \(path): "
                                       + "\((error as NSError).localizedDescription)")
            }
        } else if !isDirectory.boolValue {
            throw AttributionError(.cannotOpen, "\(path) is not a directory; --to names a directory for the files "
                                   + "and their manifest")
        }
        manifest = try DurableFile(path: manifestPath, appending: true)
        guard try manifest.lockExclusively() else {
            throw AttributionError(.busy, "another export is writing into \(path) (it holds the lock on "
                                   + "\(Self.manifestName)); stop it first, or export into another directory")
        }
        try readManifest()
        try clearLeftovers()
    }

    /// Reads the manifest; a last line without its line end (a write cut short) is cut off.
    private func readManifest() throws(AttributionError) {
        let bytes = try DurableFile.contents(of: manifestPath) ?? []
        var complete = bytes.count
        if let last = bytes.last, last != UInt8(ascii: "\n") {
            complete = (bytes.lastIndex(of: UInt8(ascii: "\n")) ?? -1) + 1
            try manifest.truncate(to: complete)
            try manifest.sync()
            cleared.append("a manifest line cut short (\(bytes.count - complete) bytes)")
        }
        for (number, line) in bytes[..<complete].split(separator: UInt8(ascii: "\n"),
                                                       omittingEmptySubsequences: false).dropLast().enumerated() {
            guard let entry = ExportManifestEntry(jsonLine: line) else {
                throw AttributionError(.damaged, "\(manifestPath) line \(number + 1) is not a manifest line this "
                                       + "release writes; the manifest is damaged: restore it, or export into a "
                                       + "new directory")
            }
            if let previous = entries.last {
                guard entry.sequence > previous.sequence, previous.lastCursor < entry.firstCursor,
                      (previous.lastCursor.transaction == nil) == (entry.firstCursor.transaction == nil) else {
                    throw AttributionError(.damaged, "\(manifestPath) line \(number + 1) does not follow the line "
                                           + "before it (file numbers and cursors increase down the manifest); "
                                           + "the manifest is damaged: restore it, or export into a new directory")
                }
            }
            entries.append(entry)
        }
    }

    /// Deletes temporary files, and files numbered after the manifest's last (renamed, never named in it).
    private func clearLeftovers() throws(AttributionError) {
        let last = entries.last?.sequence ?? 0
        var removed = false
        for name in try DurableFile.names(in: path) {
            let bytes = Array(name.utf8)
            let isTemporary = bytes.first == UInt8(ascii: ".")
                && bytes.reversed().starts(with: ".partial".utf8.reversed())
                && ExportManifestEntry.sequence(ofFileName: String(decoding: bytes.dropFirst().dropLast(8),
                                                                   as: UTF8.self)) != nil
            let isUnnamed = ExportManifestEntry.sequence(ofFileName: name).map { $0 > last } ?? false
            guard isTemporary || isUnnamed else { continue }
            try DurableFile.remove(path + "/" + name)
            cleared.append(isTemporary ? "the partial file \(name)" : "\(name), never named in the manifest")
            removed = true
        }
        if removed { try DurableFile.syncDirectory(path) }
    }

    /// Starts the next file.
    func startFile() throws(AttributionError) -> ExportFile {
        try ExportFile(sequence: (entries.last?.sequence ?? 0) + 1, directory: path)
    }

    /// Makes `file` whole and durable under its own name, then names it in the manifest.
    @discardableResult
    func finish(_ file: ExportFile) throws(AttributionError) -> ExportManifestEntry {
        guard let first = file.firstCursor, let last = file.lastCursor else {
            preconditionFailure("a file is finished only once it has rows")
        }
        try file.close()
        let name = ExportManifestEntry.fileName(file.sequence)
        try DurableFile.rename(file.temporaryPath, to: path + "/" + name, in: path)
        let entry = ExportManifestEntry(file: name, sequence: file.sequence, rows: file.rows, bytes: file.bytes,
                                        sha256: file.finishDigest(), firstCursor: first, lastCursor: last,
                                        finished: Date())
        // One write of the whole line (O_APPEND), then fsync: a crash leaves at worst a line without its end,
        // which the next open cuts off (and which a loader, reading only lines that end, never takes).
        try manifest.write(entry.jsonLine + [UInt8(ascii: "\n")])
        try manifest.sync()
        entries.append(entry)
        return entry
    }

    /// Deletes a file that will not be finished (a failed write): the directory keeps only whole files.
    func abandon(_ file: ExportFile) {
        // A temporary file that cannot be deleted now (the disk that failed the write) is deleted when the
        // directory is next opened; no loader takes it meanwhile.
        try? DurableFile.remove(file.temporaryPath)
    }
}
