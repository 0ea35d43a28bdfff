#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A buffered writer on a file descriptor that reports write failures instead of ignoring them.
final class StandardStream {
    private let descriptor: Int32
    private var buffer: [UInt8] = []
    private let capacity = 64 * 1024
    /// The first write error, once one happened; later writes are dropped.
    private(set) var failure: String?
    /// True once a write failed because the reader closed its end (`EPIPE`; SIGPIPE is ignored while a run is
    /// watched, ``Interruption``): the run then settles its claims and ends quietly, as SIGPIPE would have.
    private(set) var isClosedByReader = false
    /// Bytes handed to the system so far (flushed).
    private(set) var bytesWritten = 0
    /// Bytes written so far, flushed or still buffered: where the next byte goes in the output.
    var position: Int { bytesWritten + buffer.count }

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
    /// the pipe's buffer are not (yet) read; and whether the reader has closed its end (then nothing more will be).
    func bytesRead() -> (count: Int, readerGone: Bool) {
        guard isPipe else { return (bytesWritten, false) }
        var state = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
        let readerGone = poll(&state, 1, 0) > 0 && state.revents & Int16(POLLERR) != 0
        var unread: Int32 = 0
        guard ioctl(descriptor, UInt(FIONREAD), &unread) == 0 else { return (0, readerGone) }
        return (bytesWritten - Int(unread), readerGone)
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
        if let whileWaiting, isPipe {
            flushWatching(whileWaiting)
            return
        }
        var offset = 0
        while offset < buffer.count {
            let written = FileDescriptor.write(descriptor, buffer, from: offset, count: buffer.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                fail(errno)
                break
            }
            offset += written
            bytesWritten += written
        }
        buffer.removeAll(keepingCapacity: true)
    }

    /// Called while a flush to a pipe waits for its reader (every ``waitingInterval`` of waiting), and once more
    /// when the reader has closed its end, so a caller can act on what the reader has taken so far (`--state`
    /// confirms those records' claims).
    var whileWaiting: (() -> Void)?
    static let waitingInterval: Int32 = 50

    /// Records the first write failure, `error` being the `errno` the write left.
    private func fail(_ error: Int32) {
        failure = String(cString: strerror(error))
        isClosedByReader = error == EPIPE
    }

    /// True when the descriptor is a pipe (or FIFO).
    private lazy var isPipe: Bool = {
        var status = stat()
        return fstat(descriptor, &status) == 0 && status.st_mode & S_IFMT == S_IFIFO
    }()

    /// Writes the buffer to a pipe one page at a time once the pipe has room, calling `whileWaiting` whenever the
    /// reader leaves it full for a while.
    private func flushWatching(_ whileWaiting: () -> Void) {
        var offset = 0
        while offset < buffer.count {
            var ready = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
            let polled = poll(&ready, 1, Self.waitingInterval)
            if polled == 0 {
                whileWaiting()
                continue
            }
            if ready.revents & Int16(POLLERR) != 0 {
                // The reader closed its end: act on what it took before the write below fails (or SIGPIPE ends
                // the run).
                whileWaiting()
            }
            if polled < 0 && errno != EINTR {
                fail(errno)
                break
            }
            let chunk = min(buffer.count - offset, 4096)
            let written = FileDescriptor.write(descriptor, buffer, from: offset, count: chunk)
            if written < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                fail(errno)
                break
            }
            offset += written
            bytesWritten += written
        }
        buffer.removeAll(keepingCapacity: true)
    }
}
