@_spi(Servers) import Attribution
import Foundation
import Hummingbird
import HummingbirdTesting
@_spi(Servers) @testable import ReceiverCore
import Testing

/// `--schema` in the receiver: records and metrics of valid postbacks decoded by the schema, as of their arrival.
@Suite struct ReceiverSchemaTests {
    static let schemaPath = TestReceiver.fixture("schema/example-schema.json").path

    @Test("with a schema, a valid postback's row has decoded with the schema's campaign and events; its retry (a duplicate) has none; the metrics count by the schema's names")
    func decodedRecordsAndMetrics() async throws {
        let schema = try ConversionSchema(contentsOfFile: Self.schemaPath)
        var receiver = try TestReceiver(metrics: ReceiverMetrics(schema: schema))
        receiver.configuration.schema = schema
        // What the fixture schema says of Apple's example (app 10738027756, source-identifier 1234, window 1,
        // conversion-value 24), read from the schema file, not from the receiver.
        let file = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: Self.schemaPath)))
            as? [String: Any]
        let app = try #require((file?["apps"] as? [[String: Any]])?.first {
            ($0["advertised-item-identifier"] as? NSNumber)?.uint64Value == 10738027756 })
        let campaign = try #require((app["campaigns"] as? [String: String])?["1234"])
        let meaning = try #require(((app["windows"] as? [String: Any])?["1"] as? [String: Any])
            .flatMap { ($0["fine"] as? [String: Any])?["0-63"] as? [String: Any] })
        let events = try #require(meaning["events"] as? [String])
        let apple = try TestReceiver.body("valid/apple/postback-development-valid.json")
        try await receiver.application().test(.router) { client in
            for body in [apple, apple, try TestReceiver.body("valid/postback/low-s-signature.json")] {
                #expect(try await client.execute(uri: TestReceiver.appAttributionPath, method: .post,
                                                 body: body).status == .ok)
            }
        }
        let rows = try receiver.rows()
        try #require(rows.count == 3)
        let records = try rows.map { try #require(JSONSerialization.jsonObject(with: Data($0.record.utf8)) as? [String: Any]) }
        let decoded = try #require(records[0]["decoded"] as? [String: Any])
        #expect(decoded["campaign"] as? String == campaign)
        #expect(decoded["window"] as? Int == 1)
        #expect(decoded["events"] as? [String] == events)
        #expect(decoded["values-signed"] as? Bool == false)
        #expect(records[1]["decoded"] == nil)
        #expect(records[1]["duplicate-of-source"] != nil)
        let lowS = try #require(records[2]["decoded"] as? [String: Any])
        #expect(lowS["app-known"] as? Bool == true)
        let text = String(decoding: receiver.metrics.render(), as: UTF8.self)
        #expect(text.contains("postback_receiver_decoded_total{campaign=\"\(campaign)\",window=\"1\"} 1\n"))
        #expect(text.contains("postback_receiver_decoded_total{campaign=\"\(campaign)\",window=\"2\"} 0\n"))
        for event in events {
            #expect(text.contains("postback_receiver_decoded_events_total{event=\"\(event)\"} 1\n"))
        }
        let high = try #require((meaning["revenue"] as? [String: Any])?["high"] as? NSNumber).doubleValue
        let currency = try #require(app["currency"] as? String)
        #expect(text.contains("postback_receiver_decoded_revenue_high_total{campaign=\"\(campaign)\",currency=\"\(currency)\"} \(high)\n"))
        #expect(text.contains("postback_receiver_decoded_events_total{event=\"purchase\"} 0\n"))
    }

    @Test("decoded metrics take label values from the schema only: ids the schema does not name and apps it does not have count under the reserved labels, and add no series")
    func boundedDecodedLabels() async throws {
        let schema = try ConversionSchema(contentsOfFile: Self.schemaPath)
        var receiver = try TestReceiver(metrics: ReceiverMetrics(schema: schema))
        receiver.configuration.schema = schema
        func series() -> Int {
            String(decoding: receiver.metrics.render(), as: UTF8.self).split(separator: "\n")
                .filter { !$0.hasPrefix("#") }.count
        }
        let before = series()
        // Valid postbacks with a source-identifier the schema does not name (9876 of a known app; 12 of app
        // 10738027756, which names only 1234), of an app it does not have (0), and a forgery.
        let bodies = try ["valid/postback/tier2-index0-4digit-source-no-value.json",
                          "valid/postback/advertised-item-above-2-32.json", "valid/postback/advertised-item-0.json",
                          "invalid/apple/postback-production-bad-signature.json"].map(TestReceiver.body)
        try await receiver.application().test(.router) { client in
            for body in bodies {
                let response = try await client.execute(uri: TestReceiver.appAttributionPath, method: .post,
                                                        body: body)
                #expect(response.status == .ok)
            }
        }
        #expect(try receiver.rows().map(\.verdict) == ["valid", "valid", "valid", "invalid"])
        #expect(series() == before)
        let text = String(decoding: receiver.metrics.render(), as: UTF8.self)
        #expect(text.contains("postback_receiver_decoded_total{campaign=\"(unnamed)\",window=\"1\"} 2\n"))
        #expect(text.contains("postback_receiver_decoded_total{campaign=\"(app not in schema)\",window=\"1\"} 1\n"))
        #expect(!text.contains("9876"))
    }

    @Test("an SKAdNetwork postback is decoded too: Apple's 3.0 example by its campaign-id's name, its value unsigned, counted under a series made at start-up")
    func skAdNetworkDecoded() async throws {
        let schema = try ConversionSchema(contentsOfFile: Self.schemaPath)
        var receiver = try TestReceiver(metrics: ReceiverMetrics(schema: schema))
        receiver.configuration.schema = schema
        // What the fixture schema says of app 525463029's campaign-id 42, read from the file.
        let file = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: Self.schemaPath)))
            as? [String: Any]
        let app = try #require((file?["apps"] as? [[String: Any]])?.first {
            ($0["advertised-item-identifier"] as? NSNumber)?.uint64Value == 525463029 })
        let campaign = try #require((app["campaign-ids"] as? [String: String])?["42"])
        // Its conversion-value, 20, is window 1's fine value 20 (the range "20-39").
        let events = try #require((((app["windows"] as? [String: Any])?["1"] as? [String: Any])?["fine"]
            as? [String: Any])?["20-39"] as? [String: Any])?["events"] as? [String]
        let series = "postback_receiver_decoded_total{campaign=\"\(campaign)\",window=\"1\"}"
        #expect(String(decoding: receiver.metrics.render(), as: UTF8.self).contains(series + " 0\n"))
        let body = try TestReceiver.body("valid/skadnetwork-apple/3.0-winning-valid.json")
        try await receiver.application().test(.router) { client in
            for body in [body, body] {
                let response = try await client.execute(uri: TestReceiver.skAdNetworkPath, method: .post, body: body)
                #expect(response.status == .ok)
            }
        }
        let records = try receiver.rows().map {
            try #require(JSONSerialization.jsonObject(with: Data($0.record.utf8)) as? [String: Any])
        }
        try #require(records.count == 2)
        let decoded = try #require(records[0]["decoded"] as? [String: Any])
        #expect(decoded["campaign"] as? String == campaign)
        #expect(decoded["window"] as? Int == 1)
        #expect(decoded["values-signed"] as? Bool == false)
        #expect(decoded["app-known"] as? Bool == true)
        #expect(decoded["fine-value"] as? Int == 20)
        #expect(decoded["events"] as? [String] == events)
        #expect(records[1]["decoded"] == nil, "the retry is a duplicate")
        #expect(String(decoding: receiver.metrics.render(), as: UTF8.self).contains(series + " 1\n"))
    }
}
