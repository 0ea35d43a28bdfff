#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing

/// A stop confirms what was written (docs/state.md, "A stop confirms what was written"): with `--state`, a run ended
/// by SIGTERM, SIGINT or SIGHUP, or by a reader that closed its pipe, confirms the claims of every record it wrote
/// (for a pipe: that the reader took) before it exits, so the next run marks each of them a duplicate and reports
/// every other postback valid. Only `kill -9` and power loss may repeat a postback. Through the built binary, in
/// the `--state` suite (its signer and scratch directory).
extension StateCommandLineTests {
    /// How one stopped run ended and the whole records it gave its reader.
    struct StoppedRun {
        let status: Int32
        let reason: Process.TerminationReason
        let records: [[String: Any]]
        /// True when the bytes received end with a newline (or are empty): no record was torn.
        let endsWhole: Bool
    }

    /// Runs the binary with `--state` over `input` and sends `signalNumber` after `delay` seconds (if it is still
    /// running); its records go to a file, or to a pipe this test reads to the end.
    func stopped(_ input: String, after delay: Double, signal signalNumber: Int32, toPipe: Bool) throws -> StoppedRun {
        let arguments = ["--format", "jsonl", "--quiet", "--state", statePath, input]
        let process: Process
        var received = Data()
        if toPipe {
            let output = Pipe()
            process = Process()
            process.executableURL = try CommandLineTests.binary()
            process.arguments = TestPostbackSigner.keyArguments + arguments
            process.currentDirectoryURL = TestPaths.packageRoot
            process.standardInput = FileHandle.nullDevice
            process.standardOutput = output
            process.standardError = FileHandle.nullDevice
            try process.run()
            let signaller = Thread {
                Thread.sleep(forTimeInterval: delay)
                if process.isRunning { kill(process.processIdentifier, signalNumber) }
            }
            signaller.start()
            received = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
        } else {
            let file = scratch.url("stopped.jsonl")
            process = try scratch.start(arguments, output: file)
            Thread.sleep(forTimeInterval: delay)
            if process.isRunning { kill(process.processIdentifier, signalNumber) }
            process.waitUntilExit()
            received = try Data(contentsOf: file)
        }
        return StoppedRun(
            status: process.terminationStatus, reason: process.terminationReason,
            records: StateCommandLineTests.records(received),
            endsWhole: received.isEmpty || received.last == UInt8(ascii: "\n"))
    }

    /// Adds each valid record's line to `valid`, counting how often it was reported valid.
    static func countValid(_ records: [[String: Any]], into valid: inout [Int: Int]) {
        for record in records where record["verdict"] as? String == "valid" {
            if let line = record["line"] as? Int { valid[line, default: 0] += 1 }
        }
    }

    @Test("""
        Regression (issue 22): 20 SIGTERMs at random moments over a 20,000-item input, to a file and to a pipe, then \
        a re-run: no postback valid twice, none lost
        """)
    func sigtermsThenRerun() throws {
        // Fewer under a sanitizer, whose runs are many times slower: the same moments, relative to a run's length.
        let count = FloodTests.items(20_000)
        let runs = FloodTests.sanitized ? 4 : 20
        let input = try scratch.input("stops.jsonl", try signer.bodies(count: count, seed: 22))
        // How long a whole run takes on this machine now, to spread the signals over it.
        let started = Date()
        let reference = try scratch.run(["--format", "jsonl", "--quiet", "--no-dedupe", input])
        let runSeconds = Date().timeIntervalSince(started)
        try #require(reference.records.count == count, "\(reference.stderr)")

        var random = SplitMix64(seed: 2_022)
        var valid: [Int: Int] = [:]
        var interrupted = 0
        for run in 0..<runs {
            let delay = 0.02 + Double.random(in: 0...0.9, using: &random) * runSeconds
            let stop = try stopped(input, after: delay, signal: SIGTERM, toPipe: run % 2 == 1)
            let output = run % 2 == 1 ? "pipe" : "file"
            #expect(stop.reason == .exit, "run \(run) (\(output)) ended by a signal's default action")
            #expect(stop.status == 143 || stop.status == 0 || stop.status == 1, "run \(run): \(stop.status)")
            #expect(stop.endsWhole, "run \(run) (\(output)): the last record is whole")
            if stop.status == 143 { interrupted += 1 }
            Self.countValid(stop.records, into: &valid)
        }
        #expect(interrupted >= runs / 4, "the signals came mid-run (\(interrupted) of \(runs) interrupted)")

        let final = try scratch.run(["--format", "jsonl", "--quiet", "--state", statePath, input])
        try #require(final.records.count == count, "\(final.stderr)")
        Self.countValid(final.records, into: &valid)
        let twice = valid.filter { $0.value > 1 }.keys.sorted()
        #expect(twice.isEmpty, "\(twice.count) postbacks valid twice, first lines \(twice.prefix(10))")
        let lost = (1...count).filter { valid[$0] == nil }
        #expect(lost.isEmpty, "\(lost.count) postbacks never valid, first lines \(lost.prefix(10))")
    }

    @Test("SIGINT and SIGHUP stop at a record boundary and confirm what was written, as SIGTERM does",
          arguments: [SIGINT, SIGHUP])
    func otherSignals(_ signalNumber: Int32) throws {
        let count = 4_000
        let input = try scratch.input("signals.jsonl", try signer.bodies(count: count, seed: 23))
        var valid: [Int: Int] = [:]
        var interrupted = false
        // The first moment that finds the run mid-way (a run that ends first is fine, but proves nothing).
        for delay in [0.3, 0.15, 0.6, 0.05] where !interrupted {
            let stop = try stopped(input, after: delay, signal: signalNumber, toPipe: false)
            #expect(stop.reason == .exit && stop.endsWhole)
            interrupted = stop.status == 128 + signalNumber
            Self.countValid(stop.records, into: &valid)
        }
        #expect(interrupted, "no run was interrupted by signal \(signalNumber)")
        let final = try scratch.run(["--format", "jsonl", "--quiet", "--state", statePath, input])
        try #require(final.records.count == count, "\(final.stderr)")
        Self.countValid(final.records, into: &valid)
        #expect(valid.values.allSatisfy { $0 == 1 } && valid.count == count,
                "\(valid.filter { $0.value > 1 }.count) valid twice, \(count - valid.count) lost")
    }

    @Test("""
        A reader that takes 100,000 bytes and closes the pipe: exactly the records wholly in \
        those bytes are remembered, the run ends quietly as SIGPIPE would, and the next run reports the rest valid
        """)
    func closedPipeConfirmsWhatWasRead() throws {
        let count = 2_000
        let input = try scratch.input("closed.jsonl", try signer.bodies(count: count, seed: 24))
        let (process, output, error) = try CommandLineTests.start(
            TestPostbackSigner.keyArguments + ["--format", "jsonl", "--state", statePath, input])
        let taken = output.fileHandleForReading.readData(ofLength: 100_000)
        try output.fileHandleForReading.close()
        let stderr = String(decoding: error.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGPIPE,
                "ends as a write into a closed pipe does by default")
        #expect(stderr.isEmpty, "\(stderr)")
        try #require(taken.count == 100_000, "the run wrote at least 100,000 bytes")
        let whole = taken[...(taken.lastIndex(of: UInt8(ascii: "\n")) ?? taken.startIndex)]
        let read = Set(StateCommandLineTests.records(Data(whole)).compactMap { $0["line"] as? Int })
        #expect(read.count > 10)

        let again = try scratch.run(["--format", "jsonl", "--quiet", "--state", statePath, input])
        try #require(again.records.count == count, "\(again.stderr)")
        let duplicates = Set(again.records.compactMap { $0["duplicate-of"] as? Int })
        #expect(duplicates == read, "remembered: exactly the records the reader took whole")
        let validAgain = again.records.filter { $0["verdict"] as? String == "valid" }.count
        #expect(validAgain == count - read.count)
    }
}
