#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension ConversionSchema {
    /// The schema in the file at `path`, as `--schema` reads it for every program that decodes (the command line
    /// and the receiver).
    ///
    /// - Parameter path: The schema file's path, as the user gave it.
    /// - Throws: `invalid-option` naming the file and saying, in words, what is wrong and what to do: no such
    ///   file, permission denied, a directory, a read that failed (with the system's reason), a file over
    ///   ``maximumBytes``, or, for a malformed schema, the line and the reason. The path is given as it is; a
    ///   program that prints the message escapes it for the terminal.
    public init(contentsOfFile path: String) throws(AttributionError) {
        let bytes: [UInt8]
        do {
            bytes = try Self.readSchemaFile(path)
        } catch {
            throw AttributionError(.invalidOption, "--schema \(path): \(error.words)")
        }
        do {
            try self.init(refusing: bytes)
        } catch {
            throw AttributionError(.invalidOption, "--schema \(path): \(error.description)")
        }
    }

    /// Why a schema file could not be read: the system's error number, or a directory in the file's place.
    private enum ReadFailure: Error {
        case system(Int32)
        case directory

        /// The failure in words, with the remedy where there is one to name.
        var words: String {
            switch self {
            case .directory:
                return "is a directory; give the schema's JSON file itself (docs/schema.md)"
            case .system(ENOENT):
                return "cannot read the file: no such file (check the path; a relative one starts at the "
                    + "working directory)"
            case .system(let number) where number == EACCES || number == EPERM:
                return "cannot read the file: permission denied (make it readable by the user this runs as)"
            case .system(ENOTDIR):
                return "cannot read the file: a part of the path before the file name is not a directory"
            case .system(EISDIR):
                return ReadFailure.directory.words
            case .system(let number):
                return "cannot read the file: \(String(cString: strerror(number)))"
            }
        }
    }

    /// The file's bytes, at most one past ``maximumBytes`` (enough to refuse a larger file without reading it).
    ///
    /// Opened without waiting, so that a FIFO no program writes to reads as empty (a malformed schema) instead of
    /// blocking the start for ever; then read as usual, so a pipe that does have a writer (`--schema <(...)`) is
    /// read to its end.
    private static func readSchemaFile(_ path: String) throws(ReadFailure) -> [UInt8] {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else {
            throw .system(errno)
        }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            throw .system(errno)
        }
        guard status.st_mode & S_IFMT != S_IFDIR else {
            throw .directory
        }
        let flags = fcntl(descriptor, F_GETFL)
        guard flags >= 0, fcntl(descriptor, F_SETFL, flags & ~O_NONBLOCK) == 0 else {
            throw .system(errno)
        }
        let limit = maximumBytes + 1
        var bytes = [UInt8](repeating: 0, count: limit)
        var count = 0
        while count < limit {
            let got = bytes.withUnsafeMutableBytes { buffer in
                read(descriptor, buffer.baseAddress! + count, limit - count)
            }
            if got > 0 {
                count += got
            } else if got == 0 {
                break
            } else if errno != EINTR {
                throw .system(errno)
            }
        }
        bytes.removeSubrange(count...)
        return bytes
    }
}
