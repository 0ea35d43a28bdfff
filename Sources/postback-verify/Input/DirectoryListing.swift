#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@_spi(CommandLine) import Attribution

/// The input files below a directory: every `*.json`, `*.jsonl`, `*.jws` and `*.txt`, recursively, sorted in byte
/// order of the full path (docs/cli.md section 2).
///
/// Symbolic links to files are listed; symbolic links to directories are not followed, and a directory reached
/// twice (a bind mount loop) is listed once, so a cycle cannot hang the walk. Paths are bytes because names on
/// Linux need not be UTF-8. Hidden files count like any other.
struct DirectoryListing {
    /// The files found, sorted by their bytes.
    private(set) var files: [[UInt8]] = []
    /// The directories below that could not be listed.
    private(set) var failures: [InputFailure] = []

    static let extensions: [[UInt8]] = [".json", ".jsonl", ".jws", ".txt"].map { Array($0.utf8) }

    /// Lists a directory; `path` is the path as given, and prefixes every file found.
    init(directory path: [UInt8]) {
        var pending = [path]
        var visited = Set<[UInt64]>()
        while let directory = pending.popLast() {
            list(directory, pending: &pending, visited: &visited)
        }
        files.sort { $0.lexicographicallyPrecedes($1) }
    }

    /// Whether a file name ends with one of the input extensions (case-sensitive, like a shell glob).
    static func isInputFile(name: [UInt8]) -> Bool {
        extensions.contains { name.count >= $0.count && name.suffix($0.count).elementsEqual($0) }
    }

    private mutating func list(_ directory: [UInt8], pending: inout [[UInt8]], visited: inout Set<[UInt64]>) {
        let display = String(decoding: directory, as: UTF8.self)
        guard let stream = FileDescriptor.withCString(directory, { opendir($0) }) else {
            failures.append(.system(path: display, code: errno))
            return
        }
        defer { closedir(stream) }
        var status = stat()
        if fstat(dirfd(stream), &status) == 0 {
            guard visited.insert([UInt64(status.st_dev), UInt64(status.st_ino)]).inserted else {
                return
            }
        }
        let prefix = directory.last == UInt8(ascii: "/") ? directory : directory + [UInt8(ascii: "/")]
        while true {
            guard let (name, type) = FileDescriptor.nextEntry(of: stream) else {
                if errno != 0 {
                    failures.append(.system(path: display, code: errno))
                }
                return
            }
            if name == [UInt8(ascii: ".")] || name == [UInt8(ascii: "."), UInt8(ascii: ".")] {
                continue
            }
            let path = prefix + name
            switch DirectoryListing.kind(type: type, path: path) {
            case .directory:
                pending.append(path)
            case .file where DirectoryListing.isInputFile(name: name):
                files.append(path)
            case .file, .other:
                continue
            }
        }
    }

    private enum EntryKind {
        case directory
        case file
        case other
    }

    /// A real directory is walked; a regular file, or a link to one (or a broken link, so opening it reports why),
    /// is a candidate; a link to a directory is not followed, and pipes, sockets and devices are left alone.
    private static func kind(type: Int, path: [UInt8]) -> EntryKind {
        var type = type
        if type == Int(DT_UNKNOWN) {
            var status = stat()
            guard FileDescriptor.withCString(path, { lstat($0, &status) }) == 0 else {
                return .other
            }
            type = Int(status.st_mode & S_IFMT) >> 12
        }
        switch type {
        case Int(DT_DIR):
            return .directory
        case Int(DT_REG):
            return .file
        case Int(DT_LNK):
            var status = stat()
            guard FileDescriptor.withCString(path, { stat($0, &status) }) == 0 else {
                return .file
            }
            return status.st_mode & S_IFMT == S_IFREG ? .file : .other
        default:
            return .other
        }
    }
}
