import Foundation
import Testing

@testable import Attribution

/// The sampled re-check of the fast signature arithmetic through libcrypto (``SignatureCrossCheck``): at an
/// interval of 1 every acceptance is verified again and agrees; an injected fault of the fast path (its answers
/// inverted, so forgeries are accepted) makes each such item invalid and is counted process-wide.
///
/// Each test changes only its own thread's cross-check and puts it back: the tests are synchronous, so they run on
/// one thread from start to end, and tests running beside them are not affected. Serialized: the injected faults
/// grow the process-wide count, which this suite's tests read before and after.
@Suite("Sampled re-check of the fast signature arithmetic through libcrypto", .serialized)
struct SignatureCrossCheckTests {
    /// The curves whose fast paths are re-checked.
    enum FastPath: String, CaseIterable, CustomTestStringConvertible {
        /// ``P256BatchVerifier`` through ``ECPublicKey/areValidES256Signatures(_:orElse:)``.
        case p256Batch = "P-256 batch"
        /// ``P192KeyTable`` through ``ECPublicKey/isValidDERSignature(_:sha256Over:p192Tables:)``.
        case p192Table = "P-192 table"

        var testDescription: String { rawValue }
    }

    /// This thread's cross-check, set to `interval` and `inverting` while `body` runs.
    static func withCrossCheck<Result>(
        interval: Int, inverting: Bool = false, _ body: (SignatureCrossCheck) throws -> Result
    ) throws -> Result {
        let crossCheck = try #require(ThreadVerificationContexts.current?.crossCheck)
        let (savedInterval, savedInverting) = (crossCheck.interval, crossCheck.invertsFastAnswers)
        crossCheck.interval = interval
        crossCheck.invertsFastAnswers = inverting
        defer { (crossCheck.interval, crossCheck.invertsFastAnswers) = (savedInterval, savedInverting) }
        return try body(crossCheck)
    }

    /// `count` seeded messages, each signed under one of two keys; about a third of the signatures are then
    /// broken (another message, another key, a flipped bit), so both answers occur.
    struct Corpus {
        let signers: [ReferenceSigner]
        /// Message, the index of the key it is checked under, the DER signature.
        var items: [(message: [UInt8], key: Int, der: [UInt8])] = []

        init(curve: ECPublicKey.Curve, count: Int, generator: inout SplitMix64) throws {
            signers = try (0..<2).map { _ in try ReferenceSigner(curve: curve) }
            for _ in 0..<count {
                let message = withUnsafeBytes(of: generator.next()) { Array($0) }
                let signer = Int(generator.next() % 2)
                var der = signers[signer].signDER(SHA256Digest(of: message))
                var key = signer
                switch generator.next() % 6 {
                case 0: key = 1 - signer
                case 1: der[der.count - 3] ^= 0x04
                default: break
                }
                items.append((message, key, der))
            }
        }

        /// libcrypto's answer for every item.
        var evpAnswers: [Bool] {
            items.map { item in
                item.der.withUnsafeBytes { der in
                    item.message.withUnsafeBytes { signers[item.key].publicKey.evpKey.isValidSHA256Signature(
                        der: der, over: $0) }
                }
            }
        }

        /// The fast path's answers (after the cross-check) for every item.
        func fastAnswers(_ path: FastPath) -> [Bool] {
            switch path {
            case .p256Batch:
                let checks = items.map { item in
                    ES256SignatureCheck(key: signers[item.key].publicKey,
                                        signature: P1363Signature.raw(fromStrictDER: item.der) ?? [],
                                        digest: SHA256Digest(of: item.message))
                }
                return ECPublicKey.areValidES256Signatures(checks)
            case .p192Table:
                // A registry of its own that builds the table on the first signature, so every check uses it.
                let tables = P192KeyTables(threshold: 0)
                return items.map { signers[$0.key].publicKey.isValidDERSignature($0.der, sha256Over: $0.message,
                                                                                   p192Tables: tables) }
            }
        }
    }

    static func curve(of path: FastPath) -> ECPublicKey.Curve {
        path == .p256Batch ? .p256 : .p192
    }

    @Test("At an interval of 1 every acceptance is re-checked through libcrypto and agrees",
          arguments: FastPath.allCases)
    func everyAcceptanceAgrees(path: FastPath) throws {
        var generator = TestSeed.generator(for: "everyAcceptanceAgrees(\(path.rawValue))")
        let corpus = try Corpus(curve: Self.curve(of: path), count: 200, generator: &generator)
        let expected = corpus.evpAnswers
        let disagreementsBefore = SignatureCrossCheck.disagreements
        let (answers, rechecked) = try Self.withCrossCheck(interval: 1) { crossCheck in
            let before = crossCheck.recheckCount
            let answers = corpus.fastAnswers(path)
            return (answers, crossCheck.recheckCount - before)
        }
        #expect(answers == expected)
        #expect(rechecked == expected.filter { $0 }.count, "every acceptance re-checked")
        #expect(expected.filter { $0 }.count > 100 && expected.contains(false))
        #expect(SignatureCrossCheck.disagreements == disagreementsBefore)
    }

    @Test("Apple's SKAdNetwork P-256 example and the fast path's acceptances agree with libcrypto at interval 1")
    func appleExample() throws {
        let key = try ECPublicKey(derRepresentation: AppleKeys.productionDER)
        let fields = ["2.1", "com.example", "42", "525463029", "6aafb7a5-0170-41b5-bbe4-fe71dedf1e28", "true",
                      "1234567891"]
        let message = Array(fields.joined(separator: "\u{2063}").utf8)
        let der = [UInt8](try #require(Data(base64Encoded:
            "MEUCID6rbq3qt4GvFaAaynh5/LAcvn1d8CQTRhrZhLIxLKntAiEAo7IrvoMw6u2qDg6Tr5vIsEHXjlLkPlCOL0ojJcEh3Qw=")))
        let raw = try #require(P1363Signature.raw(fromStrictDER: der))
        let check = ES256SignatureCheck(key: key, signature: raw, digest: SHA256Digest(of: message))
        let other = ES256SignatureCheck(key: key, signature: raw, digest: SHA256Digest(of: message.dropLast()))
        let disagreementsBefore = SignatureCrossCheck.disagreements
        let (answers, rechecked) = try Self.withCrossCheck(interval: 1) { crossCheck in
            let before = crossCheck.recheckCount
            let answers = ECPublicKey.areValidES256Signatures([check, other, check])
            return (answers, crossCheck.recheckCount - before)
        }
        #expect(answers == [true, false, true])
        #expect(rechecked == 2)
        #expect(SignatureCrossCheck.disagreements == disagreementsBefore)
    }

    @Test("An injected fault (forgeries accepted by the fast path) makes each item invalid and is counted",
          arguments: FastPath.allCases)
    func injectedDisagreement(path: FastPath) throws {
        var generator = TestSeed.generator(for: "injectedDisagreement(\(path.rawValue))")
        let corpus = try Corpus(curve: Self.curve(of: path), count: 60, generator: &generator)
        let expected = corpus.evpAnswers
        let forgeries = expected.filter { !$0 }.count
        let disagreementsBefore = ECPublicKey.signatureDisagreements
        let answers = try Self.withCrossCheck(interval: 1, inverting: true) { _ in corpus.fastAnswers(path) }
        // Inverted, every genuine signature is rejected (not re-checked) and every forgery accepted, then refused
        // by libcrypto: nothing is valid.
        #expect(answers == Array(repeating: false, count: corpus.items.count))
        #expect(forgeries > 5)
        // Other tests running beside this one cause no disagreement: the count grows by exactly these.
        #expect(ECPublicKey.signatureDisagreements - disagreementsBefore == forgeries)
    }

    @Test("An injected fault on a 2.2 postback's first digest makes the alternative invalid too")
    func injectedDisagreementWithAlternative() throws {
        let signer = try ReferenceSigner()
        let first = SHA256Digest(of: Array("2.2 order".utf8))
        let alternative = SHA256Digest(of: Array("2.1 order".utf8))
        // Signed over the alternative: the first digest fails, the inversion makes it an acceptance libcrypto
        // refuses, and the item must not then pass through its alternative.
        let check = ES256SignatureCheck(key: signer.publicKey, signature: signer.sign(alternative), digest: first)
        let disagreementsBefore = SignatureCrossCheck.disagreements
        let answers = try Self.withCrossCheck(interval: 1, inverting: true) { _ in
            ECPublicKey.areValidES256Signatures([check, check], orElse: [alternative, alternative])
        }
        #expect(answers.map(\.first) == [false, false])
        #expect(answers.map(\.alternative) == [false, false])
        #expect(SignatureCrossCheck.disagreements - disagreementsBefore == 2)
    }

    @Test("At the default interval exactly one acceptance in 1,024 is re-checked, from a random phase")
    func samplingInterval() {
        let crossCheck = SignatureCrossCheck()
        #expect(crossCheck.interval == 1024)
        var rechecked: [Int] = []
        for index in 0..<4096 {
            let outcome = crossCheck.outcome(of: true, curve: "P-256") {
                rechecked.append(index)
                return true
            }
            #expect(outcome == .accepted)
        }
        #expect(rechecked.count == 4)
        #expect(zip(rechecked, rechecked.dropFirst()).allSatisfy { $1 - $0 == 1024 })
        #expect((0..<1024).contains(rechecked.first ?? -1))
        // Rejections are not re-checked and do not advance the count.
        let rejected = crossCheck.outcome(of: false, curve: "P-256") {
            Issue.record("a rejection was re-checked")
            return false
        }
        #expect(rejected == .rejected)
    }

    @Test("Threads start at different phases: 64 cross-checks do not all re-check the same acceptance")
    func randomPhase() {
        let firsts = (0..<64).map { _ in
            let crossCheck = SignatureCrossCheck()
            var first = -1
            for index in 0..<1024 where first < 0 {
                _ = crossCheck.outcome(of: true, curve: "P-256") {
                    first = index
                    return true
                }
            }
            return first
        }
        #expect(Set(firsts).count > 1)
    }
}

/// The command line's side of a disagreement: the item's record says `bad-signature`, standard error asks for a
/// report, and the run ends with exit status 3. The debug binary's fast path is inverted for the run
/// (`POSTBACK_VERIFY_TEST_INVERT_FAST_SIGNATURES`, debug builds only), so the forged bodies are the acceptances
/// libcrypto refuses.
@Suite("A signature disagreement through the command line")
struct SignatureDisagreementCommandLineTests {
    @Test("Forged bodies accepted by an inverted fast path: bad-signature records, the message, exit status 3")
    func exitStatus3() throws {
        let signer = try TestPostbackSigner()
        let bodies = try signer.bodies(count: 8, seed: 34)
        func token(_ body: String) throws -> Substring {
            let start = try #require(body.range(of: #""jws-string":""#)).upperBound
            return body[start...].prefix { $0 != "\"" }
        }
        // Each odd body's signing input with the next body's signature: a forgery under the trusted key.
        var lines = bodies
        for index in stride(from: 1, to: bodies.count - 1, by: 2) {
            let own = try token(bodies[index]), other = try token(bodies[index + 1])
            let forged = own.split(separator: ".").prefix(2).joined(separator: ".") + "."
                + other.split(separator: ".")[2]
            lines[index] = bodies[index].replacingOccurrences(of: String(own), with: forged)
        }
        let arguments = ["--format", "jsonl"] + TestPostbackSigner.keyArguments
        let normal = try CommandLineTests.run(arguments, stdin: lines.joined(separator: "\n") + "\n")
        #expect(normal.status == 1, "the forgeries are invalid, nothing disagrees: \(normal.stderr)")
        #expect(!normal.stderr.contains("disagreed"))

        let run = try CommandLineTests.run(arguments, stdin: lines.joined(separator: "\n") + "\n",
                                           environment: ["POSTBACK_VERIFY_TEST_INVERT_FAST_SIGNATURES": "1"])
        #expect(run.status == 3, "\(run.stderr)")
        let message = "postback-verify: the signature arithmetic disagreed with libcrypto on an item; it was "
            + "reported invalid. Please report this: "
        #expect(run.stderr.components(separatedBy: message).count - 1 == 3, "one line per forgery: \(run.stderr)")
        let records = run.stdout.split(separator: "\n")
        #expect(records.count == bodies.count)
        #expect(records.allSatisfy { $0.contains(#""bad-signature""#) }, "\(run.stdout)")

        // Regression: a run whose standard output also failed returned 2 before it looked at the disagreements,
        // which the README, docs/cli.md and --help say come first.
        let process = Process()
        process.executableURL = try CommandLineTests.binary()
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment
            .merging(["POSTBACK_VERIFY_TEST_INVERT_FAST_SIGNATURES": "1"]) { $1 }
        process.currentDirectoryURL = TestPaths.packageRoot
        let input = Pipe(), error = Pipe()
        process.standardInput = input
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: "/dev/full"))
        process.standardError = error
        try process.run()
        input.fileHandleForWriting.write(Data((lines.joined(separator: "\n") + "\n").utf8))
        try input.fileHandleForWriting.close()
        let stderr = String(decoding: error.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(stderr.contains("cannot write standard output"), "\(stderr)")
        #expect(process.terminationStatus == 3, "a disagreement outranks the write failure: \(stderr)")
    }
}
