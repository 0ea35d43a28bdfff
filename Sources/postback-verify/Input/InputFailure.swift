#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@_spi(CommandLine) import Attribution

/// An input that could not be opened, listed or read: the CLI names it on stderr and exits with status 2.
///
/// Not an item's fault, so never a record: bad items get records, unreadable paths get one of these.
/// Thrown by `LineItemReader`; collected, not thrown, by `InputReader`.
struct InputFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// The path as given or derived, or `-` for standard input.
    let path: String
    /// Why, as the system says it (`No such file or directory`, `Is a directory`, `Permission denied`...).
    let message: String

    /// Creates a failure for a path with a message for people.
    init(path: String, message: String) {
        self.path = path
        self.message = message
    }

    /// `PATH: MESSAGE`, ready for stderr after the program's name.
    var description: String { "\(path): \(message)" }
}

extension InputFailure {
    /// A failure of a system call on `path`, worded by `strerror(code)`.
    static func system(path: String, code: Int32) -> InputFailure {
        InputFailure(path: path, message: String(cString: strerror(code)))
    }
}
