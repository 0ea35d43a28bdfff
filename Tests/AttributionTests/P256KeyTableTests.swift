import CAttributionOpenSSL
import Foundation
import Testing

@_spi(CommandLine) @_spi(Servers) @_spi(Stores) @testable import Attribution

/// The fixed-key path of ``P256BatchVerifier``: u1·G and u2·Q each from a table of multiples (``P256KeyTable``),
/// then added. Every expected answer comes from Wycheproof's labels or from `EVP_PKEY_verify`
/// (``ECPublicKey/isValidES256Signature(_:digest:)``), never from the verifier under test; each test also checks
/// that the signatures went through tables, so a silent fallback to the generic multiplication cannot pass.
@Suite("Fixed-key tables of multiples")
struct P256KeyTableTests {
    /// A verifier whose every key gets its table on its first signature.
    static func tableVerifier() throws -> (P256BatchVerifier, P256KeyTables) {
        let tables = P256KeyTables(threshold: 0, maximumTables: 1000)
        return (try #require(P256BatchVerifier(tables: tables)), tables)
    }

    /// Whether tables are built (they are computed on fixed-size limbs, with libcrypto only giving G, so with any
    /// libcrypto); the tests that need them would be skipped without, as the verifier then keeps the generic
    /// multiplication.
    static let tablesSupported: Bool = {
        guard let signer = try? ReferenceSigner() else { return false }
        return P256KeyTable(uncompressedPoint: Array(signer.publicKey.derRepresentation.suffix(65))) != nil
    }()

    @Test("Tables are built, for G and for a key (else every test below is skipped)")
    func tablesAreAvailable() {
        #expect(Self.tablesSupported)
        #expect(P256KeyTable.generator != nil)
    }

    @Test("Wycheproof's P1363 vectors, each key fixed: every vector alone gets its label through tables",
          .enabled(if: tablesSupported))
    func wycheproofEachAlone() throws {
        let (verifier, tables) = try Self.tableVerifier()
        let cases = try WycheproofECDSATests.loadCases()
        #expect(cases.count == 262)
        for vector in cases {
            let answer = verifier.verify([try WycheproofECDSATests.check(vector)])
            #expect(answer == [vector.isValid], "tcId \(vector.tcId) (\(vector.comment))")
        }
        // Every valid vector reached the multiplication, so went through its key's table.
        #expect(verifier.tableChecks >= 173)
        for vector in cases where vector.isValid {
            #expect(tables.existingTable(forPoint: Array(vector.publicKeyDER.suffix(65))) != nil)
        }
    }

    @Test("Wycheproof's P1363 vectors, each key fixed: all in one shuffled batch, twice over",
          .enabled(if: tablesSupported))
    func wycheproofInOneBatch() throws {
        let (verifier, _) = try Self.tableVerifier()
        var cases = try WycheproofECDSATests.loadCases() + WycheproofECDSATests.loadCases()
        var generator = SplitMix64(seed: 0x7AB1E5)
        cases.shuffle(using: &generator)
        let answers = verifier.verify(try cases.map(WycheproofECDSATests.check))
        for (vector, answer) in zip(cases, answers) where answer != vector.isValid {
            Issue.record("tcId \(vector.tcId) (\(vector.comment)): tables say \(answer)")
        }
        #expect(answers.filter { $0 }.count == 2 * 173)
        #expect(verifier.tableChecks >= 2 * 173)
    }

    /// x(R) ≥ n, so r = x(R) − n and the x check needs r + n < p: the one valid case of its kind, and its
    /// neighbours (r replaced by r + n, r too large).
    @Test("Wycheproof's large-x and r + n vectors through tables",
          .enabled(if: tablesSupported), arguments: try WycheproofECDSATests.loadCases().filter {
              $0.comment.contains("large x-coordinate") || $0.comment.contains("r too large")
                  || $0.comment.contains("replaced r by r + n")
          })
    func largeX(_ vector: WycheproofECDSATests.VectorCase) throws {
        let (verifier, _) = try Self.tableVerifier()
        #expect(verifier.verify([try WycheproofECDSATests.check(vector)]) == [vector.isValid])
        if vector.isValid { #expect(verifier.tableChecks == 1) }
    }

    @Test("Every one-bit change of valid signatures (Wycheproof's and EVP-made): tables agree with EVP_PKEY_verify",
          .enabled(if: tablesSupported))
    func bitFlips() throws {
        let (verifier, _) = try Self.tableVerifier()
        var originals: [(ECPublicKey, SHA256Digest, [UInt8])] = try WycheproofECDSATests.loadCases()
            .filter(\.isValid).prefix(6).map {
                (try ECPublicKey(derRepresentation: $0.publicKeyDER), SHA256Digest(of: $0.message), $0.signature)
            }
        for index in 0..<2 {
            let signer = try ReferenceSigner()
            let digest = SHA256Digest(of: Array("bit flips \(index)".utf8))
            originals.append((signer.publicKey, digest, signer.sign(digest)))
        }
        var checks: [ES256SignatureCheck] = []
        for (key, digest, signature) in originals {
            checks.append(ES256SignatureCheck(key: key, signature: signature, digest: digest))
            for bit in 0..<(8 * 64) {
                var flipped = signature
                flipped[bit / 8] ^= 1 << (bit % 8)
                checks.append(ES256SignatureCheck(key: key, signature: flipped, digest: digest))
            }
        }
        let expected = checks.map { $0.key.isValidES256Signature($0.signature, digest: $0.digest) }
        #expect(verifier.verify(checks) == expected)
        #expect(expected.filter { $0 }.count == originals.count)
        #expect(verifier.tableChecks >= checks.count / 2)
    }

    /// `P256_TABLE_RANDOM_CHECKS` sets the count (default 20,000, a few seconds in a debug build).
    static let randomCount = ProcessInfo.processInfo.environment["P256_TABLE_RANDOM_CHECKS"].flatMap { Int($0) }
        ?? 20_000

    @Test("Random valid and invalid signatures under several keys: tables agree with EVP_PKEY_verify",
          .enabled(if: tablesSupported))
    func randomSignatures() throws {
        let (verifier, _) = try Self.tableVerifier()
        let signers = try (0..<4).map { _ in try ReferenceSigner() }
        var generator = SplitMix64(seed: 0xEC_D5A)
        var checks: [ES256SignatureCheck] = []
        var valid = 0
        var disagreements = 0
        func run() {
            let expected = checks.map { $0.key.isValidES256Signature($0.signature, digest: $0.digest) }
            let answers = verifier.verify(checks)
            for (index, answer) in answers.enumerated() where answer != expected[index] {
                disagreements += 1
                Issue.record("\(checks[index].signature) under \(checks[index].key.derRepresentation): \(answer)")
            }
            valid += expected.filter { $0 }.count
            checks.removeAll(keepingCapacity: true)
        }
        for index in 0..<Self.randomCount {
            let signer = signers[Int(generator.next() % 4)]
            let digest = SHA256Digest(of: withUnsafeBytes(of: generator.next()) { Array($0) })
            var key = signer.publicKey
            var signature = signer.sign(digest)
            var checkedDigest = digest
            switch generator.next() % 8 {
            case 0, 1, 2, 3:
                break
            case 4:
                key = signers[(signers.firstIndex { $0 === signer }! + 1) % 4].publicKey
            case 5:
                checkedDigest = SHA256Digest(of: withUnsafeBytes(of: generator.next()) { Array($0) })
            case 6:
                signature[Int(generator.next() % 64)] ^= UInt8(truncatingIfNeeded: generator.next() | 1)
            default:
                signature = (0..<64).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
            }
            checks.append(ES256SignatureCheck(key: key, signature: signature, digest: checkedDigest))
            // Batches of varying length, some across the verifier's chunk size.
            if checks.count == 1 + Int(index % 300) { run() }
        }
        run()
        #expect(disagreements == 0)
        #expect(valid >= Self.randomCount / 2 - Self.randomCount / 20)
        #expect(verifier.tableChecks >= valid)
    }

    @Test("ECDSA's edge cases made with known private keys (Tests/make-ecdsa-edge-cases.py): tables agree with EVP",
          .enabled(if: tablesSupported), arguments: Self.edgeCases)
    func edgeCase(_ edge: EdgeCase) throws {
        let key = try ECPublicKey(derRepresentation: edge.keyDER)
        let digest = try #require(SHA256Digest(digestBytes: edge.digest))
        let signature = edge.signature
        let evp = key.isValidES256Signature(signature, digest: digest)
        #expect(evp == edge.isValid, "EVP_PKEY_verify and the construction disagree")
        let (verifier, _) = try Self.tableVerifier()
        let check = ES256SignatureCheck(key: key, signature: signature, digest: digest)
        #expect(verifier.verify([check]) == [evp])
        // In a batch too, between two valid signatures of another key.
        let signer = try ReferenceSigner()
        let other = SHA256Digest(of: Array("filler".utf8))
        let filler = ES256SignatureCheck(key: signer.publicKey, signature: signer.sign(other), digest: other)
        #expect(verifier.verify([filler, check, filler]) == [true, evp, true])
        // r and s in range reach the multiplication (twice: alone and in the batch), as do the two fillers.
        #expect(verifier.tableChecks == 2 + (edge.name.hasPrefix("r = n") || edge.name.hasPrefix("s = n") ? 0 : 2))
    }

    @Test("Every edge case in one batch long enough for shared inversions, among valid fillers: tables agree with EVP",
          .enabled(if: tablesSupported))
    func edgeCasesSharingInversions() throws {
        let (verifier, _) = try Self.tableVerifier()
        let signer = try ReferenceSigner()
        let fillers = (0..<P256BatchVerifier.minimumSharedInversions).map { index in
            let digest = SHA256Digest(of: Array("filler \(index)".utf8))
            return ES256SignatureCheck(key: signer.publicKey, signature: signer.sign(digest), digest: digest)
        }
        var checks = fillers
        var expected = [Bool](repeating: true, count: fillers.count)
        for edge in Self.edgeCases {
            let key = try ECPublicKey(derRepresentation: edge.keyDER)
            let digest = try #require(SHA256Digest(digestBytes: edge.digest))
            let check = ES256SignatureCheck(key: key, signature: edge.signature, digest: digest)
            checks.insert(check, at: checks.count / 2)
            expected.insert(key.isValidES256Signature(edge.signature, digest: digest), at: expected.count / 2)
        }
        #expect(verifier.verify(checks) == expected)
        #expect(verifier.tableChecks >= fillers.count + Self.edgeCases.count / 2)
    }

    @Test("A key gets its table only once it has verified the threshold's count of signatures, then keeps it",
          .enabled(if: tablesSupported))
    func lazyThreshold() throws {
        let tables = P256KeyTables(threshold: 10)
        let verifier = try #require(P256BatchVerifier(tables: tables))
        let signer = try ReferenceSigner()
        let point = Array(signer.publicKey.derRepresentation.suffix(65))
        let checks = (0..<4).map { index in
            let digest = SHA256Digest(of: Array("lazy \(index)".utf8))
            return ES256SignatureCheck(key: signer.publicKey, signature: signer.sign(digest), digest: digest)
        }
        #expect(verifier.verify(checks) == [true, true, true, true])
        #expect(verifier.verify(checks) == [true, true, true, true])
        #expect(tables.existingTable(forPoint: point) == nil)
        #expect(verifier.tableChecks == 0)
        #expect(verifier.verify(checks) == [true, true, true, true])
        let table = try #require(tables.existingTable(forPoint: point))
        #expect(verifier.tableChecks == 4)
        #expect(verifier.verify(checks) == [true, true, true, true])
        #expect(tables.existingTable(forPoint: point) === table)
        #expect(verifier.tableChecks == 8)
    }

    @Test("A run expecting the threshold's count of signatures starts G's table at once; a smaller one does not",
          .enabled(if: tablesSupported))
    func anticipatedRunsStartTheGeneratorTable() throws {
        let few = P256KeyTables(threshold: 100)
        few.anticipate(signatures: 99)
        #expect(!few.hasStartedGenerator)
        let many = P256KeyTables(threshold: 100)
        many.anticipate(signatures: 100)
        #expect(many.hasStartedGenerator)
        // Anticipating G's table takes nothing from a key's: at the threshold the key still gets its own.
        let signer = try ReferenceSigner()
        let point = Array(signer.publicKey.derRepresentation.suffix(65))
        #expect(many.table(forPoint: point, adding: 99) == nil)
        #expect(many.table(forPoint: point, adding: 1) != nil)
    }

    @Test("Regression: another busy thread lowers the count a key must reach by what it checks during one build",
          .enabled(if: tablesSupported))
    func busyThreadsLowerTheThreshold() throws {
        // --jobs 2 checked about twice as many signatures without a table as --jobs 1: the second worker went on
        // without it while the first built it, on top of the whole threshold.
        let signer = try ReferenceSigner()
        let point = Array(signer.publicKey.derRepresentation.suffix(65))
        let threshold = P256KeyTables.signaturesPerBuild + 100
        // One busy thread (the caller): the whole threshold.
        let alone = P256KeyTables(threshold: threshold, cores: 2)
        alone.beginCheckingWithoutTable()
        #expect(alone.table(forPoint: point, adding: 100) == nil)
        #expect(alone.table(forPoint: point, adding: threshold - 101) == nil)
        #expect(alone.table(forPoint: point, adding: 1) != nil)
        alone.endCheckingWithoutTable()
        // Two busy threads on two cores: built once the count reaches threshold - signaturesPerBuild.
        let two = P256KeyTables(threshold: threshold, cores: 2)
        two.beginCheckingWithoutTable()
        two.beginCheckingWithoutTable()
        #expect(two.table(forPoint: point, adding: 99) == nil)
        #expect(two.table(forPoint: point, adding: 1) != nil)
        two.endCheckingWithoutTable()
        two.endCheckingWithoutTable()
        // More busy threads than cores: the others beyond the cores check nothing meanwhile.
        let crowded = P256KeyTables(threshold: threshold, cores: 1)
        (0..<4).forEach { _ in crowded.beginCheckingWithoutTable() }
        #expect(crowded.table(forPoint: point, adding: threshold - 1) == nil)
        #expect(crowded.table(forPoint: point, adding: 1) != nil)
    }

    @Test("Items read ahead count: a key gets its table on its first chunk when its share of them reaches the threshold",
          .enabled(if: tablesSupported))
    func announcedItemsBuildTablesEarly() throws {
        let signers = try (0..<2).map { _ in try ReferenceSigner() }
        let (major, minor) = (Array(signers[0].publicKey.derRepresentation.suffix(65)),
                              Array(signers[1].publicKey.derRepresentation.suffix(65)))
        // Nothing read ahead (a live stream, one item): the whole threshold, as before.
        let live = P256KeyTables(threshold: 100, cores: 1)
        live.noteChecked(64)
        #expect(live.table(forPoint: major, adding: 64) == nil)
        // 1,000 items read, 100 of them being checked: 90 under one key, 10 under another. The first key's share of
        // the 900 to come (810) reaches the threshold; the second's (90, with its own 10: 100) too, just; a key with
        // 5 of 100 does not (5 + 45 = 50).
        let ahead = P256KeyTables(threshold: 100, cores: 1)
        ahead.announce(1000)
        ahead.noteChecked(100)
        #expect(ahead.table(forPoint: major, adding: 90) != nil)
        #expect(ahead.table(forPoint: minor, adding: 10) != nil)
        let third = try ReferenceSigner()
        let small = P256KeyTables(threshold: 100, cores: 1)
        small.announce(1000)
        small.noteChecked(100)
        #expect(small.table(forPoint: Array(third.publicKey.derRepresentation.suffix(65)), adding: 5) == nil)
        // Once the items read were checked, nothing is ahead: a new key starts from its own count again.
        let caughtUp = P256KeyTables(threshold: 100, cores: 1)
        caughtUp.announce(1000)
        caughtUp.noteChecked(1000)
        #expect(caughtUp.table(forPoint: minor, adding: 10) == nil)
        // Through the batch verifier: 300 items announced, one chunk of 4 checks, threshold 100: built at once.
        let tables = P256KeyTables(threshold: 100)
        tables.announce(300)
        let verifier = try #require(P256BatchVerifier(tables: tables))
        let checks = (0..<4).map { index in
            let digest = SHA256Digest(of: Array("ahead \(index)".utf8))
            return ES256SignatureCheck(key: signers[0].publicKey, signature: signers[0].sign(digest), digest: digest)
        }
        #expect(verifier.verify(checks) == [true, true, true, true])
        #expect(tables.existingTable(forPoint: major) != nil)
        #expect(verifier.tableChecks == 4)
    }

    @Test("Two values of one key (loaded twice, as the SKAdNetwork P-256 key and Apple's key are) share one table",
          .enabled(if: tablesSupported))
    func oneTablePerKey() throws {
        let (verifier, tables) = try Self.tableVerifier()
        let signer = try ReferenceSigner()
        let twin = try ECPublicKey(derRepresentation: signer.publicKey.derRepresentation)
        let digest = SHA256Digest(of: Array("twin".utf8))
        let signature = signer.sign(digest)
        #expect(verifier.verify([ES256SignatureCheck(key: signer.publicKey, signature: signature, digest: digest),
                                 ES256SignatureCheck(key: twin, signature: signature, digest: digest)])
                    == [true, true])
        #expect(verifier.tableChecks == 2)
        #expect(tables.existingTable(forPoint: Array(twin.derRepresentation.suffix(65))) != nil)
    }

    @Test("Threads share one lazily built table per key and all agree with EVP_PKEY_verify (run under TSan in CI)",
          .enabled(if: tablesSupported))
    func threadsShareTables() async throws {
        let tables = P256KeyTables(threshold: 40)
        let signers = try (0..<2).map { _ in try ReferenceSigner() }
        let checks = (0..<120).map { index in
            let signer = signers[index % 2]
            let digest = SHA256Digest(of: Array("threads \(index)".utf8))
            var signature = signer.sign(digest)
            if index % 5 == 0 { signature[7] ^= 0x10 }
            return ES256SignatureCheck(key: signer.publicKey, signature: signature, digest: digest)
        }
        let expected = checks.map { $0.key.isValidES256Signature($0.signature, digest: $0.digest) }
        let results = await withTaskGroup(of: ([Bool], Int).self) { group in
            for _ in 0..<4 {
                group.addTask {
                    guard let verifier = P256BatchVerifier(tables: tables) else { return ([], 0) }
                    var answers: [Bool] = []
                    for start in stride(from: 0, to: checks.count, by: 8) {
                        answers += verifier.verify(Array(checks[start..<min(start + 8, checks.count)]))
                    }
                    return (answers, verifier.tableChecks)
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        for (answers, _) in results { #expect(answers == expected) }
        #expect(results.map(\.1).reduce(0, +) > 0)
        for signer in signers {
            #expect(tables.existingTable(forPoint: Array(signer.publicKey.derRepresentation.suffix(65))) != nil)
        }
    }

    @Test("SKAdNetwork's DER signatures under a key with a table: the same answers as EVP_PKEY_verify",
          .enabled(if: tablesSupported))
    func derSignatures() throws {
        let signer = try ReferenceSigner()
        let key = signer.publicKey
        // This key (fresh, used by no other test) gets its table in the process-wide registry.
        _ = P256KeyTables.shared.table(forPoint: Array(key.derRepresentation.suffix(65)),
                                       adding: P256KeyTables.shared.threshold)
        let verifier = try #require(ThreadVerificationContexts.current?.batchVerifier)
        #expect(verifier.hasTable(for: key))
        let before = verifier.tableChecks
        var checked = 0
        for index in 0..<6 {
            let message = Array("skadnetwork \(index)".utf8)
            let der = signer.signDER(SHA256Digest(of: message))
            var variants = [der, der + [0], Array(der.dropLast())]
            for bit in 0..<(8 * der.count) {
                var flipped = der
                flipped[bit / 8] ^= 1 << (bit % 8)
                variants.append(flipped)
            }
            for variant in variants {
                let evp = variant.withUnsafeBytes { bytes in
                    message.withUnsafeBytes { key.evpKey.isValidSHA256Signature(der: bytes, over: $0) }
                }
                #expect(key.isValidDERSignature(variant, sha256Over: message) == evp)
                checked += evp ? 1 : 0
            }
        }
        #expect(checked >= 6)
        #expect(ThreadVerificationContexts.current!.batchVerifier!.tableChecks > before)
    }
}

extension P256KeyTableTests {
    /// One constructed case: the public point (x, y), the digest and the signature (r, s) in hex, and the label
    /// the construction intends (the test first checks that EVP_PKEY_verify agrees).
    struct EdgeCase: Sendable, CustomTestStringConvertible {
        let name: String
        let keyDER: [UInt8]
        let digest: [UInt8]
        let signature: [UInt8]
        let isValid: Bool

        init(_ name: String, x: String, y: String, digest: String, r: String, s: String, isValid: Bool) {
            self.name = name
            keyDER = ECPublicKey.Curve.p256.subjectPublicKeyInfoPrefix + [0x04]
                + WycheproofECDSATests.hexBytes(x) + WycheproofECDSATests.hexBytes(y)
            self.digest = WycheproofECDSATests.hexBytes(digest)
            signature = WycheproofECDSATests.hexBytes(r) + WycheproofECDSATests.hexBytes(s)
            self.isValid = isValid
        }

        var testDescription: String { name }
    }

    /// Printed by Tests/make-ecdsa-edge-cases.py.
    static let edgeCases: [EdgeCase] = [
        EdgeCase(
            "u1 = 0 (digest 0), key 0",
            x: "8175cb90047e26346e78b072b64fe6619a2893b6be5e0ccd53ac4deb0e8a2d6f",
            y: "c64d61d3c9d432498eb0d6504b841a890be6f1e7df5f5cb08231b7f5601bcd36",
            digest: "0000000000000000000000000000000000000000000000000000000000000000",
            r: "247ea115d5ae8a02b810c09917583435b7b08f520058526d108a2fdea154cd33",
            s: "7dca66b3680346446efa310225e8f3d0fc90b70f271781f5e1317fbb1fd30e43",
            isValid: true),
        EdgeCase(
            "u1 = 0 (digest n), key 0",
            x: "8175cb90047e26346e78b072b64fe6619a2893b6be5e0ccd53ac4deb0e8a2d6f",
            y: "c64d61d3c9d432498eb0d6504b841a890be6f1e7df5f5cb08231b7f5601bcd36",
            digest: "ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551",
            r: "247ea115d5ae8a02b810c09917583435b7b08f520058526d108a2fdea154cd33",
            s: "7dca66b3680346446efa310225e8f3d0fc90b70f271781f5e1317fbb1fd30e43",
            isValid: true),
        EdgeCase(
            "u1·G = u2·Q (R doubled), key 0",
            x: "8175cb90047e26346e78b072b64fe6619a2893b6be5e0ccd53ac4deb0e8a2d6f",
            y: "c64d61d3c9d432498eb0d6504b841a890be6f1e7df5f5cb08231b7f5601bcd36",
            digest: "33ddac3df6d80f54075181c3e9cf7d4f25b5dc450772b85ff3a94fa869f53d8e",
            r: "247ea115d5ae8a02b810c09917583435b7b08f520058526d108a2fdea154cd33",
            s: "fb94cd66d0068c88ddf462044bd1e7a1f9216e1e4e2f03ebc262ff763fa61c86",
            isValid: true),
        EdgeCase(
            "R at infinity (u1·G = -u2·Q), key 0",
            x: "8175cb90047e26346e78b072b64fe6619a2893b6be5e0ccd53ac4deb0e8a2d6f",
            y: "c64d61d3c9d432498eb0d6504b841a890be6f1e7df5f5cb08231b7f5601bcd36",
            digest: "8f29800e3795cc6fd25801cf66a0d731517c0941f55e953dea80e641caa502ff",
            r: "3800d2c6b2310791e2b14490fdba82782a7ce05c3d014f9946d718d773ed86b1",
            s: "b740e836344fca25807f9e8a47fb9ae5b197851c963840f46b38f1c25713b781",
            isValid: false),
        EdgeCase(
            "valid control, key 0",
            x: "8175cb90047e26346e78b072b64fe6619a2893b6be5e0ccd53ac4deb0e8a2d6f",
            y: "c64d61d3c9d432498eb0d6504b841a890be6f1e7df5f5cb08231b7f5601bcd36",
            digest: "e8238c5b6f74e2e9a0894b423aaa848ad3894e521a1f1b01b71f95ed6596676e",
            r: "247ea115d5ae8a02b810c09917583435b7b08f520058526d108a2fdea154cd33",
            s: "04d8159a94c0c13b91813147566c202d51e6836c4fe65006d54ae461bfb60eea",
            isValid: true),
        EdgeCase(
            "r = n, key 0",
            x: "8175cb90047e26346e78b072b64fe6619a2893b6be5e0ccd53ac4deb0e8a2d6f",
            y: "c64d61d3c9d432498eb0d6504b841a890be6f1e7df5f5cb08231b7f5601bcd36",
            digest: "e8238c5b6f74e2e9a0894b423aaa848ad3894e521a1f1b01b71f95ed6596676e",
            r: "ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551",
            s: "04d8159a94c0c13b91813147566c202d51e6836c4fe65006d54ae461bfb60eea",
            isValid: false),
        EdgeCase(
            "s = n, key 0",
            x: "8175cb90047e26346e78b072b64fe6619a2893b6be5e0ccd53ac4deb0e8a2d6f",
            y: "c64d61d3c9d432498eb0d6504b841a890be6f1e7df5f5cb08231b7f5601bcd36",
            digest: "e8238c5b6f74e2e9a0894b423aaa848ad3894e521a1f1b01b71f95ed6596676e",
            r: "247ea115d5ae8a02b810c09917583435b7b08f520058526d108a2fdea154cd33",
            s: "ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551",
            isValid: false),
        EdgeCase(
            "u1 = 0 (digest 0), key 1",
            x: "0346445ff79a98d40662979401d014780deb5f310f70d99a8bad96dc1832fb25",
            y: "67080ae7dc270d9d714edf9751b4e7565f3031d320cbd48e3df894744fb597d6",
            digest: "0000000000000000000000000000000000000000000000000000000000000000",
            r: "d2c462359478413f8d63d37764d8b2f96cc2303f407af93ecd085936a99ce056",
            s: "a3db0f522c6bf22b7c9d9b3cca25189b98ed2ef54fda1e5a585cb0a8857ebd4a",
            isValid: true),
        EdgeCase(
            "u1 = 0 (digest n), key 1",
            x: "0346445ff79a98d40662979401d014780deb5f310f70d99a8bad96dc1832fb25",
            y: "67080ae7dc270d9d714edf9751b4e7565f3031d320cbd48e3df894744fb597d6",
            digest: "ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551",
            r: "d2c462359478413f8d63d37764d8b2f96cc2303f407af93ecd085936a99ce056",
            s: "a3db0f522c6bf22b7c9d9b3cca25189b98ed2ef54fda1e5a585cb0a8857ebd4a",
            isValid: true),
        EdgeCase(
            "u1·G = u2·Q (R doubled), key 1",
            x: "0346445ff79a98d40662979401d014780deb5f310f70d99a8bad96dc1832fb25",
            y: "67080ae7dc270d9d714edf9751b4e7565f3031d320cbd48e3df894744fb597d6",
            digest: "e5e3ba0df9ff2f2dd9f27f906449e71ddd282a4212b38f3d680a8febc75fc6d5",
            r: "d2c462359478413f8d63d37764d8b2f96cc2303f407af93ecd085936a99ce056",
            s: "47b61ea558d7e455f93b3679944a313774f3633cf89c9e2fbcff968e0e9a5543",
            isValid: true),
        EdgeCase(
            "R at infinity (u1·G = -u2·Q), key 1",
            x: "0346445ff79a98d40662979401d014780deb5f310f70d99a8bad96dc1832fb25",
            y: "67080ae7dc270d9d714edf9751b4e7565f3031d320cbd48e3df894744fb597d6",
            digest: "9d033294df10773455c1cb143e007d49f06afe0b9337fa137eb76c8f13ca7cfd",
            r: "c8027e919ce8d90037b7c95de180e391e8a7e0bef089f4f66e8a5195f88f40dc",
            s: "69a3385ef45b0c3d00070f76b2f7327d452087382c8bb7bfaa0a6cf872c067c6",
            isValid: false),
        EdgeCase(
            "valid control, key 1",
            x: "0346445ff79a98d40662979401d014780deb5f310f70d99a8bad96dc1832fb25",
            y: "67080ae7dc270d9d714edf9751b4e7565f3031d320cbd48e3df894744fb597d6",
            digest: "a1aafdb5f2d150f23f537dea6b2a23c7cec4a2197a824f1b35c5c0fa442afe8f",
            r: "d2c462359478413f8d63d37764d8b2f96cc2303f407af93ecd085936a99ce056",
            s: "6a7ab06a9dd2f88e8fc0762aadba5bf89587694c9aac7c06371f38674dac376d",
            isValid: true),
        EdgeCase(
            "r = n, key 1",
            x: "0346445ff79a98d40662979401d014780deb5f310f70d99a8bad96dc1832fb25",
            y: "67080ae7dc270d9d714edf9751b4e7565f3031d320cbd48e3df894744fb597d6",
            digest: "a1aafdb5f2d150f23f537dea6b2a23c7cec4a2197a824f1b35c5c0fa442afe8f",
            r: "ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551",
            s: "6a7ab06a9dd2f88e8fc0762aadba5bf89587694c9aac7c06371f38674dac376d",
            isValid: false),
        EdgeCase(
            "s = n, key 1",
            x: "0346445ff79a98d40662979401d014780deb5f310f70d99a8bad96dc1832fb25",
            y: "67080ae7dc270d9d714edf9751b4e7565f3031d320cbd48e3df894744fb597d6",
            digest: "a1aafdb5f2d150f23f537dea6b2a23c7cec4a2197a824f1b35c5c0fa442afe8f",
            r: "d2c462359478413f8d63d37764d8b2f96cc2303f407af93ecd085936a99ce056",
            s: "ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551",
            isValid: false),
    ]
}
