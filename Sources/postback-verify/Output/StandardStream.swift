#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

#if canImport(Glibc)
/// The C function, named apart from this type's own `write`.
private let systemWrite = Glibc.write
#elseif canImport(Darwin)
private let systemWrite = Darwin.write
#endif

/// A buffered writer on a file descriptor that reports write failures instead of ignoring them.
final class StandardStream {
    private let descriptor: Int32
    private var buffer: [UInt8] = []
    private let capacity = 64 * 1024
    /// The first write error, once one happened; later writes are dropped.
    private(set) var failure: String?
    /// Bytes handed to the system so far (flushed).
    private(set) var bytesWritten = 0

    init(descriptor: Int32) {
        self.descriptor = descriptor
        buffer.reserveCapacity(capacity)
    }

    /// True when the descriptor is a terminal (colour, progress).
    var isTerminal: Bool { isatty(descriptor) == 1 }

    /// True when both descriptors are the same terminal device: then a progress line on one would land between the
    /// records written to the other.
    func isSameTerminal(as other: StandardStream) -> Bool {
        guard isTerminal, other.isTerminal else { return false }
        var mine = stat(), theirs = stat()
        guard fstat(descriptor, &mine) == 0, fstat(other.descriptor, &theirs) == 0 else { return true }
        return mine.st_rdev == theirs.st_rdev
    }

    /// Bytes written that the reader has taken: all of them, unless the descriptor is a pipe, where those still in
    /// the pipe's buffer are not yet read (nil when the reader has closed its end).
    func bytesRead() -> Int? {
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFIFO else { return bytesWritten }
        var readerGone = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
        if poll(&readerGone, 1, 0) > 0, readerGone.revents & Int16(POLLERR) != 0 { return nil }
        var unread: Int32 = 0
        guard ioctl(descriptor, UInt(FIONREAD), &unread) == 0 else { return bytesWritten }
        return bytesWritten - Int(unread)
    }

    /// Writes `text` without a line terminator (progress display).
    func write(raw text: String) {
        buffer.append(contentsOf: text.utf8)
    }

    /// Writes one line given as UTF-8 bytes, adding the terminator.
    func write(line bytes: [UInt8]) {
        buffer.append(contentsOf: bytes)
        buffer.append(UInt8(ascii: "\n"))
        if buffer.count >= capacity { flush() }
    }

    func write(line: String) {
        buffer.append(contentsOf: line.utf8)
        buffer.append(UInt8(ascii: "\n"))
        if buffer.count >= capacity { flush() }
    }

    func flush() {
        guard failure == nil else {
            buffer.removeAll(keepingCapacity: true)
            return
        }
        var offset = 0
        while offset < buffer.count {
            let written = buffer.withUnsafeBytes { bytes in
                systemWrite(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
            }
            if written < 0 {
                if errno == EINTR { continue }
                failure = String(cString: strerror(errno))
                break
            }
            offset += written
            bytesWritten += written
        }
        buffer.removeAll(keepingCapacity: true)
    }
}
