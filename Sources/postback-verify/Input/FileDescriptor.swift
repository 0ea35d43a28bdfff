#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@_spi(CommandLine) import Attribution

#if canImport(Glibc)
/// The C functions, named apart from this type's own `read` (which would shadow them).
private let systemRead = Glibc.read
private let systemWrite = Glibc.write
private let systemPoll = Glibc.poll
/// An open directory stream (`DIR *`).
typealias DirectoryStream = OpaquePointer
#elseif canImport(Darwin)
private let systemRead = Darwin.read
private let systemWrite = Darwin.write
private let systemPoll = Darwin.poll
typealias DirectoryStream = UnsafeMutablePointer<DIR>
#endif

/// An open file descriptor for reading, closed on release when this owns it.
///
/// The only place that calls `open`, `read` and `poll` for input, so `EINTR` and `EAGAIN` are handled once; and the
/// command line's one I/O type that touches memory through pointers: `read(2)` into, and `write(2)` from, an array
/// (``StandardStream``), and a directory entry's name (``DirectoryListing``). Everything else reads bytes through a
/// ``ByteCursor``.
final class FileDescriptor {
    /// The descriptor number.
    let rawValue: Int32
    /// The path shown in errors: as given, derived, or `-`.
    let path: String
    /// Whether `read` can never wait for a writer: a regular file, where reading ahead costs nothing.
    let isRegularFile: Bool
    private let ownsDescriptor: Bool

    /// Wraps a descriptor that someone else closes, e.g. standard input.
    init(borrowing rawValue: Int32, path: String) {
        self.rawValue = rawValue
        self.path = path
        self.ownsDescriptor = false
        self.isRegularFile = FileDescriptor.isRegularFile(rawValue)
    }

    /// Opens a path for reading; the descriptor is closed when this is released.
    ///
    /// The path is bytes because directory entries need not be UTF-8; `path` is only for messages.
    init(opening pathBytes: [UInt8], path: String) throws(InputFailure) {
        var descriptor: Int32
        repeat {
            descriptor = FileDescriptor.withCString(pathBytes) { open($0, O_RDONLY | O_CLOEXEC) }
        } while descriptor < 0 && errno == EINTR
        guard descriptor >= 0 else {
            throw InputFailure.system(path: path, code: errno)
        }
        self.rawValue = descriptor
        self.path = path
        self.ownsDescriptor = true
        self.isRegularFile = FileDescriptor.isRegularFile(descriptor)
    }

    deinit {
        if ownsDescriptor {
            // Nothing useful to do on a failed close of a read-only descriptor; EINTR must not be retried on Linux.
            _ = close(rawValue)
        }
    }

    /// Reads into `buffer` from `offset` up to its end, waiting for data if needed; `0` means end of input.
    func read(into buffer: inout [UInt8], from offset: Int) throws(InputFailure) -> Int {
        precondition(offset >= 0 && offset < buffer.count, "no room to read into")
        return try buffer.withUnsafeMutableBufferPointer { bytes throws(InputFailure) in
            try read(into: bytes.baseAddress! + offset, count: bytes.count - offset)
        }
    }

    /// Reads up to `count` bytes, waiting for data if needed; `0` means end of input.
    private func read(into buffer: UnsafeMutablePointer<UInt8>, count: Int) throws(InputFailure) -> Int {
        while true {
            let result = systemRead(rawValue, buffer, count)
            if result >= 0 {
                return result
            }
            let code = errno
            switch code {
            case EINTR:
                continue
            case EAGAIN, EWOULDBLOCK:
                // A non-blocking descriptor inherited from the parent: wait for it instead of spinning.
                _ = poll(timeout: -1)
            default:
                throw InputFailure.system(path: path, code: code)
            }
        }
    }

    /// Whether a `read` now would return at once (data, end of input or an error) instead of waiting.
    func canReadWithoutWaiting() -> Bool {
        isRegularFile || poll(timeout: 0)
    }

    /// The file's size now, when it is a regular file.
    func regularFileSize() -> Int? {
        var status = stat()
        guard fstat(rawValue, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
            return nil
        }
        return Int(status.st_size)
    }

    private func poll(timeout: Int32) -> Bool {
        var request = pollfd(fd: rawValue, events: Int16(POLLIN), revents: 0)
        var ready: Int32
        repeat {
            ready = systemPoll(&request, 1, timeout)
        } while ready < 0 && errno == EINTR
        // An error from poll itself is left for read to report.
        return ready != 0
    }

    private static func isRegularFile(_ descriptor: Int32) -> Bool {
        var status = stat()
        return fstat(descriptor, &status) == 0 && status.st_mode & S_IFMT == S_IFREG
    }

    /// One `write(2)` of `count` bytes of `bytes` from `offset` on: the count written, or -1 with `errno` set.
    static func write(_ descriptor: Int32, _ bytes: [UInt8], from offset: Int, count: Int) -> Int {
        precondition(offset >= 0 && count >= 0 && offset + count <= bytes.count, "write out of range")
        return bytes.withUnsafeBytes { systemWrite(descriptor, $0.baseAddress! + offset, count) }
    }

    /// The next entry of an open directory: its name's bytes and its `d_type`; nil at the end, or on an error with
    /// `errno` set (0 at the end).
    static func nextEntry(of stream: DirectoryStream) -> (name: [UInt8], type: Int)? {
        errno = 0
        guard let entry = readdir(stream) else {
            return nil
        }
        let name = withUnsafeBytes(of: &entry.pointee.d_name) { raw in
            Array(raw.bindMemory(to: UInt8.self).prefix { $0 != 0 })
        }
        return (name, Int(entry.pointee.d_type))
    }

    /// Calls `body` with the path as a NUL-terminated C string.
    static func withCString<Result>(_ pathBytes: [UInt8], _ body: (UnsafePointer<CChar>) -> Result) -> Result {
        (pathBytes + [0]).withUnsafeBufferPointer { bytes in
            bytes.withMemoryRebound(to: CChar.self) { body($0.baseAddress!) }
        }
    }
}
