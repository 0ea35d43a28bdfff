#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@_spi(CommandLine) import Attribution
import Foundation

/// Everything a run writes, behind one lock: records on standard output; messages, progress and the summary on
/// standard error; and the counts behind the summary.
///
/// The writer thread holds the lock for one batch at a time, and its buffer only ever holds whole records. An
/// interruption takes the lock between two batches, flushes the whole records already rendered, clears the
/// progress line, writes the summary and exits: so every record written is whole and counted (docs/cli.md section 4).
final class RunOutput: @unchecked Sendable {
    // @unchecked: every stored property is used only while `lock` is held, but `signalNumberReceived`.
    private let lock = NSLock()
    let records: StandardStream
    let messages: StandardStream
    var summary = RunSummary()
    /// The run report's counts beyond the summary's (`--report`).
    var report = RunReport()
    /// Writes the report (`--report`), at the end of the run or, with the interruption's note, before an
    /// interrupted run exits; nothing without `--report`.
    var writeReport: (RunOutput, _ interruption: String?) -> Void = { _, _ in }
    /// True once the report could not be written (exit status 2).
    var failedReport = false
    var progress: Progress
    var failures: [InputFailure] = []
    private let showsSummary: Bool
    private let started: UInt64
    private var isEnding = false
    /// Set by the signal watcher; guarded by `signalLock`, not `lock`, so the writer can see it between batches.
    private let signalLock = NSLock()
    private var signalNumberReceived: Int32?
    /// Run with the lock held once the last whole records are flushed, before an interrupted run exits: `--state`
    /// confirms the claims of the records written (for a pipe: read) and releases the rest, so a stop repeats no
    /// postback in the next run (docs/state.md, "A stop confirms what was written").
    var settleBeforeExit: (RunOutput) -> Void = { _ in }

    init(records: StandardStream, messages: StandardStream, showsProgress: Bool, showsSummary: Bool,
         started: UInt64) {
        self.records = records
        self.messages = messages
        self.progress = Progress(stream: messages, enabled: showsProgress, started: started)
        self.showsSummary = showsSummary
        self.started = started
    }

    /// Runs one batch's writing with the lock held. Returns false, without running it, once the run is ending or a
    /// signal asks it to (checked before locking, so the writer cannot keep the lock from the interruption).
    func batch(_ body: (RunOutput) -> Bool) -> Bool {
        guard pendingSignal == nil else { return false }
        lock.lock()
        defer { lock.unlock() }
        guard !isEnding else { return false }
        return body(self)
    }

    /// The normal end of the run: from here on an interruption changes nothing. A signal that came first ends the
    /// run as interrupted instead.
    func end(_ body: (RunOutput) -> Int32) -> Int32 {
        lock.lock()
        defer { lock.unlock() }
        if let signalNumber = pendingSignal {
            endInterrupted(by: signalNumber)
        }
        isEnding = true
        return body(self)
    }

    /// Ends the run for SIGINT, SIGTERM or SIGHUP at a record boundary and exits with 130, 143 or 129; returns
    /// only when the run is already ending on its own.
    func interrupt(by signalNumber: Int32) {
        signalLock.lock()
        signalNumberReceived = signalNumber
        signalLock.unlock()
        lock.lock()
        guard !isEnding else {
            lock.unlock()
            return
        }
        endInterrupted(by: signalNumber)
    }

    /// With `lock` held: the whole records rendered so far, their claims settled, a cleared progress line, the
    /// summary, and the exit.
    private func endInterrupted(by signalNumber: Int32) -> Never {
        records.flush()
        settleBeforeExit(self)
        progress.clear()
        let note = "interrupted by \(Interruption.name(of: signalNumber)); "
            + "\(summary.items) item\(summary.items == 1 ? "" : "s") got records"
        if showsSummary {
            messages.write(line: summary.render(seconds: elapsedSeconds, failures: failures.count, note: note))
        }
        writeReport(self, note)
        messages.flush()
        _exit(Interruption.exitStatus(for: signalNumber))
    }

    private var pendingSignal: Int32? {
        signalLock.lock()
        defer { signalLock.unlock() }
        return signalNumberReceived
    }

    var elapsedSeconds: Double {
        Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
    }

    /// Reports paths that could not be read, as they are met.
    func report(_ newFailures: [InputFailure]) {
        failures += newFailures
        for failure in newFailures {
            messages.write(line: "postback-verify: error: cannot read \(TerminalText.escaped(failure.path)): "
                + TerminalText.escaped(failure.message))
        }
    }
}
