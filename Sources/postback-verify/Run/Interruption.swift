#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// SIGINT and SIGTERM delivered as a call on an ordinary thread, where the run can take its output lock and end at
/// a record boundary (docs/cli.md section 4).
///
/// The signal handler only writes the signal's number into a pipe (the self-pipe pattern: `write` is
/// async-signal-safe; locks and Swift allocation are not); a watcher thread reads it and calls the handler. Signals
/// are installed with BSD semantics (`SA_RESTART`), so a blocking `read` or `write` elsewhere carries on instead of
/// failing half-way through a record. A second signal while the first is handled kills the process the default
/// way, so a run stuck writing into a reader that stopped reading can still be stopped.
enum Interruption {
    /// Starts watching SIGINT and SIGTERM; `handler` gets the signal number, once.
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
        for signalNumber in [SIGINT, SIGTERM] {
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

    /// The conventional exit status for a run ended by `signalNumber`: 130 for SIGINT, 143 for SIGTERM.
    static func exitStatus(for signalNumber: Int32) -> Int32 {
        128 + signalNumber
    }

    /// The signal's name for messages.
    static func name(of signalNumber: Int32) -> String {
        switch signalNumber {
        case SIGINT: "SIGINT"
        case SIGTERM: "SIGTERM"
        default: "signal \(signalNumber)"
        }
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
