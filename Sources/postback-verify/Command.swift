import Attribution
import Foundation

/// The `postback-verify` command: options → key ring → read, verify, deduplicate, write → summary, status.
enum Command {
    static let batchSize = 512

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
            verifier = ItemVerifier(keyRing: try keyRing(options), policy: VerificationPolicy(
                isStrict: options.isStrict, maximumImpressionAge: options.maximumImpressionAge))
        } catch {
            errors.write(line: "postback-verify: error: \(error.message)")
            errors.write(line: "Run 'postback-verify --help' for usage.")
            errors.flush()
            return 2
        }
        return run(options, verifier: verifier, errors: errors)
    }

    private static func run(_ options: CommandLineOptions, verifier: ItemVerifier, errors: StandardStream) -> Int32 {
        let started = DispatchTime.now()
        let output = StandardStream(descriptor: 1)
        let jobs = options.jobs ?? ProcessInfo.processInfo.activeProcessorCount
        let batches = BatchVerifier(verifier: verifier, jobs: jobs)
        let useColour = options.colour ?? (output.isTerminal && ProcessInfo.processInfo.environment["NO_COLOR"] == nil)
        let text = TextRecord(colour: useColour)
        let reader = InputReader(paths: options.paths, maximumItemBytes: ItemVerifier.maximumItemBytes)
        var deduplicator = Deduplicator()
        var summary = RunSummary()
        var failuresReported = 0

        while let items = reader.nextBatch(maximumCount: batchSize) {
            let results = batches.verify(items)
            for (item, var result) in zip(items, results) {
                if options.deduplicates {
                    deduplicator.apply(to: &result, source: item.source, line: item.line)
                }
                summary.count(result, expectation: options.expectation)
                switch options.format {
                case .jsonl: output.write(line: JSONLinesRecord.render(result, source: item.source, line: item.line))
                case .text: output.write(line: text.render(result, source: item.source, line: item.line))
                }
                if let expectation = options.expectation, result.verdict != expectation {
                    errors.write(line: "postback-verify: \(item.source):\(item.line): expected \(expectation.rawValue), "
                                 + "got \(result.verdict.rawValue)"
                                 + (result.firstError.map { " (\($0.code?.rawValue ?? "")): \($0.message)" } ?? ""))
                }
            }
            // Flush per batch: on a live stream every line read so far gets its record now.
            output.flush()
            failuresReported = report(reader.failures, after: failuresReported, to: errors)
            errors.flush()
            if let failure = output.failure {
                errors.write(line: "postback-verify: error: cannot write standard output: \(failure)")
                errors.flush()
                return 2
            }
        }
        failuresReported = report(reader.failures, after: failuresReported, to: errors)
        output.flush()
        if let failure = output.failure {
            errors.write(line: "postback-verify: error: cannot write standard output: \(failure)")
            errors.flush()
            return 2
        }
        if !options.isQuiet {
            let seconds = Double(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1e9
            errors.write(line: summary.render(seconds: seconds, failures: reader.failures.count))
        }
        errors.flush()
        if !reader.failures.isEmpty { return 2 }
        return summary.unexpected == 0 ? 0 : 1
    }

    private static func report(_ failures: [InputFailure], after count: Int, to stream: StandardStream) -> Int {
        for failure in failures.dropFirst(count) {
            stream.write(line: "postback-verify: error: cannot read \(failure.path): \(failure.message)")
        }
        return failures.count
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
        return ring
    }
}
