@_spi(Servers) import Attribution
import Foundation
import NIOCore

/// Why the receiver did not start: one line naming the cause and the remedy, and the exit status that says which
/// kind of failure it was (sysexits.h's values, so a supervisor or script can tell a typo from a busy port). The
/// statuses are listed by `--help` and Receiver/README.md; usage mistakes (64) are the argument parser's.
public struct StartupFailure: Error, Sendable, CustomStringConvertible {
    /// The exit status of each kind of start-up failure.
    public enum Status: Int32, Sendable, CaseIterable {
        /// A usage mistake: an unknown option or a value out of range (with the usage line).
        case usage = 64
        /// A `--key` or `--skadnetwork-key-*` file is missing, unreadable or not a public key on the curve; or the
        /// `--schema` file cannot be read or is malformed.
        case inputFile = 66
        /// The PostgreSQL state's server cannot be reached, or refused the connection.
        case databaseUnavailable = 69
        /// The address cannot be listened on: the port is in use, the machine has no such address, or it is
        /// a privileged port.
        case cannotListen = 71
        /// The state or archive is refused (not ours, damaged, newer) or cannot be created.
        case stateRefused = 73
    }

    public let status: Status
    /// One line: the cause and the remedy, with whatever came from the command line or a file escaped.
    public let message: String

    public init(_ status: Status, _ message: String) {
        self.status = status
        self.message = TerminalText.escaped(message)
    }

    public var description: String { message }

    /// A state or archive that could not be opened: the database's server unreachable (69), or refused (73).
    public static func state(_ failure: StorageFailure, isPostgreSQL: Bool) -> StartupFailure {
        if isPostgreSQL && ["cannot-open", "unavailable", "busy"].contains(failure.code) {
            // The library's message names the server and says what to check.
            return StartupFailure(.databaseUnavailable, "the PostgreSQL state cannot be reached (\(failure.code)): "
                                  + failure.message)
        }
        return StartupFailure(.stateRefused, "cannot use the state (\(failure.code)): \(failure.message); give "
                              + "--state and --archive files of postback-receiver's, or new paths")
    }

    /// The server could not listen on `host`:`port` (it threw `error` before it ran).
    public static func cannotListen(host: String, port: Int, error: any Error) -> StartupFailure {
        let address = "\(host):\(port)"
        if let error = error as? IOError {
            switch error.errnoCode {
            case EADDRINUSE:
                return StartupFailure(.cannotListen, "cannot listen on \(address): the address is already in use "
                                      + "(another process listens on port \(port)); stop it or choose another --port")
            case EADDRNOTAVAIL:
                return StartupFailure(.cannotListen, "cannot listen on \(address): this machine has no address "
                                      + "\(host); give one of its addresses as --host (127.0.0.1, or 0.0.0.0 for "
                                      + "every address)")
            case EACCES:
                return StartupFailure(.cannotListen, "cannot listen on \(address): permission denied (ports below "
                                      + "1024 need privileges); choose a --port from 1024 up")
            default:
                return StartupFailure(.cannotListen, "cannot listen on \(address): \(error); check --host and --port")
            }
        }
        return StartupFailure(.cannotListen, "cannot listen on \(address): \(error); check --host and --port")
    }

    /// The `--metrics-address` listener could not listen on `host`:`port`.
    public static func cannotListenForMetrics(host: String, port: Int, error: any Error) -> StartupFailure {
        let reason = (error as? IOError).map { String(cString: strerror($0.errnoCode)) } ?? "\(error)"
        return StartupFailure(.cannotListen, "cannot listen on --metrics-address \(host):\(port): \(reason); give "
                              + "another HOST:PORT")
    }
}
