@_spi(Servers) import AttributionStores
import Foundation
import Testing

@_spi(Servers) @testable import ReceiverCore

@Suite("Relay: webhook signatures, retry schedule, destinations")
struct RelayTests {
    @Test("signs as the Standard Webhooks libraries do (their own example)")
    func standardWebhooksVector() throws {
        let signer = try WebhookSigner(secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw\n", path: "secret")
        #expect(signer.signature(id: "msg_p5jXN8AQM9LWM0D4loKWxJek", timestamp: 1_614_265_330,
                                 body: Array(#"{"test": 2432232314}"#.utf8))
                == "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
    }

    @Test("refuses a secret that is not whsec_ and base64 of 16 bytes or more",
          arguments: ["", "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "whsec_", "whsec_not base64!", "whsec_AAAA"])
    func refusedSecrets(text: String) {
        #expect(throws: StartupFailure.self) { try WebhookSigner(secret: text, path: "secret") }
    }

    @Test("2xx delivered; 4xx dead except 408 and 429; the rest retried",
          arguments: [(200, "delivered"), (204, "delivered"), (400, "dead"), (410, "dead"), (408, "retry"),
                      (429, "retry"), (500, "retry"), (503, "retry"), (302, "retry")])
    func fates(status: Int, expected: String) {
        let fate = RetrySchedule().fate(status: status, retryAfter: nil, attempt: 1)
        switch fate {
        case .delivered: #expect(expected == "delivered")
        case .dead: #expect(expected == "dead")
        case .retry: #expect(expected == "retry")
        }
    }

    @Test("Retry-After is honoured on 429 and 503, in seconds or as an HTTP date")
    func retryAfter() {
        let schedule = RetrySchedule()
        #expect(schedule.fate(status: 429, retryAfter: "7", attempt: 1) == .retry(afterMilliseconds: 7_000))
        let now = Date(timeIntervalSince1970: 1_700_000_000)
        #expect(schedule.fate(status: 503, retryAfter: "Tue, 14 Nov 2023 22:14:20 GMT", attempt: 1, now: now)
                == .retry(afterMilliseconds: 60_000))
    }

    @Test("back-off doubles from the first delay to the cap, jittered within its upper half")
    func backoff() {
        var schedule = RetrySchedule()
        schedule.initialMilliseconds = 1_000
        schedule.maximumMilliseconds = 8_000
        let highest = { (range: ClosedRange<Int64>) in range.upperBound }
        let lowest = { (range: ClosedRange<Int64>) in range.lowerBound }
        #expect((1...6).map { schedule.backoff(afterAttempt: $0, random: highest) }
                == [1_000, 2_000, 4_000, 8_000, 8_000, 8_000])
        #expect(schedule.backoff(afterAttempt: 3, random: lowest) == 2_000)
        #expect(schedule.backoff(afterAttempt: 500, random: highest) == 8_000)
    }

    @Test("--forward appends Apple's path of each route; a URL per route is used as it is")
    func forwardURLs() throws {
        let base = try RelayDestination.forward("https://mmp.example/postbacks/", selection: .valid)
        #expect(base.url(route: "appattribution").absoluteString
                == "https://mmp.example/postbacks/.well-known/appattribution/report-attribution/")
        #expect(base.url(route: "skadnetwork").absoluteString
                == "https://mmp.example/postbacks/.well-known/skadnetwork/report-attribution/")
        let each = try RelayDestination.forward("appattribution=https://a.example/x,skadnetwork=https://b.example/y",
                                                selection: .all)
        #expect(each.url(route: "skadnetwork").absoluteString == "https://b.example/y")
    }

    @Test("refuses destinations that cannot be used, with a usage error",
          arguments: ["ftp://mmp.example/", "https://user:secret@mmp.example/", "not a url",
                      "appattribution=https://a", "https://mmp.example/?q=1"])
    func refusedDestinations(text: String) {
        #expect(throws: StartupFailure.self) { try RelayDestination.forward(text, selection: .valid) }
    }
}
