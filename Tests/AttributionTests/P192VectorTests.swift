import Foundation
import Testing

@_spi(CommandLine) @_spi(Servers) @_spi(Stores) @testable import Attribution

/// Our own ECDSA P-192 / SHA-256 vectors with DER signatures (Wycheproof has no secp192r1 set), generated with
/// OpenSSL by `Fixtures/p192/make-p192-vectors.py` (see `Fixtures/p192/PROVENANCE.md`): every vector's expected
/// result is OpenSSL's, and each goes through the P-192 table (``P192KeyTable``), `EVP_PKEY_verify`, and
/// ``ECPublicKey/isValidDERSignature(_:sha256Over:)``, the SKAdNetwork 1.0 and 2.0 entry point.
@Suite("P-192 ECDSA vectors generated with OpenSSL (SKAdNetwork 1.0 and 2.0)")
struct P192VectorTests {
    /// The generated vector file.
    static let vectorFile = TestPaths.fixtures.appendingPathComponent("p192/ecdsa_secp192r1_sha256_generated.json")

    /// The vector file's members the tests read.
    struct VectorFile: Decodable {
        /// The vectors in all groups.
        let numberOfTests: Int
        /// One group per key.
        let testGroups: [Group]
        /// Key encodings OpenSSL refuses to load.
        let invalidKeys: [InvalidKey]

        /// One key (DER SubjectPublicKeyInfo and its uncompressed point) and its vectors.
        struct Group: Decodable {
            /// The key's DER SubjectPublicKeyInfo, hex.
            let publicKeyDer: String
            /// `04 || x || y`, hex.
            let publicKeyUncompressed: String
            /// The key's vectors.
            let tests: [Test]
        }

        /// One message and DER signature, with OpenSSL's answer.
        struct Test: Decodable {
            /// The vector's number, unique in the file.
            let tcId: Int
            /// What the vector is.
            let comment: String
            /// Its kinds (`ValidSignature`, `HighS`, `ModifiedR`, `RangeS`, `BerEncodedSignature`...).
            let flags: [String]
            /// The message, hex (its SHA-256 is signed).
            let msg: String
            /// The DER signature, hex.
            let sig: String
            /// `valid` or `invalid`: OpenSSL's answer.
            let result: String
        }

        /// A key encoding OpenSSL does not load.
        struct InvalidKey: Decodable {
            /// What is wrong with the key.
            let comment: String
            /// The encoding, hex.
            let publicKeyDer: String
            /// Always `invalid`.
            let result: String
        }
    }

    /// One signature vector: key, message, DER signature and OpenSSL's answer.
    struct VectorCase: Sendable, CustomTestStringConvertible {
        /// The vector's number in the file.
        let tcId: Int
        /// What the vector is.
        let comment: String
        /// Its kinds, as the file gives them.
        let flags: [String]
        /// The group's key, DER SubjectPublicKeyInfo.
        let publicKeyDER: [UInt8]
        /// The message whose SHA-256 is checked.
        let message: [UInt8]
        /// The DER signature.
        let signature: [UInt8]
        /// OpenSSL's answer.
        let isValid: Bool

        /// The test case's name: number and comment.
        var testDescription: String { "tcId \(tcId): \(comment)" }
    }

    /// One key encoding that must not load.
    struct InvalidKeyCase: Sendable, CustomTestStringConvertible {
        /// What is wrong with the key.
        let comment: String
        /// The encoding.
        let publicKeyDER: [UInt8]

        /// The test case's name: the comment.
        var testDescription: String { comment }
    }

    /// The vector file, decoded.
    static func file() throws -> VectorFile {
        try JSONDecoder().decode(VectorFile.self, from: Data(contentsOf: vectorFile))
    }

    /// The bytes of a hex string.
    static func bytes(_ hex: String) -> [UInt8] { WycheproofECDSATests.hexBytes(hex) }

    /// Every signature vector, with its group's key.
    static func loadCases() throws -> [VectorCase] {
        try file().testGroups.flatMap { group in
            group.tests.map { test in
                VectorCase(tcId: test.tcId, comment: test.comment, flags: test.flags,
                           publicKeyDER: bytes(group.publicKeyDer), message: bytes(test.msg),
                           signature: bytes(test.sig), isValid: test.result == "valid")
            }
        }
    }

    /// Every key encoding that must not load.
    static func loadInvalidKeys() throws -> [InvalidKeyCase] {
        try file().invalidKeys.map { InvalidKeyCase(comment: $0.comment, publicKeyDER: bytes($0.publicKeyDer)) }
    }

    /// One table per key of the file, built once (a table costs about 12,000 libcrypto point additions).
    /// The P-192 table registry of this suite's own (``ECPublicKey/isValidDERSignature(_:sha256Over:p192Tables:)``).
    static let registry = P192KeyTables(threshold: 0)
    static let tables: [[UInt8]: P192KeyTable] = {
        var tables: [[UInt8]: P192KeyTable] = [:]
        for group in (try? file().testGroups) ?? [] {
            let point = bytes(group.publicKeyUncompressed)
            tables[point] = P192KeyTable(uncompressedPoint: point)
        }
        return tables
    }()

    /// The table path's answer as the SKAdNetwork entry point takes it: a signature that is not strict DER with
    /// 24-byte halves never reaches the table (it is false there), else the table's answer.
    static func tableAnswer(_ table: P192KeyTable, _ der: [UInt8], _ message: [UInt8]) -> Bool {
        guard let raw = P1363Signature.raw(fromStrictDER: der, half: Int32(P192KeyTable.scalarBytes)) else {
            return false
        }
        return table.isValidSignature(r: raw[..<24], s: raw[24...], digest: SHA256Digest(of: message))
    }

    @Test("Each vector gets OpenSSL's answer from the P-192 table, EVP_PKEY_verify and the DER entry point",
          arguments: try loadCases())
    func vector(_ vector: VectorCase) throws {
        let key = try ECPublicKey(derRepresentation: vector.publicKeyDER, curve: .p192)
        let table = try #require(Self.tables[key.uncompressedPoint])
        let evp = vector.signature.withUnsafeBytes { signature in
            vector.message.withUnsafeBytes { key.evpKey.isValidSHA256Signature(der: signature, over: $0) }
        }
        #expect(evp == vector.isValid, "EVP_PKEY_verify")
        #expect(Self.tableAnswer(table, vector.signature, vector.message) == vector.isValid, "P192KeyTable")
        // A registry of the test's own: its keys' tables must not spend the process's budget of P-192 tables, which
        // Apple's key needs in the other suites (FloodTests).
        #expect(key.isValidDERSignature(vector.signature, sha256Over: vector.message,
                                        p192Tables: Self.registry) == vector.isValid,
                "ECPublicKey.isValidDERSignature")
    }

    @Test("Each key encoding OpenSSL refuses is rejected at load, and gets no table", arguments: try loadInvalidKeys())
    func invalidKey(_ key: InvalidKeyCase) throws {
        #expect(throws: AttributionError.self) { try ECPublicKey(derRepresentation: key.publicKeyDER, curve: .p192) }
        #expect(P192KeyTable(uncompressedPoint: Array(key.publicKeyDER.suffix(49))) == nil)
    }

    @Test("The file holds what its provenance says: every group's point is its key's, valid and invalid cases")
    func fileContents() throws {
        let file = try Self.file()
        let cases = try Self.loadCases()
        #expect(cases.count == file.numberOfTests)
        #expect(file.testGroups.count == 4 && Self.tables.count == 4)
        for group in file.testGroups {
            let key = try ECPublicKey(derRepresentation: Self.bytes(group.publicKeyDer), curve: .p192)
            #expect(key.uncompressedPoint == Self.bytes(group.publicKeyUncompressed))
        }
        // High-S signatures are valid (ECDSA has no low-S rule); flips and out-of-range scalars are not.
        #expect(cases.contains { $0.flags.contains("HighS") && $0.isValid })
        #expect(cases.filter { $0.flags.contains("ValidSignature") }.allSatisfy { $0.isValid })
        for flag in ["ModifiedR", "ModifiedS", "ModifiedMessage", "RangeR", "RangeS", "WrongKey",
                     "BerEncodedSignature"] {
            let flagged = cases.filter { $0.flags.contains(flag) }
            #expect(!flagged.isEmpty && flagged.allSatisfy { !$0.isValid }, "\(flag)")
        }
        #expect(cases.contains { $0.message.isEmpty && $0.isValid })
        #expect(!file.invalidKeys.isEmpty && file.invalidKeys.allSatisfy { $0.result == "invalid" })
    }
}
