#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@_spi(CommandLine) import Attribution

#if canImport(Glibc)
/// The C functions, named apart from this type's own methods (which would shadow them).
private let systemWrite = Glibc.write
private let systemRead = Glibc.pread
private let systemClose = Glibc.close
private let systemRename = Glibc.rename
#elseif canImport(Darwin)
private let systemWrite = Darwin.write
private let systemRead = Darwin.pread
private let systemClose = Darwin.close
private let systemRename = Darwin.rename
#endif

/// A file `postback-verify export --to` writes, and the few directory calls that make a finished file durable:
/// every byte written (a short write or `EINTR` is carried on), `fsync` before a rename, `fsync` of the directory
/// after it. The only export type that hands memory to the system through pointers. Closed on release.
final class DurableFile {
    /// The path, for messages.
    let path: String
    private var descriptor: Int32

    /// Opens `path` for writing: `appending` to what it holds (created when missing), or emptied first.
    init(path: String, appending: Bool) throws(AttributionError) {
        self.path = path
        let flags = O_WRONLY | O_CREAT | O_CLOEXEC | (appending ? O_APPEND : O_TRUNC)
        var descriptor: Int32
        repeat {
            descriptor = open(path, flags, 0o644)
        } while descriptor < 0 && errno == EINTR
        guard descriptor >= 0 else { throw Self.failure(.cannotOpen, "cannot open", path) }
        self.descriptor = descriptor
    }

    deinit {
        if descriptor >= 0 { _ = systemClose(descriptor) }
    }

    /// Writes all of `bytes`; throws `failed` naming the system's reason (a full disk, an I/O error).
    func write(_ bytes: [UInt8]) throws(AttributionError) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes {
                systemWrite(descriptor, $0.baseAddress! + offset, $0.count - offset)
            }
            if written < 0 {
                if errno == EINTR { continue }
                throw Self.failure(.failed, "cannot write", path)
            }
            offset += written
        }
    }

    /// `fsync`: what was written is on the disk when this returns.
    func sync() throws(AttributionError) {
        guard fsync(descriptor) == 0 else { throw Self.failure(.failed, "cannot sync (fsync)", path) }
    }

    /// Cuts the file to `length` bytes.
    func truncate(to length: Int) throws(AttributionError) {
        guard ftruncate(descriptor, off_t(length)) == 0 else {
            throw Self.failure(.failed, "cannot truncate", path)
        }
    }

    /// Takes an exclusive `flock` on the file without waiting; false when another process holds it.
    func lockExclusively() throws(AttributionError) -> Bool {
        if flock(descriptor, LOCK_EX | LOCK_NB) == 0 { return true }
        guard errno == EWOULDBLOCK else { throw Self.failure(.cannotOpen, "cannot lock", path) }
        return false
    }

    /// Closes the descriptor; a failed `close` (NFS reports a failed write there) throws.
    func close() throws(AttributionError) {
        let result = systemClose(descriptor)
        descriptor = -1
        guard result == 0 else { throw Self.failure(.failed, "cannot close", path) }
    }

    /// The whole file at `path`, or nil when there is none.
    static func contents(of path: String) throws(AttributionError) -> [UInt8]? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        if descriptor < 0 {
            if errno == ENOENT { return nil }
            throw failure(.cannotOpen, "cannot open", path)
        }
        defer { _ = systemClose(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { systemRead(descriptor, $0.baseAddress!, $0.count,
                                                                  off_t(bytes.count)) }
            if count < 0 {
                if errno == EINTR { continue }
                throw failure(.failed, "cannot read", path)
            }
            if count == 0 { return bytes }
            bytes.append(contentsOf: chunk[..<count])
        }
    }

    /// Renames `source` to `target` (replacing it) and syncs `directory`, so the new name survives a power loss.
    static func rename(_ source: String, to target: String, in directory: String) throws(AttributionError) {
        guard systemRename(source, target) == 0 else {
            throw failure(.failed, "cannot rename \(source) to", target)
        }
        try syncDirectory(directory)
    }

    /// Deletes `path`; one that is already gone is not an error.
    static func remove(_ path: String) throws(AttributionError) {
        guard unlink(path) == 0 || errno == ENOENT else { throw failure(.failed, "cannot delete", path) }
    }

    /// `fsync` of a directory: its entries (a rename, a new or deleted file) are on the disk when this returns.
    static func syncDirectory(_ path: String) throws(AttributionError) {
        let descriptor = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { throw failure(.failed, "cannot open the directory", path) }
        defer { _ = systemClose(descriptor) }
        guard fsync(descriptor) == 0 else { throw failure(.failed, "cannot sync (fsync) the directory", path) }
    }

    /// The names in directory `path` (not `.` or `..`).
    static func names(in path: String) throws(AttributionError) -> [String] {
        guard let stream = opendir(path) else { throw failure(.cannotOpen, "cannot list", path) }
        defer { closedir(stream) }
        var names: [String] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            let isDots = name.utf8.elementsEqual(".".utf8) || name.utf8.elementsEqual("..".utf8)
            if !isDots { names.append(name) }
        }
        return names
    }

    /// `verb path: the system's reason`, with `code`.
    private static func failure(_ code: AttributionError.Code, _ verb: String, _ path: String) -> AttributionError {
        let reason = String(cString: strerror(errno))
        return AttributionError(code, "\(verb) \(path): \(reason)")
    }
}
