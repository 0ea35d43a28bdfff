import Foundation
import Hummingbird
import HummingbirdTesting
@_spi(Servers) @testable import ReceiverCore
import Testing

/// The receiver's routes in process (HummingbirdTesting's router client: the real responder, group queues and
/// SQLite files, no socket). The end-to-end script (Tests/e2e.sh) does the same through the built binary.
@Suite struct ReceiverRouteTests {
    static let other: [(method: HTTPRequest.Method, path: String)] = [
        (.get, TestReceiver.appAttributionPath), (.get, "/"), (.post, "/"), (.post, "/.well-known/appattribution/"),
        (.delete, "/healthz"), (.post, "/metrics"), (.head, "/healthz"), (.put, TestReceiver.skAdNetworkPath),
        (.post, "/.well-known/appattribution/report-attribution/extra"),
        (.post, "/.WELL-KNOWN/appattribution/report-attribution/"), (.post, "/.well-known/appattribution%2Freport-attribution/"),
    ]

    @Test("anything but POST on Apple's two paths and GET on /healthz, /readyz and /metrics is the router's 404; nothing stored (its count under route other is checked through the binary, Tests/e2e.sh)",
          arguments: Self.other)
    func notFound(method: HTTPRequest.Method, path: String) async throws {
        let receiver = try TestReceiver()
        try await receiver.application().test(.router) { client in
            let response = try await client.execute(uri: path, method: method, body: ByteBuffer(string: "{}"))
            #expect(response.status == .notFound)
        }
        #expect(try receiver.rows().isEmpty)
    }

    @Test("the router matches by path components: a trailing slash, or none, or an empty component is the same route",
          arguments: ["/.well-known/appattribution/report-attribution", "/.well-known/appattribution/report-attribution//",
                      "//.well-known/appattribution/report-attribution/"])
    func componentMatching(path: String) async throws {
        let receiver = try TestReceiver()
        let body = try TestReceiver.body("valid/apple/postback-development-valid.json")
        try await receiver.application().test(.router) { client in
            let response = try await client.execute(uri: path, method: .post, body: body)
            #expect(response.status == .ok)
        }
        #expect(try receiver.rows().map(\.verdict) == ["valid"])
    }

    @Test func healthAndMetrics() async throws {
        let receiver = try TestReceiver()
        try await receiver.application().test(.router) { client in
            let health = try await client.execute(uri: "/healthz", method: .get)
            #expect(health.status == .ok)
            #expect(String(buffer: health.body) == "ok\n")
            let metrics = try await client.execute(uri: "/metrics", method: .get)
            #expect(metrics.status == .ok)
            // Every request series is there from the start (the middleware's counts land on them).
            #expect(String(buffer: metrics.body).contains("postback_receiver_requests_total{route=\"healthz\",status=\"2xx\"} "))
        }
    }

    @Test("every stored postback gets the same empty 200, valid or not; its row holds the bytes and the verdict",
          arguments: [
              ("valid/apple/postback-development-valid.json", TestReceiver.appAttributionPath, "valid", String?.none),
              ("invalid/apple/postback-production-bad-signature.json", TestReceiver.appAttributionPath, "invalid",
               "bad-signature"),
              ("valid/postback/high-s-signature.json", "/.well-known/appattribution/report-attribution", "valid", nil),
              ("valid/skadnetwork-apple/2.1-valid.json", TestReceiver.skAdNetworkPath, "valid", nil),
              ("invalid/postback/j5-tampered-payload.json", TestReceiver.appAttributionPath, "invalid",
               "bad-signature"),
          ])
    func storedWhateverTheVerdict(fixture: String, path: String, verdict: String, code: String?) async throws {
        let receiver = try TestReceiver()
        let body = try TestReceiver.body(fixture)
        try await receiver.application().test(.router) { client in
            let response = try await client.execute(uri: path, method: .post, body: body)
            #expect(response.status == .ok)
            #expect(response.body.readableBytes == 0)
        }
        let rows = try receiver.rows()
        #expect(rows.count == 1)
        #expect(rows.first?.verdict == verdict)
        #expect(rows.first?.code == code)
        #expect(rows.first?.body == Array(buffer: body))
    }

    @Test func bodyCap() async throws {
        let receiver = try TestReceiver()
        let exact = try TestReceiver.body("valid/postback/size-exactly-16384-bytes.json")
        #expect(exact.readableBytes == 16384)
        var extended = exact
        extended.writeString(" ")
        let over = extended
        try await receiver.application().test(.router) { client in
            let fits = try await client.execute(uri: TestReceiver.appAttributionPath, method: .post, body: exact)
            #expect(fits.status == .ok)
            let tooLarge = try await client.execute(uri: TestReceiver.appAttributionPath, method: .post, body: over)
            #expect(tooLarge.status == .contentTooLarge)
        }
        #expect(try receiver.rows().map(\.verdict) == ["valid"])
    }

    @Test("a retry is stored as a duplicate of the first sighting, and counted valid once")
    func retries() async throws {
        let receiver = try TestReceiver()
        let body = try TestReceiver.body("valid/apple/postback-development-valid.json")
        try await receiver.application().test(.router) { client in
            for _ in 0..<3 {
                let response = try await client.execute(uri: TestReceiver.appAttributionPath, method: .post, body: body)
                #expect(response.status == .ok)
                #expect(response.body.readableBytes == 0)
            }
        }
        let rows = try receiver.rows()
        #expect(rows.map(\.verdict) == ["valid", "invalid", "invalid"])
        #expect(rows.map(\.code) == [nil, "duplicate", "duplicate"])
        let first = try JSONSerialization.jsonObject(with: Data(rows[0].record.utf8)) as? [String: Any]
        let retry = try JSONSerialization.jsonObject(with: Data(rows[2].record.utf8)) as? [String: Any]
        let source = try #require(first?["source"] as? String)
        #expect(retry?["duplicate-of-source"] as? String == source)
        #expect(receiver.metric("postback_receiver_verdicts_total",
                                ["kind": "postback", "verdict": "valid", "code": "none"]) == 1)
        #expect(receiver.metric("postback_receiver_verdicts_total",
                                ["kind": "postback", "verdict": "invalid", "code": "duplicate"]) == 2)
    }

    @Test("invalid bodies beyond the hourly quota are answered 200 and only counted; valid ones are still stored")
    func invalidQuota() async throws {
        let receiver = try TestReceiver(invalidQuota: 2)
        try await receiver.application().test(.router) { client in
            for number in 0..<5 {
                let response = try await client.execute(
                    uri: TestReceiver.appAttributionPath, method: .post,
                    body: ByteBuffer(string: #"{"jws-string":"forged.\#(number).x"}"#))
                #expect(response.status == .ok)
                #expect(response.body.readableBytes == 0)
            }
            let valid = try await client.execute(uri: TestReceiver.appAttributionPath, method: .post,
                                                 body: try TestReceiver.body("valid/postback/low-s-signature.json"))
            #expect(valid.status == .ok)
        }
        #expect(try receiver.rows().map(\.verdict) == ["invalid", "invalid", "valid"])
        #expect(receiver.metric("postback_receiver_not_stored_total", ["reason": "quota"]) == 3)
    }

    @Test("metrics keep their series whatever methods, paths and bodies an attacker sends, the middleware's included")
    func boundedLabels() async throws {
        // The process's MetricsSystem (Hummingbird's MetricsMiddleware records there): other tests' requests land
        // on it too, so the counts are compared as at least, the series exactly.
        let receiver = try TestReceiver(metrics: TestReceiver.processMetrics)
        func seriesCount() -> Int {
            String(decoding: receiver.metrics.render(), as: UTF8.self).split(separator: "\n")
                .filter { !$0.hasPrefix("#") }.count
        }
        let before = seriesCount()
        let otherBefore = receiver.metric("postback_receiver_requests_total", ["route": "other", "status": "4xx"])
        let methods: [HTTPRequest.Method] = [.get, .post, .put, .delete, .patch, .options, .head, .connect, .trace,
                                             HTTPRequest.Method("PROPFIND")!, HTTPRequest.Method("X-ANYTHING")!]
        try await receiver.application().test(.router) { client in
            for number in 0..<50 {
                _ = try await client.execute(uri: "/probe/\(number)?x=\(number)", method: methods[number % methods.count])
                _ = try await client.execute(
                    uri: TestReceiver.appAttributionPath, method: .post,
                    body: ByteBuffer(string: #"{"jws-string":"eyJraWQiOiJ4\#(number)IiwiYWxnIjoiRVMyNTYifQ.e30.AA"}"#))
            }
        }
        #expect(seriesCount() == before)
        #expect(receiver.metric("postback_receiver_requests_total", ["route": "other", "status": "4xx"])
                    >= otherBefore + 50)
        #expect(receiver.metric("postback_receiver_requests_total", ["route": "appattribution", "status": "2xx"]) >= 50)
        #expect(receiver.metric("postback_receiver_request_errors_total", ["route": "other", "status": "4xx"]) >= 50)
    }
}
