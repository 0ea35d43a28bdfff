@_spi(CommandLine) import Attribution
import Foundation

/// The `postback-verify` command: options → key ring → read, verify, deduplicate, write → summary, status.
enum Command {
    /// Items per batch: large enough to amortise hand-offs between threads, small enough to keep memory low
    /// (a batch holds at most 256 × 16 KiB).
    static let batchSize = 256

    static func main(_ arguments: [String]) -> Int32 {
        if let first = arguments.first, first.utf8.elementsEqual("export".utf8) {
            return ExportCommand.main(Array(arguments.dropFirst()))
        }
        if let first = arguments.first, first.utf8.elementsEqual("outbox".utf8) {
            return OutboxCommand.main(Array(arguments.dropFirst()))
        }
        let errors = StandardStream(descriptor: 2)
        let options: CommandLineOptions
        let keyRing: KeyRing
        let schema: ConversionSchema?
        do {
            options = try CommandLineOptions.parse(arguments)
            if options.showsHelp {
                print(HelpText.usage)
                return 0
            }
            if options.showsVersion {
                print(HelpText.version)
                return 0
            }
            keyRing = try Self.keyRing(options)
            schema = try options.schemaPath.map { path throws(UsageError) in try Self.schema(path) }
        } catch {
            errors.write(line: "postback-verify: error: \(TerminalText.escaped(error.message))")
            errors.write(line: "Run 'postback-verify --help' for usage.")
            errors.flush()
            return 2
        }
        // A large run's table of G builds on another core while the run starts and its first batch is read (not
        // before the options are known good: a refused run exits at once, with no thread left computing).
        PostbackPipeline.anticipate(items: RunClaims.expectedItems(options.paths))
        run(options, keyRing: keyRing, schema: schema, errors: errors)
    }

    /// What the run adds to its records and counts with `--schema` or `--report`: the conversion facts of each
    /// valid postback (and, with a schema, their decoding, the pipeline's) are read only then.
    struct Conversions {
        /// True with `--schema`: the pipeline decodes valid postbacks with it.
        let hasSchema: Bool
        /// The time postbacks are decoded as of: the command line has no arrival time, so the run's start.
        let arrival: Date
        /// `decoded`'s time members for `arrival`, written once.
        let times: DecodedTimes
        let isReported: Bool

        var readsFacts: Bool { hasSchema || isReported }
    }

    /// Runs the command and ends the process with its exit status.
    private static func run(
        _ options: CommandLineOptions, keyRing: KeyRing, schema: ConversionSchema?, errors: StandardStream
    ) -> Never {
        let started = Date()
        let conversions = Conversions(hasSchema: schema != nil, arrival: started, times: DecodedTimes(arrival: started),
                                      isReported: options.reportPath != nil)
        let claims = RunClaims(options)
        let output = StandardStream(descriptor: 1)
        let run = RunOutput(
            records: output, messages: errors,
            // A progress line on the terminal that shows the records would land between them.
            showsProgress: errors.isTerminal && !options.isQuiet && !errors.isSameTerminal(as: output),
            showsSummary: !options.isQuiet, started: DispatchTime.now().uptimeNanoseconds)
        if let reportPath = options.reportPath {
            let label = options.label ?? "stdin \(RFC3339Timestamp.string(started))"
            run.writeReport = { run, interruption in
                writeReport(run, to: reportPath, context: ReportContext(
                    label: label, inputs: .run(paths: options.paths), started: started,
                    seconds: run.elapsedSeconds, schemaPath: options.schemaPath, interrupted: interruption))
            }
        }
        if claims.remembersAcrossRuns {
            // A reader that stalls holds up this run only: what it has taken is confirmed while the rest waits.
            output.whileWaiting = { claims.confirmRead(output, now: true) }
            // A signal settles the claims as the end of input does: what was written (read) is confirmed.
            run.settleBeforeExit = { claims.finish($0.records) }
        }
        Interruption.watch { run.interrupt(by: $0) }

        let jobs = options.jobs ?? ProcessInfo.processInfo.activeProcessorCount
        let records: BatchVerifier.Records
        switch options.format {
        case .jsonl:
            // The fast path writes JSON Lines records of valid postbacks (`--no-fast-path` is for comparing the
            // two paths); a mismatch message reads the outcome, which both paths give alike.
            records = .jsonLines(explain: options.explains, fastPath: options.usesFastPath)
        case .text:
            let text = TextRecord(
                colour: options.colour ?? (output.isTerminal && allowsColour()), explain: options.explains)
            records = .rendered { Array(text.render($0, source: $1, line: $2).utf8) }
        }
        // The library's pipeline, its steps on this run's threads: with the steps split (`--jobs` below the core
        // count), the reader prepares, the workers check signatures alone and the writer completes (`StageLayout`);
        // the writer counts (``RunClaims``) and writes.
        let postbacks = PostbackPipeline(keyRing: keyRing, policy: options.verification.policy, records: records,
                                         schema: schema)
        let verifier = postbacks.steps
        let input = ReaderHandle(
            InputReader(paths: options.paths, maximumItemBytes: AttributionVerifier.maximumItemBytes))

        let layout = StageLayout(jobs: jobs, cores: ProcessInfo.processInfo.activeProcessorCount)
        // With --state the batches claimed ahead stay in flight until written: room for them beside the workers'.
        let pipeline = OrderedPipeline<ReadBatch, ReadBatch>(
            capacity: 4 * jobs + 4 + (claims.remembersAcrossRuns ? RunClaims.claimAhead + 1 : 0))
        var stateRefusal: AttributionError?
        pipeline.run(
            workers: jobs,
            prepare: {
                // The state file is checked (or created) while the first batches are read and verified; a file
                // refused stops the run before any record.
                do throws(AttributionError) {
                    try claims.open()
                    return true
                } catch {
                    stateRefusal = error
                    return false
                }
            },
            produce: {
                guard let (items, failures) = input.next(maximumCount: batchSize) else { return nil }
                let batch = VerifiedBatch(items: items)
                if layout == .split {
                    verifier.prepare(batch)
                }
                return ReadBatch(batch: batch, failures: failures)
            },
            transform: { read in
                switch layout {
                case .split:
                    verifier.checkSignatures(read.batch)
                case .workers:
                    verifier.finish(read.batch)
                }
                return read
            },
            consume: { read, moreReady in
                let batch = read.batch
                if layout == .split {
                    verifier.complete(batch)
                }
                return run.batch { run in
                    // One short transaction claims the batch's keys; none is held while the records are written.
                    // With --state, the batches already read behind this one are claimed in the same transaction
                    // once the workers finished them (the key index's pages written to the log once, not once per
                    // batch). The split layout completes a batch here, so it claims one at a time.
                    let ahead = layout == .workers && claims.remembersAcrossRuns && !claims.hasClaimed(batch)
                        ? pipeline.outputsAhead(limit: RunClaims.claimAhead).map(\.batch) : []
                    guard let answers = claims.claim(batch, ahead: ahead, through: postbacks) else { return false }
                    postbacks.mark(batch, answers, keepingTime: claims.remembersAcrossRuns)
                    write(batch, answers: answers, claims: claims, to: run, options: options,
                          pipeline: postbacks, conversions: conversions)
                    run.report(read.failures)
                    // Flush when nothing else is ready: on a live stream every line read so far gets its record now.
                    // With --state, also before the batch's claims are confirmed: a key is remembered only once its
                    // record was written (and, for a pipe, read).
                    if !moreReady || claims.remembersAcrossRuns { run.records.flush() }
                    run.progress.update(items: run.summary.items)
                    run.messages.flush()
                    return run.records.failure == nil && claims.confirmRead(run.records)
                }
            })
        if let stateRefusal {
            errors.write(line: "postback-verify: error: \(TerminalText.escaped(stateRefusal.reason))")
            errors.flush()
            // The reader and workers are still running: end the process without exit's clean-up (OpenSSL's
            // among it) under their feet, as an interruption does. No record was written, nothing is buffered.
            _exit(2)
        }
        let status = run.end { run in finish(run, input: input, claims: claims, options: options) }
        // Every record is written and the claims are settled. The process ends here, with what the run holds (the
        // memory store's entry per valid postback, the verified-token cache) still alive: the kernel takes its
        // pages back at once, where freeing it entry by entry on the way out cost ~5 ms after 20,000 postbacks,
        // on one core, with nothing else left to do.
        withExtendedLifetime((claims, postbacks, pipeline, input)) { exit(status) }
    }

    /// Writes a batch's records in input order (its duplicates marked), counting each for the summary, and notes
    /// where each first sighting's record ends, for its claim's confirmation.
    private static func write(
        _ batch: VerifiedBatch, answers: [PostbackPipeline.BatchAnswer], claims: RunClaims,
        to run: RunOutput, options: CommandLineOptions, pipeline: PostbackPipeline, conversions: Conversions
    ) {
        for index in batch.items.indices {
            run.summary.count(batch.outcomes[index], environment: pipeline.steps.validEnvironment(batch, at: index),
                              expectation: options.expectation)
            // The pipeline decodes (with the run's schema, as of the run's start): the command line only writes.
            if conversions.readsFacts,
               let (facts, decoded) = pipeline.conversion(batch, at: index, arrival: conversions.arrival) {
                run.report.count(facts, decoded: decoded)
                if let decoded, options.format == .jsonl {
                    run.records.write(line: decoded.adding(to: batch.records[index], times: conversions.times))
                } else {
                    run.records.write(line: batch.records[index])
                }
            } else {
                run.records.write(line: batch.records[index])
            }
            if case .first(let key) = answers[index] { claims.written(key, through: run.records.position) }
            if let expectation = options.expectation, batch.outcomes[index].verdict != expectation {
                run.messages.write(
                    line: mismatch(batch.outcomes[index], item: batch.items[index], expected: expectation))
            }
        }
    }

    /// The end of a run that was not interrupted: the last records, late messages, the summary and the status.
    private static func finish(
        _ run: RunOutput, input: ReaderHandle, claims: RunClaims, options: CommandLineOptions
    ) -> Int32 {
        run.records.flush()
        claims.finish(run.records)
        // Each disagreement was written on standard error when it happened (its item reported invalid); the status
        // keeps a run that met one from passing as an ordinary one, or as one that only failed to write or store.
        let failed: Int32 = ECPublicKey.signatureDisagreements > 0 ? 3 : 2
        if run.records.isClosedByReader {
            // `| head`: the records the reader took are confirmed; end as quietly as SIGPIPE would have.
            run.progress.clear()
            run.messages.flush()
            Interruption.endAsClosedOutput()
        }
        if let writeFailure = run.records.failure {
            run.progress.clear()
            run.messages.write(line: "postback-verify: error: cannot write standard output: \(writeFailure)")
            run.messages.flush()
            return failed
        }
        if let stateFailure = claims.failure {
            run.progress.clear()
            run.messages.write(line: "postback-verify: error: \(TerminalText.escaped(stateFailure))")
            run.messages.flush()
            return failed
        }
        run.report(input.takeFailures())
        run.progress.clear()
        for directory in input.reader.emptyDirectories {
            run.messages.write(line: "postback-verify: warning: directory \(TerminalText.escaped(directory)) holds "
                + "no item file (*.json, *.jsonl, *.jws, *.txt; names are case-sensitive)")
        }
        if !options.isQuiet {
            run.messages.write(line: run.summary.render(seconds: run.elapsedSeconds, failures: run.failures.count))
        }
        run.writeReport(run, nil)
        let checkedNothing = options.expectation != nil && run.summary.items == 0
        if checkedNothing {
            run.messages.write(line: "postback-verify: error: --expect \(options.expectation!.rawValue): no items "
                + "were read, so nothing was checked")
        }
        run.messages.flush()
        if failed == 3 || !run.failures.isEmpty || run.failedReport { return failed }
        return run.summary.unexpected == 0 && !checkedNothing ? 0 : 1
    }

    /// Colour on a terminal unless the environment asks for none: `NO_COLOR` set to a non-empty value
    /// (no-color.org), or `TERM=dumb`.
    private static func allowsColour() -> Bool {
        let environment = ProcessInfo.processInfo.environment
        return (environment["NO_COLOR"] ?? "").isEmpty && environment["TERM"] != "dumb"
    }

    private static func mismatch(_ outcome: VerifiedBatch.Outcome, item: InputItem, expected: Verdict) -> String {
        let reason = outcome.firstError.map { " (\($0.code?.rawValue ?? "")): \(TerminalText.escaped($0.message))" }
        return "postback-verify: \(TerminalText.escaped(item.source)):\(item.line): expected \(expected.rawValue), "
            + "got \(outcome.verdict.rawValue)\(reason ?? "")"
    }

    /// The conversion schema at `path` (the library reads it as for every program); one that cannot be read or is
    /// malformed is a usage error (status 2) naming the line and the reason.
    private static func schema(_ path: String) throws(UsageError) -> ConversionSchema {
        try UsageError.wrapping { () throws(AttributionError) in try ConversionSchema(contentsOfFile: path) }
    }

    /// Writes the run report (`--report`): HTML when the path ends in `.html` (any case), JSON otherwise. A report
    /// that cannot be written is named on standard error; the records already written stand.
    private static func writeReport(_ run: RunOutput, to path: String, context: ReportContext) {
        do {
            try run.report.write(to: path, summary: run.summary, context: context)
        } catch {
            run.messages.write(line: "postback-verify: error: cannot write the report \(TerminalText.escaped(path)): "
                + TerminalText.escaped((error as NSError).localizedDescription))
            run.failedReport = true
        }
        run.messages.flush()
    }

    /// Apple's keys plus every `--key` and the SKAdNetwork replacement keys, as the library builds them from the
    /// options; a key file it cannot use is a usage error (status 2) with the library's message.
    private static func keyRing(_ options: CommandLineOptions) throws(UsageError) -> KeyRing {
        try UsageError.wrapping { () throws(AttributionError) in try options.verification.keyRing() }
    }
}
