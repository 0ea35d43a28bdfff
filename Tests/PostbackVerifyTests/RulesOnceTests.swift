import Foundation
import Testing

@_spi(CommandLine) @_spi(Servers) @_spi(Stores) @testable import Attribution

/// Every rule is defined once. The catalogue is ``RuleID`` (a finding can name no other rule, and takes its class
/// and code from there); the cross-field postback rules are ``PostbackRules/all``, which the general path turns into
/// findings and the fast path only asks about. These tests fail when a rule is added in one place only:
/// - a postback rule in the catalogue but not in the table (written elsewhere, out of the fast path's sight);
/// - a catalogue rule no fixture triggers (``FixtureManifestTests/coverage()``), so the agreement tests between
///   the fast and the general path never meet it;
/// - a rule the fast path would not decline for: a fixture that triggers it must never be answered by the fast path.
@Suite("One definition of every rule")
struct RulesOnceTests {
    @Test("The cross-field postback rules of the catalogue are exactly the table's, in catalogue order")
    func tableIsTheCatalogue() {
        let scopes = ["postback payload", "postback body", "postback"]
        let fieldRules: Set<RuleID> = [.p1, .p2, .u1]  // applied by the decoders, whose checks the fast path calls
        let catalogue = RuleID.allCases.filter { scopes.contains($0.appliesTo) && !fieldRules.contains($0) }
        #expect(PostbackRules.all.map(\.id) == catalogue)
    }

    @Test("Every catalogue rule has its code: errors a verdict code, warnings none, and a summary")
    func catalogueEntries() {
        let verdictCodes: Set<AttributionError.Code> = [
            .malformedInput, .unsupportedAlgorithm, .unknownKey, .untrustedKey, .badSignature, .invalidField,
            .invalidUnsignedField, .duplicate, .unsupportedVersion,
        ]
        for rule in RuleID.allCases {
            #expect(rule.code.map(verdictCodes.contains) ?? true, "\(rule)")
            #expect(!rule.summary.isEmpty && !rule.appliesTo.isEmpty)
        }
        #expect(RuleID.allCases.filter(\.isWarning).map(\.rawValue)
            == ["P5", "U4", "U5", "T1", "T2", "T3", "T4", "T5", "T6", "I2", "I3", "S6", "D2"])
    }

    /// Every fixture that is a postback body or bare postback JWS whose expected result names a rule of the table.
    static let firingFixtures: [FixtureManifest.Entry] = FixtureManifest.entries.filter { entry in
        let table = Set(PostbackRules.all.map(\.id.rawValue))
        return entry.kind == "postback" && entry.line == 1 && entry.skadnetworkTestKeys != true
            && (entry.rule.map(table.contains) == true || entry.warnings.contains(where: table.contains))
    }

    @Test("Each rule of the table fires on some fixture (P5 but needs Apple's development key)")
    func everyRuleHasAFixture() {
        let fired = Set(Self.firingFixtures.flatMap { ($0.rule.map { [$0] } ?? []) + $0.warnings })
        let missing = PostbackRules.all.map(\.id.rawValue).filter { !fired.contains($0) }
        #expect(missing == ["P5"])
    }

    @Test("The fast path declines every fixture on which a rule of the table fires", arguments: firingFixtures)
    func fastPathDeclines(_ entry: FixtureManifest.Entry) throws {
        let verifier = try FixtureManifestTests.verifier(allowingDevelopment: entry.allowDevelopment)
        let bytes = try TestPaths.bytes(TestPaths.fixtures.appendingPathComponent(entry.path))
        var record: [UInt8] = []
        let answered = FastPostbackPath(verifier).appendRecord(for: bytes[...], source: "-", line: 1, to: &record)
        #expect(answered == nil, "the fast path answered although \(entry.rule ?? entry.warnings.joined()) fires")
        #expect(record.isEmpty)
    }

    @Test("--strict gives the same verdicts in text and in JSON Lines, fast path or not")
    func strictVerdictsAgree() throws {
        let arguments = ["--strict", "--allow-development",
                         "--key", "fixture.adattributionkit=Fixtures/keys/fixture.adattributionkit.pem",
                         "--key", "fixture-apple-identifier/0=Fixtures/keys/fixture-apple-identifier-0.pem",
                         "Fixtures/valid", "Fixtures/dedupe"]
        let jsonl = try CommandLineTests.run(arguments + ["--format", "jsonl"])
        let general = try CommandLineTests.run(arguments + ["--format", "jsonl", "--no-fast-path"])
        let text = try CommandLineTests.run(arguments)
        let verdicts = jsonl.records.map { $0["verdict"] as? String }
        #expect(verdicts.count >= 100)
        #expect(verdicts.contains("invalid") && verdicts.contains("valid"), "strict mode must have promoted warnings")
        #expect(general.records.map { $0["verdict"] as? String } == verdicts)
        let textVerdicts = text.stdout.split(separator: "\n").map { $0.contains("  VALID  ") ? "valid" : "invalid" }
        #expect(textVerdicts == verdicts)
        #expect(jsonl.status == text.status)
    }
}
