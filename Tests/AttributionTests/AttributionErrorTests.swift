import Foundation
import Testing

@_spi(CommandLine) @_spi(Servers) @_spi(Stores) @testable import Attribution

/// Issue 18 item 3: one error type with a closed set of codes for everything the library throws or reports.
@Suite("One error type, one closed set of codes")
struct AttributionErrorTests {
    /// The backticked words of `text` (a document's list of codes).
    static func backticked(_ text: Substring) -> [String] {
        text.split(separator: "`", omittingEmptySubsequences: false).enumerated()
            .filter { $0.offset % 2 == 1 }.map { String($0.element) }
    }

    @Test("Every code has its own raw value, and docs/cli.md lists exactly the item codes, in order")
    func codesAreOneClosedSet() throws {
        let raw = AttributionError.Code.allCases.map(\.rawValue)
        #expect(Set(raw).count == raw.count)
        let cli = try Documents.text("docs/cli.md")
        let start = try #require(cli.range(of: "**Error codes** (`errors[].code`):"))
        let end = try #require(cli[start.upperBound...].range(of: ".\n"))
        #expect(Self.backticked(cli[start.upperBound..<end.lowerBound])
            == AttributionError.Code.itemCodes.map(\.rawValue))
    }

    @Test("docs/state.md's table names every state code a store throws")
    func stateCodesDocumented() throws {
        let state = try Documents.text("docs/state.md")
        let stateCodes = AttributionError.Code.allCases.filter {
            !AttributionError.Code.itemCodes.contains($0) && $0 != .invalidKey && $0 != .invalidOption
                && $0 != .invalidSchema
        }
        #expect(stateCodes.count == 7)
        for code in stateCodes {
            #expect(state.contains("| `\(code.rawValue)` |"), "\(code)")
        }
    }

    @Test("Every error rule of the catalogue has an item code; warnings have none")
    func rulesUseTheItemCodes() {
        for rule in RuleID.allCases {
            if let code = rule.code {
                #expect(AttributionError.Code.itemCodes.contains(code) && code != .ruleWarning, "\(rule)")
                #expect(AttributionError(rule, "x").code == code, "\(rule)")
            }
        }
    }

    @Test("Equal on code and rule, never on the reason or the throw site")
    func equalOnCodeAndRule() {
        #expect(AttributionError(.busy, "one") == AttributionError(.busy, "two"))
        #expect(AttributionError(.busy, "one") != AttributionError(.failed, "one"))
        #expect(AttributionError.malformed("one") == AttributionError(.j1, "two"))
        #expect(AttributionError(.malformedInput, "no rule") != AttributionError.malformed("J1"))
        #expect(AttributionError(.j3, "x") != AttributionError(.j4, "x"))
    }

    @Test("Described as `code (RULE): reason`, or `code: reason` without a rule")
    func descriptions() {
        #expect(AttributionError.malformed("bad").description == "malformed-input (J1): bad")
        #expect(AttributionError(.notOurs, "state.sqlite is not ours").description
            == "not-ours: state.sqlite is not ours")
    }

    @Test("An error about an item becomes its finding: the rule, the rule's code, the reason")
    func errorBecomesFinding() {
        let finding = Finding(AttributionError(.s3, "attribution-signature is empty"))
        #expect(finding.rule == .s3 && finding.code == .badSignature)
        #expect(finding.message == "attribution-signature is empty")
        #expect(Finding(AttributionError.malformed("not JSON")) == Finding(.j1, "not JSON"))
    }

    @Test("A key the library cannot use is invalid-key with no rule; an unknown kid is the J3 finding")
    func keyErrorsHaveNoRule() throws {
        #expect(throws: AttributionError(.invalidKey, "")) { try ECPublicKey(derRepresentation: [0x30, 0x00]) }
        var ring = KeyRing()
        #expect(throws: AttributionError(.invalidKey, "")) {
            try ring.add(try FixtureManifest.fixtureKey(), keyID: "")
        }
        guard case .failure(let error) = KeyRing().trustedKey(for: "no-such-kid") else {
            Issue.record("an unknown kid was trusted")
            return
        }
        #expect(error.rule == .j3 && error.code == .unknownKey)
    }
}
