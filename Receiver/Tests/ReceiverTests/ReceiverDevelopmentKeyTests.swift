@_spi(Servers) import Attribution
import Foundation
import Hummingbird
import HummingbirdTesting
@_spi(Servers) @testable import ReceiverCore
import Testing

/// Issue 33: a receiver started with `--allow-development` said nothing about trusting keys any device in developer
/// mode can sign with. It now warns once at start-up, in its log format, and its metrics say so while it runs.
/// In process, on a real socket (`.live`: the warning comes when the listener is bound, as the binary's does).
@Suite("Development keys at receiver start-up")
struct ReceiverDevelopmentKeyTests {
    /// A receiver whose key ring trusts Apple's development keys or not (the fixture key either way).
    static func receiver(trustingDevelopmentKeys: Bool) throws -> TestReceiver {
        var receiver = try TestReceiver()
        var ring = KeyRing(allowingDevelopmentKeys: trustingDevelopmentKeys)
        try ring.add(ECPublicKey(keyFile: TestReceiver.fixture("keys/fixture-apple-identifier-0.pem").path),
                     keyID: "fixture-apple-identifier/0")
        receiver.configuration = ReceiverConfiguration(verifier: AttributionVerifier(keyRing: ring))
        receiver.configuration.storage = .durable(state: .sqlite(path: receiver.statePath),
                                                  archive: receiver.archivePath)
        return receiver
    }

    /// The value of an unlabelled series in the Prometheus text `/metrics` serves, or nil when it is not there.
    static func value(of name: String, in metrics: ReceiverMetrics) -> Double? {
        let text = String(decoding: metrics.render(), as: UTF8.self)
        let line = text.split(separator: "\n").first { $0.hasPrefix(name + " ") }
        return line.flatMap { Double($0.dropFirst(name.count + 1)) }
    }

    @Test("Regression (development keys at start-up): --allow-development logs one warning line and sets the gauge 1",
          arguments: ReceiverLogHandler.Format.allCases)
    func developmentKeysWarned(format: ReceiverLogHandler.Format) async throws {
        let receiver = try Self.receiver(trustingDevelopmentKeys: true)
        let lines = LogLines()
        try await receiver.application(loggingTo: lines, format: format).test(.live) { client in
            let response = try await client.execute(uri: "/healthz", method: .get)
            #expect(response.status == .ok)
        }
        let warnings = lines.all.filter { $0.contains("development keys") }
        try #require(warnings.count == 1, "\(lines.all)")
        let line = warnings[0]
        #expect(line.hasSuffix("\n") && line.dropLast().contains("\n") == false, "one line: \(line)")
        switch format {
        case .text:
            #expect(line.contains("Z warning Apple's development keys are trusted (--allow-development): "), "\(line)")
        case .json:
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            #expect(object?["level"] as? String == "warning")
            #expect((object?["message"] as? String)?.hasPrefix("Apple's development keys are trusted") == true)
        }
        #expect(line.contains("never on production traffic"))
        #expect(Self.value(of: "postback_receiver_development_keys_trusted", in: receiver.metrics) == 1)
    }

    @Test("Regression (development keys at start-up): without --allow-development, no warning and the gauge is 0")
    func productionKeysOnlyQuiet() async throws {
        let receiver = try Self.receiver(trustingDevelopmentKeys: false)
        let lines = LogLines()
        try await receiver.application(loggingTo: lines, format: .text).test(.live) { client in
            let response = try await client.execute(uri: "/healthz", method: .get)
            #expect(response.status == .ok)
        }
        #expect(lines.all.contains { $0.contains("Request") }, "the log was collected, or this proves nothing")
        #expect(!lines.all.contains { $0.contains("development keys") }, "\(lines.all)")
        #expect(Self.value(of: "postback_receiver_development_keys_trusted", in: receiver.metrics) == 0)
    }
}
