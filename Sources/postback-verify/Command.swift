import Attribution
import Foundation

/// The `postback-verify` command: options → key ring → read, verify, deduplicate, write → summary, status.
enum Command {
    /// Items per batch: large enough to amortise hand-offs between threads, small enough to keep memory low
    /// (a batch holds at most 256 × 16 KiB).
    static let batchSize = 256

    static func main(_ arguments: [String]) -> Int32 {
        let errors = StandardStream(descriptor: 2)
        let options: CommandLineOptions
        let verifier: ItemVerifier
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
            verifier = ItemVerifier(
                keyRing: try keyRing(options),
                policy: VerificationPolicy(
                    isStrict: options.isStrict, maximumImpressionAge: options.maximumImpressionAge),
                cache: VerifiedTokenCache())
        } catch {
            errors.write(line: "postback-verify: error: \(error.message)")
            errors.write(line: "Run 'postback-verify --help' for usage.")
            errors.flush()
            return 2
        }
        return run(options, verifier: verifier, errors: errors)
    }

    private static func run(_ options: CommandLineOptions, verifier: ItemVerifier, errors: StandardStream) -> Int32 {
        let started = DispatchTime.now().uptimeNanoseconds
        let output = StandardStream(descriptor: 1)
        let jobs = options.jobs ?? ProcessInfo.processInfo.activeProcessorCount
        let useColour = options.colour ?? (output.isTerminal && ProcessInfo.processInfo.environment["NO_COLOR"] == nil)
        let render = RecordRenderer(
            format: options.format, text: TextRecord(colour: useColour, explain: options.explains),
            explain: options.explains)
        let input = ReaderHandle(InputReader(paths: options.paths, maximumItemBytes: ItemVerifier.maximumItemBytes))
        let deduplication: RunDeduplication
        do {
            deduplication = try RunDeduplication(options)
        } catch {
            errors.write(line: "postback-verify: error: \(error.reason)")
            errors.flush()
            return 2
        }
        var summary = RunSummary()
        var progress = Progress(stream: errors, enabled: errors.isTerminal && !options.isQuiet, started: started)
        var failures: [InputFailure] = []
        var writeFailure: String?

        let layout = StageLayout(jobs: jobs, cores: ProcessInfo.processInfo.activeProcessorCount)
        // The fast path writes JSON Lines records of valid postbacks; `--expect invalid` wants the general path's
        // mismatch messages, and `--no-fast-path` is for comparing the two. With the steps split (`--jobs` below
        // the core count) it runs in the same three steps as the general path: the worker does the ECDSA alone.
        let fastPath = options.format == .jsonl && options.usesFastPath && options.expectation != .invalid
            ? FastPostbackPath(verifier) : nil
        let worker = BatchWorker(verifier: verifier, fastPath: fastPath, render: render)
        let pipeline = OrderedPipeline<VerifiedBatch, VerifiedBatch>(capacity: 4 * jobs + 4)
        pipeline.run(
            workers: jobs,
            produce: {
                guard let (items, failures) = input.next(maximumCount: batchSize) else { return nil }
                let batch = VerifiedBatch(items: items, failures: failures)
                if layout == .split {
                    worker.prepare(batch)
                }
                return batch
            },
            transform: { batch in
                switch layout {
                case .split:
                    worker.checkSignatures(batch)
                case .workers:
                    worker.finish(batch)
                }
                return batch
            },
            consume: { batch, moreReady in
                if layout == .split {
                    worker.complete(batch)
                }
                let outcomes = batch.outcomes
                guard let duplicates = deduplication.begin(batch) else { return false }
                for index in batch.items.indices {
                    let item = batch.items[index]
                    var result: VerificationResult
                    switch outcomes[index] {
                    case .fast:
                        guard duplicates[index] != nil else {
                            summary.countValid(expectation: options.expectation)
                            output.write(line: batch.records[index])
                            continue
                        }
                        // A repeat: the general path words D1 (its signature is in the token cache by now).
                        result = verifier.verify(item)
                    case .general(let general):
                        result = general
                    }
                    if let first = duplicates[index] {
                        result.markDuplicate(of: first)
                    }
                    let record = result.duplicateOf == nil
                        ? batch.records[index] : render(result, source: item.source, line: item.line)
                    summary.count(result, expectation: options.expectation)
                    output.write(line: record)
                    if let expectation = options.expectation, result.verdict != expectation {
                        errors.write(line: mismatch(result, item: item, expected: expectation))
                    }
                }
                failures += batch.failures
                report(batch.failures, to: errors)
                // Flush when nothing else is ready: on a live stream every line read so far gets its record now.
                // With --state, also before the batch's keys are committed: a key is remembered only once its
                // record was delivered.
                if !moreReady || deduplication.remembersAcrossRuns { output.flush() }
                progress.update(items: summary.items)
                errors.flush()
                writeFailure = output.failure
                return writeFailure == nil && deduplication.commit()
            })
        output.flush()
        writeFailure = writeFailure ?? output.failure
        if let writeFailure {
            progress.clear()
            errors.write(line: "postback-verify: error: cannot write standard output: \(writeFailure)")
            errors.flush()
            return 2
        }
        if let stateFailure = deduplication.failure {
            progress.clear()
            errors.write(line: "postback-verify: error: \(stateFailure)")
            errors.flush()
            return 2
        }
        let lateFailures = input.takeFailures()
        failures += lateFailures
        report(lateFailures, to: errors)
        progress.clear()
        if !options.isQuiet {
            let seconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
            errors.write(line: summary.render(seconds: seconds, failures: failures.count))
        }
        errors.flush()
        if !failures.isEmpty { return 2 }
        return summary.unexpected == 0 ? 0 : 1
    }

    private static func mismatch(_ result: VerificationResult, item: InputItem, expected: Verdict) -> String {
        let reason = result.firstError.map { " (\($0.code?.rawValue ?? "")): \($0.message)" } ?? ""
        return "postback-verify: \(item.source):\(item.line): expected \(expected.rawValue), "
            + "got \(result.verdict.rawValue)\(reason)"
    }

    private static func report(_ failures: [InputFailure], to stream: StandardStream) {
        for failure in failures {
            stream.write(line: "postback-verify: error: cannot read \(failure.path): \(failure.message)")
        }
    }

    /// Apple's keys plus every `--key`, each refused at load time unless it is an EC P-256 public key.
    private static func keyRing(_ options: CommandLineOptions) throws(UsageError) -> KeyRing {
        var ring = KeyRing(allowingDevelopmentKeys: options.allowsDevelopmentKeys)
        for (keyID, path) in options.keys {
            guard let data = FileManager.default.contents(atPath: path) else {
                throw UsageError("cannot read key file \(path) (for kid \(keyID))")
            }
            do {
                let bytes = [UInt8](data)
                let key: ECPublicKey
                if let text = String(bytes: bytes, encoding: .utf8), text.contains("-----BEGIN") {
                    key = try ECPublicKey(pemRepresentation: text)
                } else {
                    key = try ECPublicKey(derRepresentation: bytes)
                }
                try ring.add(key, keyID: keyID)
            } catch {
                throw UsageError("key file \(path) (for kid \(keyID)) cannot be used: \(error.reason)")
            }
        }
        try SKAdNetworkKeyFiles.load(options, into: &ring)
        return ring
    }
}
