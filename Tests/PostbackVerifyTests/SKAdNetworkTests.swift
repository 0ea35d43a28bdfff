import Foundation
import Testing
@_spi(CommandLine) @_spi(Servers) @_spi(Stores) @testable import Attribution

/// SKAdNetwork postbacks 1.0 to 4.0 (spec §9): Apple's examples, the signed string of every version, the 2.2
/// fallback, P-192, unknown versions, deduplication, the key override and the CLI's `--explain`.
@Suite("SKAdNetwork postbacks")
struct SKAdNetworkTests {
    /// One of Apple's examples in `Vectors/reference/skadnetwork/` and what its README says it must give.
    struct AppleExample: Sendable, CustomTestStringConvertible {
        let file: String
        let isValid: Bool
        let keyID: String
        /// Written by hand from spec §9 with `|` for U+2063.
        let signedString: String

        var testDescription: String { file }

        static let all: [AppleExample] = [
            AppleExample(
                file: "4.0-fine-value-valid.json", isValid: true, keyID: "skadnetwork-p256",
                signedString: "4.0|com.example|5239|525463029|6aafb7a5-0170-41b5-bbe4-fe71dedf1e30|false|"
                    + "example.com|1|true|0"),
            AppleExample(
                file: "4.0-coarse-value-valid.json", isValid: true, keyID: "skadnetwork-p256",
                signedString: "4.0|com.example|39|525463029|6aafb7a5-0170-41b5-bbe4-fe71dedf1e31|false|"
                    + "example.com|1|true|0"),
            AppleExample(
                file: "3.0-winning-valid.json", isValid: true, keyID: "skadnetwork-p256",
                signedString: "3.0|example123.skadnetwork|42|525463029|6aafb7a5-0170-41b5-bbe4-fe71dedf1e28|true|"
                    + "1234567891|1|true"),
            AppleExample(
                file: "3.0-nonwinning-valid.json", isValid: true, keyID: "skadnetwork-p256",
                signedString: "3.0|example123.skadnetwork|42|525463029|f9ac267a-a889-44ce-b5f7-0166d11461f0|true|"
                    + "1|false"),
            AppleExample(
                file: "2.2-valid.json", isValid: true, keyID: "skadnetwork-p256",
                signedString: "2.2|com.example|42|525463029|6aafb7a5-0170-41b5-bbe4-fe71dedf1e28|true|1234567891|1"),
            AppleExample(
                file: "2.1-valid.json", isValid: true, keyID: "skadnetwork-p256",
                signedString: "2.1|com.example|42|525463029|6aafb7a5-0170-41b5-bbe4-fe71dedf1e28|true|1234567891"),
            AppleExample(
                file: "2.0-placeholder-signature-invalid.json", isValid: false, keyID: "skadnetwork-p192",
                signedString: "2.0|com.example|42|525463029|6aafb7a5-0170-41b5-bbe4-fe71dedf1e28|true|1234567891"),
            AppleExample(
                file: "1.0-placeholder-signature-invalid.json", isValid: false, keyID: "skadnetwork-p192",
                signedString: "com.example|42|1229670720|6aafb7a5-0170-41b5-bbe4-fe71dedf1e28"),
        ]
    }

    /// Apple's keys only, as in production.
    static let appleVerifier = AttributionVerifier(keyRing: KeyRing())

    /// Apple's SKAdNetwork keys replaced by the fixtures' test-only keys.
    static func testKeyVerifier(strict: Bool = false) throws -> AttributionVerifier {
        var ring = KeyRing()
        ring.replaceSKAdNetworkKey(with: try testKey(.p256))
        ring.replaceSKAdNetworkKey(with: try testKey(.p192))
        return AttributionVerifier(keyRing: ring, policy: VerificationPolicy(isStrict: strict))
    }

    static func testKey(_ curve: ECPublicKey.Curve) throws -> ECPublicKey {
        let name = curve == .p256 ? "fixture-skadnetwork-p256" : "fixture-skadnetwork-p192"
        let pem = String(decoding: try TestPaths.bytes(
            TestPaths.fixtures.appendingPathComponent("keys/\(name).pem")), as: UTF8.self)
        return try ECPublicKey(pemRepresentation: pem, curve: curve)
    }

    static func appleExample(_ file: String) throws -> [UInt8] {
        try TestPaths.bytes(TestPaths.vector("reference/skadnetwork/\(file)"))
    }

    static func fixture(_ path: String) throws -> [UInt8] {
        try TestPaths.bytes(TestPaths.fixtures.appendingPathComponent(path))
    }

    /// `|` stands for U+2063 in the tests' hand-written strings (no value in them contains a `|`).
    static func invisible(_ visible: String) -> String {
        visible.replacingOccurrences(of: "|", with: "\u{2063}")
    }

    static func object(_ bytes: [UInt8]) throws -> JSONObject {
        try #require(try StrictJSONParser.parse(bytes).objectValue)
    }

    /// `object` with the member `name` set to `value` (kept in place, or appended), or removed when nil.
    static func setting(_ name: String, to value: JSONValue?, in object: JSONObject) -> JSONObject {
        var members = object.members.filter { $0.name != name }
        if let value {
            let position = object.members.firstIndex { $0.name == name } ?? members.endIndex
            members.insert(JSONObject.Member(name: name, value: value), at: position)
        }
        return JSONObject(members: members)
    }

    static func bytes(_ object: JSONObject) -> [UInt8] {
        Array(JSONValue.object(object).jsonText.utf8)
    }

    // MARK: - Apple's examples

    @Test("Apple's examples get the vectors README's results and report their signed string",
          arguments: AppleExample.all)
    func appleExamples(_ example: AppleExample) throws {
        let result = Self.appleVerifier.verify(try Self.appleExample(example.file))
        #expect(result.kind == .skadnetwork)
        #expect(result.keyID == example.keyID)
        #expect(result.environment == .production)
        #expect(result.signedString == Self.invisible(example.signedString))
        #expect(result.warnings.isEmpty, "\(result.warnings)")
        if example.isValid {
            #expect(result.verdict == .valid, "\(result.errors)")
            #expect(result.signature == .verified)
            #expect(result.skAdNetwork != nil)
            #expect(result.deduplicationKey != nil)
        } else {
            #expect(result.verdict == .invalid)
            #expect(result.firstError?.code == .badSignature)
            #expect(result.firstError?.rule == "S3")
            #expect(result.errors.count == 1)
            #expect(result.signature == .failed)
            #expect(result.fields == nil, "unauthenticated members must not be reported as signed")
            #expect(result.skAdNetwork == nil)
            #expect(result.deduplicationKey == nil)
        }
    }

    @Test("The 2.1 example: signed members in signing order as received, unsigned members apart")
    func fieldsAndUnsignedOf21() throws {
        let result = Self.appleVerifier.verify(try Self.appleExample("2.1-valid.json"))
        let fields = try #require(result.fields)
        #expect(fields.members.map(\.name) == [
            "version", "ad-network-id", "campaign-id", "app-id", "transaction-id", "redownload", "source-app-id",
        ])
        #expect(fields["campaign-id"] == .number(JSONNumber(validatedLiteral: "42")))
        #expect(result.unsigned == JSONObject(members: [
            .init(name: "conversion-value", value: .number(JSONNumber(validatedLiteral: "20"))),
        ]))
        let postback = try #require(result.skAdNetwork)
        #expect(postback.version == .v2_1)
        #expect(postback.campaignID == 42)
        #expect(postback.appID == 525_463_029)
        #expect(postback.sourceAppID == 1_234_567_891)
        #expect(postback.redownload == true)
        #expect(postback.fidelityType == nil)
        #expect(result.tier == nil)
    }

    @Test("The 4.0 coarse example: source-domain is signed, the coarse value is not")
    func fieldsAndUnsignedOf40() throws {
        let result = Self.appleVerifier.verify(try Self.appleExample("4.0-coarse-value-valid.json"))
        let postback = try #require(result.skAdNetwork)
        #expect(postback.sourceIdentifier == "39")
        #expect(postback.sourceDomain == "example.com")
        #expect(postback.sourceAppID == nil)
        #expect(postback.postbackSequenceIndex == 0)
        #expect(result.fields?.contains("source-domain") == true)
        #expect(result.unsigned?.members.map(\.name) == ["coarse-conversion-value"])
    }

    // MARK: - Versions and signed strings

    @Test("Each version signs spec §9's members in spec §9's order, with the spec §3 curve",
          arguments: SKAdNetworkVersion.allCases)
    func versionOrder(_ version: SKAdNetworkVersion) {
        let v20 = ["version", "ad-network-id", "campaign-id", "app-id", "transaction-id", "redownload",
                   "source-app-id"]
        let expected: [String] = switch version {
        case .v1_0: ["ad-network-id", "campaign-id", "app-id", "transaction-id"]
        case .v2_0, .v2_1: v20
        case .v2_2: v20 + ["fidelity-type"]
        case .v3_0: v20 + ["fidelity-type", "did-win"]
        case .v4_0: ["version", "ad-network-id", "source-identifier", "app-id", "transaction-id", "redownload",
                     "source-app-id", "source-domain", "fidelity-type", "did-win", "postback-sequence-index"]
        }
        #expect(version.signedFields.map(\.rawValue) == expected)
        #expect(version.curve == ([.v1_0, .v2_0].contains(version) ? .p192 : .p256))
        #expect((version.fallbackSignedFields != nil) == (version == .v2_2))
    }

    @Test("Signed string: decoded strings, true/false, decimal integers, absent optional members left out")
    func signedStringConstruction() throws {
        let body = try Self.object(Array("""
            {"version":"4.0","ad-network-id":"ex\\u0061mple.com","source-identifier":"0012",
             "app-id":18446744073709551615,"transaction-id":"caf\\u00e9","redownload":true,"fidelity-type":0,
             "did-win":false,"postback-sequence-index":2,"conversion-value":5,"attribution-signature":"AA=="}
            """.utf8))
        var findings: [Finding] = []
        let postback = try #require(SKAdNetworkPostback.decode(
            body, version: .v4_0, signedFields: SKAdNetworkVersion.v4_0.signedFields, findings: &findings))
        #expect(findings.isEmpty)
        #expect(postback.signedString
            == Self.invisible("4.0|example.com|0012|18446744073709551615|café|true|0|false|2"))
        #expect(Array(postback.signedString.utf8).filter { $0 == 0xE2 }.count == 8, "U+2063 is E2 81 A3")
        #expect(postback.unsignedMembers.members.map(\.name) == ["conversion-value"])
        #expect(postback.deduplicationKey == "café\u{1F}2\u{1F}4.0\u{1F}example.com")
    }

    @Test("A version member in 1.0 is not signed: it is reported as unsigned")
    func version10Member() throws {
        let result = try Self.testKeyVerifier().verify(
            try Self.fixture("skadnetwork/valid/1.0-version-member-p192.json"))
        #expect(result.verdict == .valid, "\(result.errors)")
        #expect(result.unsigned?.contains("version") == true)
        #expect(result.fields?.contains("version") == false)
        #expect(result.skAdNetwork?.version == .v1_0)
    }

    // MARK: - The 2.2 fallback (S6)

    @Test("A 2.2 fixture signed over the 2.0/2.1 order is valid with warning S6; fidelity-type is then unsigned")
    func fallbackFixture() throws {
        let result = try Self.testKeyVerifier().verify(
            try Self.fixture("skadnetwork/valid/2.2-fallback-signed-without-fidelity-type.json"))
        #expect(result.verdict == .valid, "\(result.errors)")
        #expect(result.warnings.map(\.rule) == ["S6"])
        #expect(result.signature == .verified)
        #expect(result.signedString?.hasPrefix("2.2\u{2063}") == true)
        #expect(result.signedString?.components(separatedBy: "\u{2063}").count == 7)
        #expect(result.fields?.contains("fidelity-type") == false)
        #expect(result.unsigned?.contains("fidelity-type") == true)
        #expect(result.skAdNetwork?.fidelityType == nil)

        let strict = try Self.testKeyVerifier(strict: true).verify(
            try Self.fixture("skadnetwork/valid/2.2-fallback-signed-without-fidelity-type.json"))
        #expect(strict.firstError?.code == .ruleWarning)
        #expect(strict.firstError?.rule == "S6")
    }

    @Test("Apple's 2.2 example re-signed here (openssl) over the 2.1 order verifies with warning S6")
    func fallbackBuiltInTest() throws {
        let body = try Self.object(try Self.appleExample("2.2-valid.json"))
        let fields = ["version", "ad-network-id", "campaign-id", "app-id", "transaction-id", "redownload",
                      "source-app-id"]
        let message = try fields.map { name in try #require(body[name]) }.map(Self.plainText)
            .joined(separator: "\u{2063}")
        let signature = try Self.opensslSign(
            Array(message.utf8), privateKey: "Fixtures/keys/fixture-skadnetwork-p256.private.pem")
        let resigned = Self.setting(
            "attribution-signature", to: .string(Base64.encode(signature)), in: body)
        let result = try Self.testKeyVerifier().verify(Self.bytes(resigned))
        #expect(result.verdict == .valid, "\(result.errors)")
        #expect(result.warnings.map(\.rule) == ["S6"])
        #expect(result.signedString == message)
        #expect(result.environment == .custom)

        // The same signature on a 2.1 or 3.0 body is no fallback: only 2.2 has one.
        for version in ["2.1", "3.0"] {
            let other = Self.setting("version", to: .string(version), in: resigned)
            let failed = try Self.testKeyVerifier().verify(Self.bytes(other))
            #expect(failed.firstError?.rule == (version == "3.0" ? "S2" : "S3"), "\(failed.errors)")
        }
    }

    // MARK: - P-192

    @Test("1.0 and 2.0 verify with a P-192 key; Apple's key refuses the same fixture (production, S3)",
          arguments: ["skadnetwork/valid/1.0-p192.json", "skadnetwork/valid/2.0-p192.json",
                      "skadnetwork/valid/1.0-high-s-signature-p192.json"])
    func p192(_ path: String) throws {
        let bytes = try Self.fixture(path)
        let ours = try Self.testKeyVerifier().verify(bytes)
        #expect(ours.verdict == .valid, "\(ours.errors)")
        #expect(ours.keyID == "skadnetwork-p192")
        #expect(ours.environment == .custom)
        let apple = Self.appleVerifier.verify(bytes)
        #expect(apple.firstError?.code == .badSignature)
        #expect(apple.firstError?.rule == "S3")
        #expect(apple.keyID == "skadnetwork-p192")
        #expect(apple.environment == .production)
        #expect(apple.signature == .failed)
    }

    // MARK: - Versions, signatures and members that are refused

    @Test("An unknown version is unsupported-version (S1) before anything else",
          arguments: [#""5.0""#, #""2.3""#, #""4""#, #"" 4.0""#, #""""#, "4.0", "null", "true", #"["4.0"]"#])
    func unknownVersion(_ versionJSON: String) throws {
        let body = try Self.object(try Self.appleExample("4.0-fine-value-valid.json"))
        let version = try StrictJSONParser.parse(Array(versionJSON.utf8))
        let result = Self.appleVerifier.verify(Self.bytes(Self.setting("version", to: version, in: body)))
        #expect(result.kind == .skadnetwork)
        #expect(result.firstError?.code == .unsupportedVersion)
        #expect(result.firstError?.rule == "S1")
        #expect(result.errors.count == 1)
        #expect(result.signature == .notChecked)
        #expect(result.keyID == nil)
        #expect(result.signedString == nil)
    }

    @Test("A signature that is not strict padded standard base64 is bad-signature (S3)",
          arguments: ["base64url", "unpadded", "space", "empty", "number"])
    func malformedSignature(_ form: String) throws {
        let body = try Self.object(try Self.appleExample("2.1-valid.json"))
        let good = try #require(body["attribution-signature"]?.stringValue)
        let bad: JSONValue = switch form {
        case "base64url":
            .string(good.replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "+", with: "-"))
        case "unpadded": .string(good.replacingOccurrences(of: "=", with: ""))
        case "space": .string(String(good.prefix(8)) + " " + String(good.dropFirst(8)))
        case "empty": .string("")
        default: .number(JSONNumber(validatedLiteral: "1"))
        }
        #expect(bad != .string(good))
        let result = Self.appleVerifier.verify(Self.bytes(Self.setting("attribution-signature", to: bad, in: body)))
        #expect(result.firstError?.code == .badSignature)
        #expect(result.firstError?.rule == "S3")
        #expect(result.signature == .failed)
    }

    /// A change to one member of Apple's 2.1 example: `json` nil removes it.
    struct MemberChange: Sendable, CustomTestStringConvertible {
        let name: String
        let json: String?

        var testDescription: String { "\(name) = \(json ?? "absent")" }
    }

    @Test("A missing or mistyped signed member is invalid-field (S2) and stops before the signature", arguments: [
        MemberChange(name: "transaction-id", json: nil), MemberChange(name: "redownload", json: nil),
        MemberChange(name: "redownload", json: #""true""#), MemberChange(name: "campaign-id", json: #""42""#),
        MemberChange(name: "app-id", json: "525463029.0"), MemberChange(name: "app-id", json: "-1"),
        MemberChange(name: "source-app-id", json: "null"),
    ])
    func mistypedMember(_ change: MemberChange) throws {
        let body = try Self.object(try Self.appleExample("2.1-valid.json"))
        let value = try change.json.map { try StrictJSONParser.parse(Array($0.utf8)) }
        let result = Self.appleVerifier.verify(Self.bytes(Self.setting(change.name, to: value, in: body)))
        #expect(result.firstError?.code == .invalidField)
        #expect(result.firstError?.rule == "S2")
        #expect(result.signature == .notChecked)
        #expect(result.keyID == "skadnetwork-p256")
        #expect(result.signedString == nil)
    }

    // MARK: - Deduplication

    @Test("Deduplication is on transaction-id and postback-sequence-index (absent: 0), per version and network")
    func deduplication() throws {
        // Apple's 2.1, 2.2 and 3.0 winning examples share one transaction-id and carry no index, but they are
        // distinct signed postbacks (different versions): none is a duplicate of another. A repeat of one is.
        let deduplicator = TestDeduplicator()
        var results = try ["2.1-valid.json", "2.2-valid.json", "3.0-winning-valid.json", "4.0-fine-value-valid.json",
                           "2.2-valid.json"]
            .map { Self.appleVerifier.verify(try Self.appleExample($0)) }
        for index in results.indices {
            deduplicator.apply(to: &results[index], source: "apple", line: index + 1)
        }
        #expect(results[0].deduplicationKey?.description == "6aafb7a5-0170-41b5-bbe4-fe71dedf1e28\u{1F}0\u{1F}2.1\u{1F}"
            + (results[0].skAdNetwork?.adNetworkID ?? "?"))
        #expect(results.map(\.verdict) == [.valid, .valid, .valid, .valid, .invalid])
        #expect(results[4].firstError?.rule == "D1")
        #expect(results[4].duplicateOf.map { [$0.source, "\($0.line)"] } == ["apple", "2"])
        #expect(results[4].firstError?.message.contains("transaction-id 6aafb7a5-0170-41b5-bbe4-fe71dedf1e28 "
            + "at postback-sequence-index 0") == true)
        #expect(results[4].firstError?.message.contains("\u{1F}") == false)

        // The same 4.0 postback at another index (re-signed by the test key) is another conversion window.
        let verifier = try Self.testKeyVerifier()
        let lines = try Self.fixture("skadnetwork/dedupe/transaction-replays.jsonl")
            .split(separator: UInt8(ascii: "\n"))
        var first = verifier.verify(lines[1]), second = verifier.verify(lines[2]), replay = verifier.verify(lines[3])
        let windows = TestDeduplicator()
        windows.apply(to: &first, source: "r", line: 2)
        windows.apply(to: &second, source: "r", line: 3)
        windows.apply(to: &replay, source: "r", line: 4)
        #expect(first.skAdNetwork?.transactionID == second.skAdNetwork?.transactionID)
        #expect([first.verdict, second.verdict, replay.verdict] == [.valid, .valid, .invalid])
        #expect(replay.duplicateOf?.line == 2)
    }

    // MARK: - Keys

    @Test("Apple's SKAdNetwork keys: P-256 byte-identical to apple-cas-identifier/0, P-192 as published")
    func appleKeys() throws {
        let keys = SKAdNetworkKeys.apple
        let productionDER = try Base64.decode(Array(ApplePublishedKey.production.base64DER.utf8))
        #expect(keys.p256.key.derRepresentation == productionDER)
        let pem = String(decoding: try TestPaths.bytes(
            TestPaths.vector("reference/apple/keys/skadnetwork-p192.pem")), as: UTF8.self)
        let published = try ECPublicKey(pemRepresentation: pem, curve: .p192)
        #expect(keys.p192.key == published)
        #expect(keys.p256.keyID == "skadnetwork-p256" && keys.p192.keyID == "skadnetwork-p192")
        #expect(keys.p256.environment == .production && keys.p192.environment == .production)
        #expect(KeyRing().skAdNetworkKeys == keys)
    }

    @Test("Replacing one SKAdNetwork key keeps the other and marks it custom")
    func replacingKeys() throws {
        var ring = KeyRing()
        ring.replaceSKAdNetworkKey(with: try Self.testKey(.p192))
        #expect(ring.skAdNetworkKeys.p192.environment == .custom)
        #expect(ring.skAdNetworkKeys.p192.keyID == "skadnetwork-p192")
        #expect(ring.skAdNetworkKeys.p256 == SKAdNetworkKeys.apple.p256)
        let result = AttributionVerifier(keyRing: ring).verify(try Self.appleExample("2.1-valid.json"))
        #expect(result.verdict == .valid)
        #expect(result.environment == .production)
    }

    // MARK: - Command line

    @Test("--explain adds signed-string to JSON Lines (U+2063 escaped as \\u2063) and signed=\"...\" to text")
    func explain() throws {
        let path = TestPaths.vector("reference/skadnetwork/2.1-valid.json").path
        let expected = Self.invisible(AppleExample.all.first { $0.file == "2.1-valid.json" }!.signedString)
        let jsonl = try CommandLineTests.run(["--format", "jsonl", "--explain", "--quiet", path])
        #expect(jsonl.status == 0)
        #expect(jsonl.records.first?["signed-string"] as? String == expected)
        #expect(jsonl.stdout.contains(#"2.1\u2063com.example"#), "the invisible separator never reaches a terminal")
        #expect(!jsonl.stdout.contains("\u{2063}"))
        let plain = try CommandLineTests.run(["--format", "jsonl", "--quiet", path])
        #expect(plain.records.first?["signed-string"] == nil)
        let text = try CommandLineTests.run(["--explain", "--quiet", path])
        #expect(text.stdout.contains(
            #"signed="2.1|com.example|42|525463029|6aafb7a5-0170-41b5-bbe4-fe71dedf1e28|true|1234567891""#))
        #expect(text.stdout.contains("transaction=6aafb7a5-0170-41b5-bbe4-fe71dedf1e28"))
        #expect(text.stdout.contains("version=2.1"))
        #expect(!text.stdout.contains("\u{2063}"))
    }

    @Test("--skadnetwork-key-p256/-p192 verify our own signing, environment custom")
    func keyOverrideOptions() throws {
        let run = try CommandLineTests.run([
            "--format", "jsonl", "--quiet",
            "--skadnetwork-key-p256", "Fixtures/keys/fixture-skadnetwork-p256.pem",
            "--skadnetwork-key-p192", "Fixtures/keys/fixture-skadnetwork-p192.pem",
            "Fixtures/skadnetwork/valid/1.0-p192.json", "Fixtures/skadnetwork/valid/2.1.json",
        ])
        #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
        #expect(run.records.map { $0["environment"] as? String } == ["custom", "custom"])
        #expect(run.records.map { $0["key-id"] as? String } == ["skadnetwork-p192", "skadnetwork-p256"])
    }

    @Test("A key on the wrong curve, a missing file or a repeated option is a usage error", arguments: [
        ["--skadnetwork-key-p192", "Fixtures/keys/fixture-skadnetwork-p256.pem"],
        ["--skadnetwork-key-p256", "Fixtures/keys/fixture-skadnetwork-p192.pem"],
        ["--skadnetwork-key-p256", "Fixtures/keys/fixture-skadnetwork-p256.private.pem"],
        ["--skadnetwork-key-p256", "/nonexistent.pem"],
        ["--skadnetwork-key-p256"],
        ["--skadnetwork-key-p256", "Fixtures/keys/fixture-skadnetwork-p256.pem",
         "--skadnetwork-key-p256", "Fixtures/keys/fixture-skadnetwork-p256.pem"],
    ])
    func keyOverrideUsageErrors(_ arguments: [String]) throws {
        let run = try CommandLineTests.run(arguments)
        #expect(run.status == 2)
        #expect(run.stderr.contains("error"))
        #expect(run.stdout.isEmpty)
    }
}

// MARK: - Helpers

extension SKAdNetworkTests {
    /// A value as spec §9 writes it into the signed string (the tests' own rendering, not the library's).
    static func plainText(_ value: JSONValue) -> String {
        switch value {
        case .string(let string): string
        case .bool(let bool): bool ? "true" : "false"
        case .number(let number): number.literal
        default: value.jsonText
        }
    }

    /// An ECDSA-SHA256 DER signature by `openssl dgst -sha256 -sign` (OpenSSL's command, not our code).
    static func opensslSign(_ message: [UInt8], privateKey: String) throws -> [UInt8] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["openssl", "dgst", "-sha256", "-sign", privateKey]
        process.currentDirectoryURL = TestPaths.packageRoot
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        input.fileHandleForWriting.write(Data(message))
        try input.fileHandleForWriting.close()
        let signature = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0, "openssl dgst -sign failed")
        return [UInt8](signature)
    }
}
