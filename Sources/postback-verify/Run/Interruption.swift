#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// SIGINT, SIGTERM and SIGHUP delivered as a call on an ordinary thread, where the run can take its output lock,
/// end at a record boundary and settle its `--state` claims before it exits (docs/cli.md section 4).
///
/// The signal handler only writes the signal's number into a pipe (the self-pipe pattern: `write` is
/// async-signal-safe; locks and Swift allocation are not); a watcher thread reads it and calls the handler. Signals
/// are installed with BSD semantics (`SA_RESTART`), so a blocking `read` or `write` elsewhere carries on instead of
/// failing half-way through a record. A second signal while the first is handled kills the process the default
/// way, so a run stuck writing into a reader that stopped reading can still be stopped.
enum Interruption {
    /// The signals that end a run at a record boundary: Ctrl-C, a service manager's stop, a closed terminal.
    static let watched: [Int32] = [SIGINT, SIGTERM, SIGHUP]

    /// Starts watching ``watched``; `handler` gets the signal number, once.
    ///
    /// SIGPIPE is ignored from here on: a write into a pipe whose reader has gone fails with `EPIPE` instead of
    /// killing the process on the spot, so the run can confirm the records the reader took before it ends the
    /// same quiet way (``endAsClosedOutput()``).
    static func watch(_ handler: @escaping @Sendable (Int32) -> Void) {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { return }
        SignalPipe.writeEnd = ends[1]
        SignalPipe.received = 0
        let readEnd = ends[0]
        let watcher = Thread {
            var number: UInt8 = 0
            while read(readEnd, &number, 1) != 1 {
                guard errno == EINTR else { return }
            }
            handler(Int32(number))
        }
        watcher.stackSize = 1 << 18
        watcher.start()
        var unblock = sigset_t()
        sigemptyset(&unblock)
        _ = signal(SIGPIPE, SIG_IGN)
        for signalNumber in watched {
            // A signal the parent set to be ignored stays ignored (a background job's SIGINT, by convention).
            let previous = signal(signalNumber, SignalPipe.handler)
            if unsafeBitCast(previous, to: Int.self) == unsafeBitCast(SIG_IGN, to: Int.self) {
                _ = signal(signalNumber, SIG_IGN)
            }
            sigaddset(&unblock, signalNumber)
        }
        // A parent may have spawned us with these blocked (the mask is inherited); threads started later inherit
        // this thread's mask, so unblocking here covers the whole run.
        pthread_sigmask(SIG_UNBLOCK, &unblock, nil)
    }

    /// The conventional exit status for a run ended by `signalNumber`: 130 for SIGINT, 143 for SIGTERM, 129 for
    /// SIGHUP.
    static func exitStatus(for signalNumber: Int32) -> Int32 {
        128 + signalNumber
    }

    /// The signal's name for messages.
    static func name(of signalNumber: Int32) -> String {
        switch signalNumber {
        case SIGINT: "SIGINT"
        case SIGTERM: "SIGTERM"
        case SIGHUP: "SIGHUP"
        default: "signal \(signalNumber)"
        }
    }
}

extension Interruption {
    /// Ends the process the way a write into a closed pipe does by default (SIGPIPE: status 141 as a shell reports
    /// it, no message), once the run has settled what the reader took.
    static func endAsClosedOutput() -> Never {
        _ = signal(SIGPIPE, SIG_DFL)
        var pipeOnly = sigset_t()
        sigemptyset(&pipeOnly)
        sigaddset(&pipeOnly, SIGPIPE)
        pthread_sigmask(SIG_UNBLOCK, &pipeOnly, nil)
        _ = raise(SIGPIPE)
        _exit(128 + SIGPIPE)
    }
}

/// What the C signal handler may touch: two integers set before it is installed.
private enum SignalPipe {
    nonisolated(unsafe) static var writeEnd: Int32 = -1
    nonisolated(unsafe) static var received: Int32 = 0

    static let handler: @convention(c) (Int32) -> Void = { signalNumber in
        received += 1
        if received > 1 {
            _ = signal(signalNumber, SIG_DFL)
            _ = raise(signalNumber)
            return
        }
        var number = UInt8(truncatingIfNeeded: signalNumber)
        _ = write(writeEnd, &number, 1)
    }
}
