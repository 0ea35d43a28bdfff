import Foundation
import Testing

@_spi(CommandLine) @_spi(Servers) @_spi(Stores) @testable import Attribution

/// Project Wycheproof's JSON Web Signature vectors that concern ES256 (groups `es256`, `ec_key_for_encryption`
/// and `SpecialCaseEs256`), run through ``JWSVerification``: the path the verifier takes for every token.
///
/// The key comes from the group's `public` JWK through ``ECPublicKey/init(jwk:)``; a JWK the library refuses
/// (a key for encryption, for instance) rejects the case, as a refused `--key` file would stop the verifier.
@Suite("Wycheproof JSON Web Signature (ES256)")
struct WycheproofJWSTests {
    static let vectorFile = TestPaths.vector("wycheproof/testvectors_v1/json_web_signature_test.json")

    /// The ES256 groups by `comment`, with the `tcId`s each must hold, in file order. A group appears once per
    /// Wycheproof group: `ec_key_for_encryption` is two groups of one case each (`use` enc, then `key_ops`).
    static let expectedGroups: [(comment: String, tcIds: [Int])] = [
        ("es256", Array(18...32)),
        ("ec_key_for_encryption", [354]),
        ("ec_key_for_encryption", [356]),
        ("SpecialCaseEs256", Array(378...401)),
    ]

    /// The `tcId`s PROVENANCE.md names as mislabelled upstream (C2SP/wycheproof issue #236 and the two '?'
    /// cases). None lies in the ES256 groups, so no ES256 case is skipped; ``noKnownMislabelledCase()`` holds
    /// that true if the file changes.
    static let knownMislabelled: Set<Int> = [357, 367, 370, 372, 373]

    static func loadFile() throws -> VectorFile {
        try JSONDecoder().decode(VectorFile.self, from: Data(contentsOf: vectorFile))
    }

    /// The ES256 cases, each with its group's public JWK, in file order.
    static func loadCases() throws -> [VectorCase] {
        let comments = Set(expectedGroups.map(\.comment))
        return try loadFile().testGroups.filter { comments.contains($0.comment ?? "") }.flatMap { group in
            group.tests.map { test in
                VectorCase(
                    tcId: test.tcId, comment: test.comment, groupComment: group.comment ?? "",
                    jwk: group.publicKey?.jsonObject, jws: test.jws, result: test.result
                )
            }
        }
    }

    /// The key a case is verified with, or nil when the library refuses the group's JWK (the case is rejected).
    static func key(for vector: VectorCase) throws -> ECPublicKey? {
        let jwk = try #require(vector.jwk, "every ES256 group carries a public JWK")
        do {
            return try ECPublicKey(jwk: jwk)
        } catch {
            #expect(error.code == .invalidKey)
            return nil
        }
    }

    @Test("Each ES256 vector verifies exactly when Wycheproof labels it valid", arguments: try loadCases())
    func vector(_ vector: VectorCase) throws {
        guard let key = try Self.key(for: vector) else {
            #expect(vector.result != .valid, "the library refused the JWK of a case labelled valid")
            return
        }
        let outcome = JWSVerification.verify(ArraySlice(vector.jws.utf8)) { keyID in
            .success(TrustedKey(keyID: keyID, key: key, environment: .custom))
        }
        #expect((outcome.failure == nil) == (vector.result == .valid), "\(outcome.failure.map(String.init) ?? "")")
        #expect((outcome.signature == .verified) == (outcome.failure == nil))
        #expect((outcome.verifiedPayload != nil) == (outcome.failure == nil))
    }

    @Test("Each ES256 vector goes through the item verifier without a crash and is never valid there",
          arguments: try loadCases())
    func vectorThroughAttributionVerifier(_ vector: VectorCase) throws {
        guard let key = try Self.key(for: vector) else { return }
        var ring = KeyRing()
        try ring.add(key, keyID: "kid-ec-sign")
        let result = AttributionVerifier(keyRing: ring).verify(Array(vector.jws.utf8))
        // Every payload here is "foo" (or missing), never an AdAttributionKit object, so nothing is valid.
        #expect(result.verdict == .invalid)
        let firstError = try #require(result.firstError)
        if vector.result == .valid {
            // The signature is checked first and holds; only then is "foo" parsed, and J1 rejects it.
            #expect(result.signature == .verified)
            #expect(result.keyID == "kid-ec-sign")
            #expect(result.environment == .custom)
            #expect(firstError.code == .malformedInput)
            #expect(firstError.rule == "J1")
            #expect(result.errors.count == 1, "\(result.errors)")
            #expect(result.fields == nil)
            #expect(result.kind == .unknown)
        } else {
            #expect(result.signature != .verified, "\(result.errors)")
            #expect(result.fields == nil)
        }
    }

    @Test("The ES256 groups hold exactly the expected tcIds, so a changed file cannot shrink the test")
    func groupCounts() throws {
        let comments = Set(Self.expectedGroups.map(\.comment))
        let file = try Self.loadFile()
        #expect(file.numberOfTests == 401)
        let groups = file.testGroups.filter { comments.contains($0.comment ?? "") }
        #expect(groups.map { $0.comment ?? "" } == Self.expectedGroups.map(\.comment))
        #expect(groups.map { $0.tests.map(\.tcId) } == Self.expectedGroups.map(\.tcIds))
        #expect(groups.map(\.tests.count) == [15, 1, 1, 24])

        let cases = try Self.loadCases()
        #expect(cases.count == 41)
        #expect(cases.filter { $0.result == .valid }.map(\.tcId) == [18, 378])
        #expect(cases.filter { $0.result == .acceptable }.isEmpty)
    }

    @Test("None of the tcIds PROVENANCE.md names as mislabelled is an ES256 case, so none is skipped")
    func noKnownMislabelledCase() throws {
        let tcIds = Set(try Self.loadCases().map(\.tcId))
        #expect(tcIds.isDisjoint(with: Self.knownMislabelled))
        let all = try Self.loadFile().testGroups.flatMap(\.tests).map(\.tcId)
        #expect(Self.knownMislabelled.isSubset(of: Set(all)), "the mislabelled tcIds moved: re-read PROVENANCE.md")
    }

    @Test("The key-for-encryption JWKs (use enc, key_ops encrypt) are refused when loaded")
    func encryptionKeysAreRefused() throws {
        let cases = try Self.loadCases().filter { $0.groupComment == "ec_key_for_encryption" }
        #expect(cases.map(\.tcId) == [354, 356])
        for vector in cases {
            let jwk = try #require(vector.jwk)
            #expect(throws: AttributionError(.invalidKey, "")) { try ECPublicKey(jwk: jwk) }
        }
    }

    @Test("Regression: a JWK whose key_ops lacks verify (tcId 356, key_ops [encrypt]) was loaded as a signing key",
          arguments: KeyOperationsCase.all)
    func keyOperations(_ operations: KeyOperationsCase) {
        // Wycheproof's kid-ec-sign point; only key_ops varies.
        let jwk = JSONObject(members: [
            .init(name: "kty", value: .string("EC")), .init(name: "crv", value: .string("P-256")),
            .init(name: "x", value: .string("04N0xi21hshyvBp7I167sbE_bXqyqkAPfefdklMO7wY")),
            .init(name: "y", value: .string("UI8exy-C06a7DUnjIdENkxeFtHM4-l_41LqEw9nVgmw")),
            .init(name: "key_ops", value: operations.value),
        ])
        if operations.isAccepted {
            #expect(throws: Never.self) { try ECPublicKey(jwk: jwk) }
        } else {
            #expect(throws: AttributionError(.invalidKey, "")) { try ECPublicKey(jwk: jwk) }
        }
    }
}

extension WycheproofJWSTests {
    /// One `key_ops` value (RFC 7517 §4.3) and whether a verifying public key may carry it.
    struct KeyOperationsCase: Sendable, CustomTestStringConvertible {
        let name: String
        let value: JSONValue
        let isAccepted: Bool

        var testDescription: String { "key_ops \(name): \(isAccepted ? "loads" : "refused")" }

        static func strings(_ operations: String...) -> JSONValue {
            .array(operations.map { .string($0) })
        }

        static let all: [KeyOperationsCase] = [
            KeyOperationsCase(name: "[encrypt]", value: strings("encrypt"), isAccepted: false),
            KeyOperationsCase(name: "[sign]", value: strings("sign"), isAccepted: false),
            KeyOperationsCase(name: "[]", value: strings(), isAccepted: false),
            KeyOperationsCase(name: "[verify, verify]", value: strings("verify", "verify"), isAccepted: false),
            KeyOperationsCase(name: "[Verify]", value: strings("Verify"), isAccepted: false),
            KeyOperationsCase(name: "\"verify\" (not a list)", value: .string("verify"), isAccepted: false),
            KeyOperationsCase(name: "[verify, 1]", value: .array([.string("verify"), .number(JSONNumber(
                validatedLiteral: "1"))]), isAccepted: false),
            KeyOperationsCase(name: "null", value: .null, isAccepted: false),
            KeyOperationsCase(name: "[verify]", value: strings("verify"), isAccepted: true),
            KeyOperationsCase(name: "[sign, verify]", value: strings("sign", "verify"), isAccepted: true),
        ]
    }
}

// MARK: - Test types

extension WycheproofJWSTests {
    /// One ES256 vector with its group's JWK, named by `tcId` and comment in the test report.
    struct VectorCase: Sendable, CustomTestStringConvertible {
        let tcId: Int
        let comment: String
        let groupComment: String
        let jwk: JSONObject?
        let jws: String
        let result: Outcome

        var testDescription: String { "tcId \(tcId): \(comment)" }
    }

    /// Wycheproof's `result`.
    enum Outcome: String, Decodable, Sendable {
        case valid
        case invalid
        case acceptable
    }

    struct VectorFile: Decodable {
        let numberOfTests: Int
        let testGroups: [Group]
    }

    struct Group: Decodable {
        let comment: String?
        let publicKey: WycheproofJWK?
        let tests: [Test]

        enum CodingKeys: String, CodingKey {
            case comment
            case publicKey = "public"
            case tests
        }
    }

    struct Test: Decodable {
        let tcId: Int
        let comment: String
        let jws: String
        let result: Outcome
    }
}
