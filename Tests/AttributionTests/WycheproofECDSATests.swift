import Foundation
import Testing

@_spi(CommandLine) @_spi(Servers) @_spi(Stores) @testable import Attribution

/// Project Wycheproof's ECDSA P-256 / SHA-256 vectors in IEEE P1363 form (raw r‖s, as JWS carries it), run
/// through the same primitive the JWS path uses: ``ECPublicKey/isValidES256Signature(_:for:)``.
@Suite("Wycheproof ECDSA P-256 SHA-256 (P1363)")
struct WycheproofECDSATests {
    static let vectorFile = TestPaths.vector("wycheproof/testvectors_v1/ecdsa_secp256r1_sha256_p1363_test.json")

    /// The order n of the P-256 base point (SEC 2 §2.4.2), big-endian.
    static let p256Order = hexBytes("ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551")

    static func loadCases() throws -> [VectorCase] {
        let file = try JSONDecoder().decode(VectorFile.self, from: Data(contentsOf: vectorFile))
        return file.testGroups.flatMap { group in
            group.tests.map { test in
                VectorCase(
                    tcId: test.tcId, comment: test.comment, publicKeyDER: hexBytes(group.publicKeyDer),
                    message: hexBytes(test.msg), signature: hexBytes(test.sig), isValid: test.result == "valid"
                )
            }
        }
    }

    @Test("Each vector verifies exactly when Wycheproof labels it valid", arguments: try loadCases())
    func vector(_ vector: VectorCase) throws {
        let key = try ECPublicKey(derRepresentation: vector.publicKeyDER)
        #expect(key.isValidES256Signature(vector.signature, for: vector.message) == vector.isValid)
    }

    @Test("Each vector, checked alone by the batch verifier, verifies exactly when labelled valid",
          arguments: try loadCases())
    func vectorInBatchOfOne(_ vector: VectorCase) throws {
        let check = try Self.check(vector)
        // The batch verifier itself: the public entry point sends a lone check to EVP_PKEY_verify.
        let verifier = try #require(ThreadVerificationContexts.current?.batchVerifier)
        #expect(verifier.verify([check]) == [vector.isValid])
    }

    /// All vectors (valid and invalid, several keys) in one batch, twice over and in a shuffled order, so
    /// invalid signatures sit between valid ones and the batch crosses the verifier's chunk size.
    @Test("Every vector in one long mixed batch gets its own label")
    func allVectorsInOneBatch() throws {
        var cases = try Self.loadCases() + Self.loadCases()
        var generator = SplitMix64(seed: 0x5EED)
        cases.shuffle(using: &generator)
        #expect(cases.count > P256BatchVerifier.chunkSize)
        let answers = ECPublicKey.areValidES256Signatures(try cases.map(Self.check))
        #expect(answers.count == cases.count)
        for (vector, answer) in zip(cases, answers) where answer != vector.isValid {
            Issue.record("tcId \(vector.tcId) (\(vector.comment)): batch says \(answer)")
        }
        #expect(answers.filter { $0 }.count == 2 * 173)
    }

    @Test("The batch verifier agrees with EVP_PKEY_verify on every one-bit change of valid signatures")
    func batchMatchesSingleOnFlippedBits() throws {
        let valid = try Self.loadCases().filter(\.isValid).prefix(8)
        var checks: [ES256SignatureCheck] = []
        var expected: [Bool] = []
        for vector in valid {
            let key = try ECPublicKey(derRepresentation: vector.publicKeyDER)
            let digest = SHA256Digest(of: vector.message)
            for bit in 0..<(8 * 64) {
                var signature = vector.signature
                signature[bit / 8] ^= 1 << (bit % 8)
                checks.append(ES256SignatureCheck(key: key, signature: signature, digest: digest))
                expected.append(key.isValidES256Signature(signature, digest: digest))
            }
            checks.append(ES256SignatureCheck(key: key, signature: vector.signature, digest: digest))
            expected.append(true)
        }
        #expect(ECPublicKey.areValidES256Signatures(checks) == expected)
        #expect(expected.filter { $0 }.count == valid.count)
    }

    static func check(_ vector: VectorCase) throws -> ES256SignatureCheck {
        ES256SignatureCheck(key: try ECPublicKey(derRepresentation: vector.publicKeyDER), signature: vector.signature,
                            digest: SHA256Digest(of: vector.message))
    }

    @Test("The file has 262 vectors: 173 valid, 89 invalid, and 70 valid ones with high S")
    func summary() throws {
        let cases = try Self.loadCases()
        let valid = cases.filter(\.isValid)
        let halfOrder = Self.halved(Self.p256Order)
        let highS = valid.filter { vector in
            vector.signature.count == 64 && Self.isGreater(Array(vector.signature[32...]), than: halfOrder)
        }
        #expect(cases.count == 262)
        #expect(valid.count == 173)
        #expect(cases.count - valid.count == 89)
        // A verifier that enforced low S (as Bitcoin does) would fail these; ECDSA and ES256 do not.
        #expect(highS.count == 70)
    }

    /// ⌊value / 2⌋ of a big-endian unsigned integer: with n odd, s > n/2 exactly when s > ⌊n/2⌋.
    static func halved(_ value: [UInt8]) -> [UInt8] {
        var carry: UInt8 = 0
        return value.map { byte in
            defer { carry = byte & 1 }
            return (byte >> 1) | (carry << 7)
        }
    }

    /// Compares two big-endian unsigned integers of the same byte count.
    static func isGreater(_ lhs: [UInt8], than rhs: [UInt8]) -> Bool {
        lhs.lexicographicallyPrecedes(rhs) == false && lhs != rhs
    }

    static func hexBytes(_ hex: String) -> [UInt8] {
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            bytes.append(UInt8(hex[index..<next], radix: 16)!)
            index = next
        }
        return bytes
    }
}

extension WycheproofECDSATests {
    /// One test vector with the key of its group, named by its `tcId` and comment in the test report.
    struct VectorCase: Sendable, CustomTestStringConvertible {
        let tcId: Int
        let comment: String
        let publicKeyDER: [UInt8]
        let message: [UInt8]
        let signature: [UInt8]
        let isValid: Bool

        var testDescription: String { "tcId \(tcId): \(comment)" }
    }

    struct VectorFile: Decodable {
        let numberOfTests: Int
        let testGroups: [Group]
    }

    struct Group: Decodable {
        let publicKeyDer: String
        let tests: [Test]
    }

    struct Test: Decodable {
        let tcId: Int
        let comment: String
        let msg: String
        let sig: String
        let result: String
    }
}
