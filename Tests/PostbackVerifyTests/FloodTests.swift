import Foundation
import Testing

@_spi(CommandLine) @_spi(Servers) @_spi(Stores) @testable import Attribution

/// What an attacker sends to hurt a verifier that faces the internet (issue 15), through the built binary. Peak
/// memory is the child's own high-water mark (`VmHWM` in `/proc/PID/status`, read while it waits on an open
/// standard input after writing every record), never the test runner's. The limits are generous (the machine
/// and the build vary) but each is far below what the shape cost before the fix: 256 nested-array bodies
/// peaked at about 470 MiB.
@Suite("Floods: no input costs more than an honest postback", .serialized)
struct FloodTests {
    /// The item cap (bytes).
    static let cap = AttributionVerifier.maximumItemBytes

    /// True when the binary under test is built with a sanitizer (`.ci/sanitize`): AddressSanitizer's quarantine
    /// and shadow memory, and ThreadSanitizer's, make its RSS no measure of ours, and it runs many times slower.
    /// The records are still checked, over fewer items; the memory bounds only on normal builds.
    static let sanitized: Bool = {
        let environment = ProcessInfo.processInfo.environment
        let path = (try? CommandLineTests.binary().path) ?? ""
        return environment["ASAN_OPTIONS"] != nil || environment["TSAN_OPTIONS"] != nil
            || path.contains(".build-asan") || path.contains(".build-tsan")
    }()

    /// Items per run: enough to fill the pipeline many times over, fewer under a sanitizer.
    static func items(_ count: Int) -> Int { sanitized ? max(count / 10, 50) : count }

    // MARK: - Bodies

    /// `count` distinct genuine bodies signed with the fixture key (`TestPostbackSigner`).
    static func honest(_ count: Int, seed: UInt64 = 15) throws -> [String] {
        try TestPostbackSigner().bodies(count: count, seed: seed)
    }


    /// `body` (a compact object) with `"name":` + `value` added before its closing brace.
    static func adding(_ name: String, _ value: String, to body: String) -> String {
        String(body.dropLast()) + ",\"\(name)\":" + value + "}"
    }

    /// `body` with `"x":[unit,unit,...]` filling it to the item cap.
    static func filled(_ body: String, unit: String) -> String {
        let room = cap - body.utf8.count - 7
        let count = (room + 1) / (unit.utf8.count + 1)
        return adding("x", "[" + Array(repeating: unit, count: count).joined(separator: ",") + "]", to: body)
    }

    /// `body` with about 1,400 members `"m0":0,"m1":0,...` filling it to the cap.
    static func manyMembers(_ body: String) -> String {
        var out = String(body.dropLast())
        var index = 0
        while true {
            let next = ",\"m\(index)\":0"
            if out.utf8.count + next.utf8.count + 1 > cap { return out + "}" }
            out += next
            index += 1
        }
    }

    /// `body` with `"x":"\u0041\u00e9..."`: the cap filled with `\u` escapes.
    static func escapes(_ body: String) -> String {
        let count = (cap - body.utf8.count - 8) / 6
        let units = (0..<count).map { ["\\u0041", "\\u00e9", "\\u4e2d", "\\u002f"][$0 % 4] }.joined()
        return adding("x", "\"" + units + "\"", to: body)
    }

    /// `body` with `"x":` a number of (almost) 16,000 digits filling the cap.
    static func longNumber(_ body: String) -> String {
        let digits = min(16_000, cap - body.utf8.count - 6)
        return adding("x", "9" + String(repeating: "0123456789", count: digits / 10 + 1).prefix(digits - 1), to: body)
    }

    // MARK: - Running the binary

    struct Measured {
        let records: [Substring]
        let status: Int32
        /// How the child ended (a signal's number is `status` too) and what it wrote on standard error (a
        /// sanitizer's report, say), for the message of an expectation on `status`.
        let ending: String
        /// The child's peak resident set (VmHWM), MiB; 0 where there is no /proc (not Linux): the memory bounds
        /// then hold trivially, and only the records are checked.
        let peakMiB: Double
    }

    /// Runs the binary over `lines` (written to a file) followed by standard input, which stays open until every
    /// record of the file is out; then reads the child's VmHWM and closes its input.
    static func measure(_ lines: [String], jobs: Int, extra: [String] = []) throws -> Measured {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("floods-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("items.jsonl")
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: file)

        let process = Process()
        process.executableURL = try CommandLineTests.binary()
        process.arguments = ["--format", "jsonl", "--quiet", "--jobs", String(jobs)] + TestPostbackSigner.keyArguments
            + extra + [file.path, "-"]
        process.currentDirectoryURL = TestPaths.packageRoot
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        let errors = directory.appendingPathComponent("stderr")
        _ = FileManager.default.createFile(atPath: errors.path, contents: nil)
        process.standardError = try FileHandle(forWritingTo: errors)
        try process.run()
        var received = Data()
        var newlines = 0
        while newlines < lines.count {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            newlines += chunk.reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) }
            received.append(chunk)
        }
        // Linux's /proc; elsewhere there is no peak to read from outside, and the memory bounds are not checked.
        let status = (try? String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8)) ?? ""
        try input.fileHandleForWriting.close()
        received.append(output.fileHandleForReading.readDataToEndOfFile())
        process.waitUntilExit()
        let hwm = status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") }
            .flatMap { $0.split(separator: " ").dropFirst().first }.flatMap { Double($0) }
        let text = String(decoding: received, as: UTF8.self)
        #if os(Linux)
        let peak = try #require(hwm, "no VmHWM in /proc status") / 1024
        #else
        let peak = hwm.map { $0 / 1024 } ?? 0
        #endif
        let reason = process.terminationReason == .uncaughtSignal ? "signal" : "exit status"
        let ending = "\(reason) \(process.terminationStatus); standard error: "
            + String(decoding: (try? Data(contentsOf: errors)) ?? Data(), as: UTF8.self).suffix(4000)
        return Measured(records: text.split(separator: "\n"), status: process.terminationStatus, ending: ending,
                        peakMiB: peak)
    }

    /// Every record invalid with J1 `malformed-input` naming the parse budget.
    static func expectBudgetRecords(_ run: Measured, count: Int) {
        #expect(run.records.count == count)
        #expect(run.status == 1, "\(run.ending)")
        let over = run.records.filter {
            $0.contains(#""code":"malformed-input","rule":"J1""#) && $0.contains("the parse budget")
        }
        #expect(over.count == count, "\(run.records.first ?? "")")
    }

    // MARK: - The shapes of issue 15

    /// Amplification shapes: 16 KiB bodies that no signature is needed for, and what one of them cost before.
    static let amplifications: [(name: String, make: @Sendable (String) -> String)] = [
        ("nested arrays \"x\":[[0],[0],...]", { filled(FixtureManifest.forged($0), unit: "[0]") }),
        ("objects \"x\":[{\"a\":0},...]", { filled(FixtureManifest.forged($0), unit: #"{"a":0}"#) }),
        ("a flat array of ~7,800 numbers", { filled(FixtureManifest.forged($0), unit: "0") }),
        ("a body of ~1,400 members", { manyMembers(FixtureManifest.forged($0)) }),
    ]

    @Test("Memory amplification: each shape is one J1 record per item, peak RSS under 100 MiB with --jobs 1 and 2",
          arguments: 0..<4, [1, 2])
    func amplification(_ shape: Int, _ jobs: Int) throws {
        let bodies = try Self.honest(64).map(Self.amplifications[shape].make)
        let lines = (0..<Self.items(1_000)).map { bodies[$0 % bodies.count] }
        #expect(lines.allSatisfy { $0.utf8.count <= Self.cap && $0.utf8.count > Self.cap - 64 })
        let run = try Self.measure(lines, jobs: jobs)
        Self.expectBudgetRecords(run, count: lines.count)
        // 1,000 of these (16 MiB) peaked at about 1.8 GB for nested arrays before the budget.
        if !Self.sanitized {
            #expect(run.peakMiB < 100, "\(Self.amplifications[shape].name), --jobs \(jobs): \(run.peakMiB) MiB")
        }
    }

    @Test("Maximum-size items (16 KiB of \\u escapes, a 16,000-digit number): valid, reported whole, bounded memory",
          arguments: [1, 2])
    func maximumSize(_ jobs: Int) throws {
        let honest = try Self.honest(200)
        let lines = honest.enumerated().map {
            $0.offset % 2 == 0 ? Self.escapes($0.element) : Self.longNumber($0.element)
        }
        #expect(lines.allSatisfy { $0.utf8.count <= Self.cap && $0.utf8.count > Self.cap - 16 })
        let run = try Self.measure(lines, jobs: jobs)
        #expect(run.records.count == lines.count)
        #expect(run.status == 0, "\(run.ending)")
        #expect(run.records.allSatisfy { $0.contains(#""verdict":"valid""#) })
        // Never truncated: the escapes come back decoded in full, the number's digits all there.
        let escapedCount = (Self.cap - honest[0].utf8.count - 8) / 6
        let decoded = String((0..<escapedCount).map { ["A", "é", "中", "/"][$0 % 4] }.joined())
        #expect(run.records[0].contains("\"x\":\"" + decoded + "\""))
        let number = Self.longNumber(honest[1]).split(separator: ":").last!.dropLast()
        #expect(number.utf8.count > 15_000 && run.records[1].contains("\"x\":" + number + "}"))
        if !Self.sanitized {
            #expect(run.peakMiB < 100, "--jobs \(jobs): \(run.peakMiB) MiB")
        }
    }

    @Test("Maximum-size floods at --jobs 16 cost at most 3 times the memory of honest items",
          .enabled(if: !sanitized, "a sanitizer's own memory is no measure of ours"))
    func manyJobs() throws {
        let honest = try Self.honest(256)
        let honestLines = (0..<4_000).map { honest[$0 % honest.count] }
        let nested = honest.prefix(64).map { Self.filled(FixtureManifest.forged($0), unit: "[0]") }
        let escaped = honest.prefix(64).map(Self.escapes)
        let floodLines: [String] = (0..<4_000).map { (index: Int) -> String in
            index % 2 == 0 ? nested[index % 64] : escaped[index % 64]
        }
        let reference = try Self.measure(honestLines, jobs: 16, extra: ["--no-dedupe"])
        #expect(reference.records.count == honestLines.count && reference.status == 0, "\(reference.ending)")
        let flood = try Self.measure(floodLines, jobs: 16, extra: ["--no-dedupe"])
        #expect(flood.records.count == floodLines.count, "\(flood.ending)")
        // 4,000 items of 16 KiB: 64 MiB of input, more than the pipeline ever holds at once.
        let (floodPeak, honestPeak) = (flood.peakMiB, reference.peakMiB)
        #expect(floodPeak <= 3 * honestPeak, "flood \(floodPeak) MiB, honest \(honestPeak) MiB")
    }

    @Test("Regression: a run's end never races libcrypto's exit handler (40 runs at --jobs 16, each record valid)")
    func endsCleanly() throws {
        // Workers ending while main's exit ran libcrypto's atexit clean-up freed their contexts against a library
        // being torn down: in the full suite, about one --jobs 16 run in twenty (manyJobs, above) died with signal
        // 11 after writing every record (malloc_consolidate(): invalid chunk size; the backtrace: the main thread
        // in libcrypto, a worker in its thread-local destructors). OpenSSLLibrary sets libcrypto up without that
        // handler. The race needs the machine's timing to show: this repeats the shape, it cannot force it.
        let honest = try Self.honest(64)
        let lines = (0..<512).map { honest[$0 % honest.count] }
        for run in 0..<40 {
            let measured = try Self.measure(lines, jobs: 16, extra: ["--no-dedupe"])
            #expect(measured.records.count == lines.count && measured.status == 0, "run \(run): \(measured.ending)")
            if measured.status != 0 { break }
        }
    }

    @Test("A forged postback in the usual shape is one bad-signature record, the same with and without the fast path")
    func forgedUsualShape() throws {
        let lines = try Self.honest(300).map(FixtureManifest.forged)
        let fast = try Self.measure(lines, jobs: 1)
        let general = try Self.measure(lines, jobs: 1, extra: ["--no-fast-path"])
        #expect(fast.records.count == lines.count)
        #expect(fast.records.allSatisfy { $0.contains(#""code":"bad-signature","rule":"J5""#) })
        // The same records but for the temporary path each run wrote its input to.
        func withoutSource(_ records: [Substring]) -> [Substring] {
            records.map { $0[($0.range(of: #","line":"#)?.lowerBound ?? $0.startIndex)...] }
        }
        let same = withoutSource(fast.records) == withoutSource(general.records)
        #expect(same)
    }

    /// The general path takes the fast path's failed check as its answer: given a "rejected" check for a genuine
    /// item, it reports bad-signature, which it could only do without running the ECDSA again.
    @Test("A signature the fast path rejected is not checked a second time by the general path")
    func noSecondCheck() throws {
        let body = try Self.honest(1)[0]
        var ring = KeyRing()
        try ring.add(FixtureManifest.fixtureKey(), keyID: TestPostbackSigner.keyID)
        let verifier = AttributionVerifier(keyRing: ring)
        let item = InputItem(source: "-", line: 1, content: .bytes(ArraySlice(body.utf8)))
        let fastPath = FastPostbackPath(verifier)
        var prepared = try #require(fastPath.prepare(ArraySlice(body.utf8), source: "-", line: 1))
        fastPath.checkSignature(&prepared)
        #expect(fastPath.record(of: prepared) != nil)
        #expect(fastPath.rejectedCheck(of: prepared) == nil)
        // The same check, claimed rejected: taken as the answer.
        let general = verifier.prepare(item)
        let check = try #require(general.pendingES256Check)
        let claimed = verifier.verify(item, rejected: check)
        #expect(claimed.errors.first?.code == .badSignature)
        // A check of other bytes is no answer for this item: the ECDSA runs, and the item is valid.
        let other = ES256SignatureCheck(key: check.key, signature: check.signature.reversed(), digest: check.digest)
        #expect(verifier.verify(item, rejected: other).verdict == .valid)
        // A real forgery: one bad-signature record either way.
        let forged = InputItem(source: "-", line: 1, content: .bytes(ArraySlice(FixtureManifest.forged(body).utf8)))
        var forgedPrepared = try #require(fastPath.prepare(ArraySlice(FixtureManifest.forged(body).utf8), source: "-", line: 1))
        fastPath.checkSignature(&forgedPrepared)
        let rejected = try #require(fastPath.rejectedCheck(of: forgedPrepared))
        let worded = verifier.verify(forged, rejected: rejected)
        #expect(worded.errors.first?.code == .badSignature)
        #expect(worded.errors == verifier.verify(forged).errors)
    }

    @Test("SKAdNetwork 1.0 and 2.0 forgeries: one S3 record each, checked with the P-192 key's tables",
          arguments: ["1.0", "2.0"])
    func skAdNetworkP192(_ version: String) throws {
        var random = SplitMix64(seed: version == "1.0" ? 10 : 20)
        let lines = (0..<(P192KeyTables.defaultThreshold + 100)).map { index -> String in
            let extra = version == "2.0" ? #","redownload":true,"source-app-id":1234567891,"conversion-value":20"# : ""
            return #"{"version":""# + version + #"","ad-network-id":"example123.skadnetwork","campaign-id":42,"#
                + #""transaction-id":"00000000-0000-4000-8000-"# + String(format: "%012d", index)
                + #"","app-id":525463029"# + extra + #","attribution-signature":""#
                + Self.derSignature(&random) + #""}"#
        }
        let run = try Self.measure(lines, jobs: 1)
        #expect(run.records.count == lines.count)
        #expect(run.records.allSatisfy { $0.contains(#""code":"bad-signature","rule":"S3""#) })
        // In the library, the same forgeries leave Apple's P-192 key with its tables.
        let verifier = AttributionVerifier(keyRing: KeyRing())
        let results = verifier.verify(batch: lines.map { Array($0.utf8) })
        #expect(results.allSatisfy { $0.errors.first?.rule == .s3 })
        #expect(P192KeyTables.shared.table(forPoint: SKAdNetworkKeys.apple.p192.key.uncompressedPoint) != nil)
    }

    @Test("""
        SKAdNetwork 2.2's second order, as R + (u1' − u1)·G, agrees with EVP_PKEY_verify (without tables, with \
        tables and sums sharing inversions, with tables and too few signatures to share them)
        """, arguments: [(false, 600), (true, 600), (true, 24)])
    func alternativeDigest(_ withTables: Bool, _ count: Int) throws {
        let tables = P256KeyTables(threshold: withTables ? 0 : .max, maximumTables: 1000)
        let verifier = try #require(P256BatchVerifier(tables: tables))
        let signers = try (0..<3).map { _ in try ReferenceSigner() }
        var random = SplitMix64(seed: withTables ? 22 : 21)
        var checks: [ES256SignatureCheck] = []
        var alternatives: [SHA256Digest?] = []
        var expected: [(Bool, Bool?)] = []
        for index in 0..<count {
            let signer = signers[index % 3]
            let first = SHA256Digest(of: withUnsafeBytes(of: random.next()) { Array($0) })
            let second = SHA256Digest(of: withUnsafeBytes(of: random.next()) { Array($0) })
            var signature: [UInt8]
            switch random.next() % 5 {
            case 0: signature = signer.sign(first)  // the first order holds
            case 1, 2: signature = signer.sign(second)  // only the alternative holds
            case 3:
                signature = signer.sign(second)
                signature[Int(random.next() % 64)] ^= 0x10  // neither
            default: signature = signers[(index + 1) % 3].sign(second)  // another key's
            }
            let alternative: SHA256Digest? = random.next() % 4 == 0 ? nil : second
            let check = ES256SignatureCheck(key: signer.publicKey, signature: signature, digest: first)
            let firstValid = signer.publicKey.isValidES256Signature(signature, digest: first)
            checks.append(check)
            alternatives.append(alternative)
            expected.append((firstValid, alternative.map {
                !firstValid && signer.publicKey.isValidES256Signature(signature, digest: $0)
            }))
        }
        let answers = verifier.verify(checks, orElse: alternatives)
        try #require(answers.count == expected.count)
        var mismatches = 0
        for (answer, wanted) in zip(answers, expected) {
            let alternativeMatters = !wanted.0
            if answer.first != wanted.0 || (alternativeMatters && answer.alternative != wanted.1) { mismatches += 1 }
        }
        #expect(mismatches == 0)
        #expect(expected.filter { $0.1 == true }.count > count / 8)
        #expect(withTables == (verifier.tableChecks > 0))
    }

    /// A strict DER ECDSA-Sig-Value of two random 24-byte integers below P-192's n, base64.
    static func derSignature(_ random: inout SplitMix64) -> String {
        func integer() -> [UInt8] {
            var bytes = (0..<24).map { _ in UInt8.random(in: 0...255, using: &random) }
            bytes[0] = bytes[0] & 0x7F | 0x01  // below n, positive, minimal
            return [0x02, 24] + bytes
        }
        let body = integer() + integer()
        return Base64.encode([0x30, UInt8(body.count)] + body)
    }

    // MARK: - The parse budget itself

    @Test("A JSON text over its value budget is one malformed-input finding naming the budget; honest texts fit")
    func budget() throws {
        let budget = StrictJSONParser.ValueBudget.verifier
        #expect(budget.limit(forTextBytes: 16 * 1024) == 64 + 1024)
        let flat = "[" + Array(repeating: "0", count: 63).joined(separator: ",") + "]"  // 64 values, 127 bytes
        #expect(budget.limit(forTextBytes: flat.utf8.count) == 71)
        _ = try StrictJSONParser.parse(Array(flat.utf8))
        let over = "[" + Array(repeating: "0", count: 80).joined(separator: ",") + "]"  // 81 values, 161 bytes
        let error = #expect(throws: AttributionError.self) { try StrictJSONParser.parse(Array(over.utf8)) }
        #expect(error?.code == .malformedInput && error?.rule == .j1)
        #expect(error?.reason.contains("more than 74 JSON values") == true)
        // Without a budget (grammar only), the same text parses.
        _ = try StrictJSONParser.parse(Array(over.utf8), options: .init(valueBudget: nil))
        // Apple's example body and its payload use a small part of theirs.
        let body = try Self.honest(1)[0]
        #expect(try StrictJSONParser.parse(Array(body.utf8)).objectValue?.members.count == 3)
    }
}
