@_spi(Servers) import Attribution
import Foundation
import Hummingbird
import HummingbirdTesting
@_spi(Servers) @testable import ReceiverCore
import Testing

/// `--schema` version 2 in the receiver: the decoded series gain a `network` label whose values come from the
/// schema alone, and records name the network and the app.
@Suite struct ReceiverSchemaNetworkTests {
    static let schemaPath = TestReceiver.fixture("schema/example-schema-v2.json").path

    /// The fixture schema's app entry for `app`, read with Foundation's parser, not the receiver's.
    static func app(_ app: UInt64) throws -> [String: Any] {
        let file = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: schemaPath)))
            as? [String: Any]
        return try #require((file?["apps"] as? [[String: Any]])?.first {
            ($0["advertised-item-identifier"] as? NSNumber)?.uint64Value == app })
    }

    /// The entry's network of `id`: its name and its `campaign-ids` or `campaigns`.
    static func network(_ id: String, of app: [String: Any]) throws -> [String: Any] {
        try #require((app["networks"] as? [[String: Any]])?.first {
            ($0["ad-network-id"] as? String)?.utf8.elementsEqual(id.utf8) == true })
    }

    /// A network the app's entry does not list and an app the schema does not have count under reserved labels.
    @Test("the decoded series carry the schema's network names only, and gain no series from traffic")
    func networkLabels() async throws {
        let schema = try ConversionSchema(contentsOfFile: Self.schemaPath)
        var receiver = try TestReceiver(metrics: ReceiverMetrics(schema: schema))
        receiver.configuration.schema = schema
        func text() -> String { String(decoding: receiver.metrics.render(), as: UTF8.self) }
        let before = text().split(separator: "\n").filter { !$0.hasPrefix("#") }.count
        // Apple's development example: app 10738027756, development.adattributionkit, source 1234.
        let apple = try Self.app(10738027756)
        let development = try Self.network("development.adattributionkit", of: apple)
        let developmentName = try #require(development["name"] as? String)
        let developmentCampaign = try #require((development["campaigns"] as? [String: Any])?["1234"] as? String)
        // SKAdNetwork 2.1 (com.example) and 3.0 (example123.skadnetwork), both campaign-id 42 of app 525463029.
        let skAdNetworkApp = try Self.app(525463029)
        let names = try ["com.example", "example123.skadnetwork"].map { id in
            let network = try Self.network(id, of: skAdNetworkApp)
            return (network: try #require(network["name"] as? String),
                    campaign: try #require((network["campaign-ids"] as? [String: Any])?["42"] as? String))
        }
        #expect(names[0].campaign != names[1].campaign, "the premise: one campaign id, two campaigns")
        let bodies = try [
            (TestReceiver.appAttributionPath, "valid/apple/postback-development-valid.json"),
            // fixture.adattributionkit, which app 10738027756's entry does not list, source 12 it does not name.
            (TestReceiver.appAttributionPath, "valid/postback/advertised-item-above-2-32.json"),
            // App 0: not in the schema.
            (TestReceiver.appAttributionPath, "valid/postback/advertised-item-0.json"),
            (TestReceiver.skAdNetworkPath, "valid/skadnetwork-apple/2.1-valid.json"),
            (TestReceiver.skAdNetworkPath, "valid/skadnetwork-apple/3.0-winning-valid.json"),
        ].map { ($0.0, try TestReceiver.body($0.1)) }
        try await receiver.application().test(.router) { client in
            for (path, body) in bodies {
                let response = try await client.execute(uri: path, method: .post, body: body)
                #expect(response.status == .ok)
            }
        }
        let records = try receiver.rows().map {
            try #require(JSONSerialization.jsonObject(with: Data($0.record.utf8)) as? [String: Any])
        }
        try #require(records.count == bodies.count)
        let decoded = try records.map { try #require($0["decoded"] as? [String: Any]) }
        #expect(decoded[0]["network"] as? String == developmentName)
        #expect(decoded[0]["app-name"] as? String == apple["name"] as? String)
        #expect(decoded[1]["network"] is NSNull && decoded[1]["app-name"] as? String == apple["name"] as? String)
        #expect(decoded[2]["network"] is NSNull && decoded[2]["app-name"] is NSNull)
        #expect(decoded[3]["campaign"] as? String == names[0].campaign)
        #expect(decoded[4]["campaign"] as? String == names[1].campaign)

        let metrics = text()
        func count(_ campaign: String, _ network: String) -> String {
            "postback_receiver_decoded_total{campaign=\"\(campaign)\",network=\"\(network)\",window=\"1\"} 1\n"
        }
        #expect(metrics.contains(count(developmentCampaign, developmentName)))
        #expect(metrics.contains(count("(unnamed)", "(network not in schema)")))
        #expect(metrics.contains(count("(app not in schema)", "(network not in schema)")))
        #expect(metrics.contains(count(names[0].campaign, names[0].network)))
        #expect(metrics.contains(count(names[1].campaign, names[1].network)))
        // An event counted under its network: Apple's example's value means "install".
        #expect(metrics.contains(
            "postback_receiver_decoded_events_total{event=\"install\",network=\"\(developmentName)\"} 1\n"))
        #expect(metrics.split(separator: "\n").filter { !$0.hasPrefix("#") }.count == before)
        #expect(!metrics.contains("fixture.adattributionkit") && !metrics.contains("example123.skadnetwork"),
                "no label value from a postback")
    }

    @Test("with a version 1 schema the decoded series have no network label")
    func versionOneUnlabelled() throws {
        let schema = try ConversionSchema(contentsOfFile: TestReceiver.fixture("schema/example-schema.json").path)
        let text = String(decoding: ReceiverMetrics(schema: schema).render(), as: UTF8.self)
        #expect(text.contains("postback_receiver_decoded_total{campaign=\"(unnamed)\",window=\"1\"} 0\n"))
        #expect(!text.contains("network="))
    }
}
