#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@_spi(CommandLine) import Attribution

extension InputReader {
    /// One input to read next: standard input, or a file named as given or found in a directory.
    enum Source {
        case standardInput
        case file(path: [UInt8], name: String)

        /// Whether opening and reading it could wait for a writer (a FIFO, a terminal, standard input).
        ///
        /// A path that cannot be stat'ed fails to open at once, so it counts as not waiting.
        var mayWait: Bool {
            switch self {
            case .standardInput:
                // The line reader polls before reading while it holds items, so standard input never waits early.
                return false
            case .file(let path, _):
                var status = stat()
                guard FileDescriptor.withCString(path, { stat($0, &status) }) == 0 else {
                    return false
                }
                return status.st_mode & S_IFMT != S_IFREG
            }
        }

        /// Whether the file is read whole as one item: its name ends in `.json`.
        var isWholeFile: Bool {
            guard case .file(let path, _) = self else {
                return false
            }
            let suffix = Array(".json".utf8)
            return path.count >= suffix.count && path.suffix(suffix.count).elementsEqual(suffix)
        }
    }
}
