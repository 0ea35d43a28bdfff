import Foundation
import Testing
@_spi(CommandLine) @_spi(Servers) @_spi(Stores) @testable import Attribution
@_spi(CommandLine) @_spi(Servers) @testable import AttributionStores

/// `VerifierOptions` and `StateLocation`: the one definition of the setup options both executables take, their
/// messages and codes, and what they build (issue 22 item 2).
@Suite("Setup options: VerifierOptions and StateLocation")
struct SetupOptionsTests {
    @Test("--key takes KID=PATH, the kid being everything before the first =",
          arguments: [("kid=path.pem", "kid", "path.pem"), ("a/b=c=d", "a/b", "c=d"), ("k= x", "k", " x")])
    func keyArgument(_ argument: String, keyID: String, path: String) throws {
        var options = VerifierOptions()
        try options.addKey(argument)
        #expect(options.keyFiles == [VerifierOptions.KeyFile(keyID: keyID, path: path)])
    }

    @Test("--key of another form is invalid-option, naming the form", arguments: ["", "=path", "kid=", "kid", "="])
    func keyArgumentRefused(_ argument: String) {
        var options = VerifierOptions()
        #expect {
            try options.addKey(argument)
        } throws: { error in
            let error = error as? AttributionError
            return error?.code == .invalidOption && error?.reason == "--key takes KID=PATH, got \(argument)"
        }
    }

    @Test("A SKAdNetwork replacement key option given twice is refused")
    func skAdNetworkKeyTwice() throws {
        var options = VerifierOptions()
        try options.replaceSKAdNetworkKey(.p192, path: "a.pem")
        try options.replaceSKAdNetworkKey(.p256, path: "b.pem")
        #expect(throws: AttributionError(.invalidOption, "")) { try options.replaceSKAdNetworkKey(.p192, path: "c") }
        #expect(options.skAdNetworkKeyPaths == [.p192: "a.pem", .p256: "b.pem"])
    }

    @Test("--max-impression-age takes a duration; anything else is invalid-option",
          arguments: [("30d", 2_592_000_000), ("12h", 43_200_000), ("3600", 3_600_000)] as [(String, UInt64)])
    func impressionAge(_ text: String, milliseconds: UInt64) throws {
        var options = VerifierOptions()
        try options.setMaximumImpressionAge(text)
        #expect(options.policy.maximumImpressionAge == milliseconds)
        #expect(throws: AttributionError(.invalidOption, "")) { try options.setMaximumImpressionAge("soon") }
    }

    @Test("The key ring trusts each --key for its kid; a file that is no key is invalid-key naming file and kid")
    func keyRing() throws {
        var options = VerifierOptions()
        try options.addKey("fixture-apple-identifier/0="
            + TestPaths.packageRoot.appendingPathComponent("Fixtures/keys/fixture-apple-identifier-0.pem").path)
        let ring = try options.keyRing()
        #expect((try? ring.trustedKey(for: "fixture-apple-identifier/0").get()) != nil)
        #expect((try? ring.trustedKey(for: "mine").get()) == nil)

        let garbage = FileManager.default.temporaryDirectory.appendingPathComponent("not-a-key-\(getpid()).pem")
        try Data("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n".utf8).write(to: garbage)
        defer { try? FileManager.default.removeItem(at: garbage) }
        try options.addKey("mine=\(garbage.path)")
        #expect {
            try options.keyRing()
        } throws: { error in
            let error = error as? AttributionError
            return error?.code == .invalidKey
                && error?.reason.hasPrefix("key file \(garbage.path) (for kid mine) cannot be used: ") == true
        }
    }

    @Test("--state: a PostgreSQL URL or libpq keyword string names a server, anything else a SQLite file",
          arguments: [("postgresql://u@127.0.0.1/db", true), ("host=/tmp dbname=x", true), ("state.sqlite", false),
                      ("./-", false)])
    func stateLocation(_ argument: String, isServer: Bool) throws {
        let location = try StateLocation(argument)
        #expect(location == (isServer ? .postgreSQL(connection: argument) : .sqlite(path: argument)))
    }

    @Test("--state empty or - is invalid-option with its remedy", arguments: ["", "-"])
    func stateRefused(_ argument: String) {
        #expect(throws: AttributionError(.invalidOption, "")) { try StateLocation(argument) }
    }

    @Test("--retention takes 0 to 36500 days in ASCII digits",
          arguments: [("0", 0), ("10", 10), ("36500", 36_500), ("007", 7)])
    func retention(_ text: String, days: Int) throws {
        #expect(try StateLocation.retentionDays(text) == days)
    }

    @Test("--retention of another form is invalid-option, naming the range",
          arguments: ["", "-1", "36501", "+5", " 5", "5d", "\u{0661}\u{0660}", "99999999999999999999"])
    func retentionRefused(_ text: String) {
        #expect {
            _ = try StateLocation.retentionDays(text)
        } throws: { error in
            let error = error as? AttributionError
            return error?.code == .invalidOption
                && error?.reason == "--retention takes a whole number of days from 0 to 36500, not \(text)"
        }
    }
}
