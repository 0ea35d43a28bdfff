@_spi(Servers) import AttributionStores
import Foundation

/// When a failed delivery is tried again, and which answers end it: exponential back-off with jitter from
/// ``initialMilliseconds`` to at most ``maximumMilliseconds``, and a 429 or 503's `Retry-After` honoured.
struct RetrySchedule: Sendable {
    /// The first retry's delay before jitter.
    var initialMilliseconds: Int64 = 1_000
    /// The longest delay (`--relay-max-backoff`).
    var maximumMilliseconds: Int64 = 600_000
    /// The longest `Retry-After` honoured: a destination cannot park a delivery beyond a day at a time.
    static let maximumRetryAfterMilliseconds: Int64 = 86_400_000

    /// The delay after attempt `attempt` (1 for the first) failed: `initial · 2^(attempt-1)`, capped, then a random
    /// point in its upper half (jitter: many deliveries failed together are not retried together).
    func backoff(afterAttempt attempt: Int, random: (ClosedRange<Int64>) -> Int64 = { Int64.random(in: $0) })
        -> Int64 {
        let exponent = min(max(attempt - 1, 0), 40)
        let full = min(maximumMilliseconds, initialMilliseconds.multipliedReportingOverflow(by: 1 << exponent)
            .overflow ? maximumMilliseconds : initialMilliseconds << exponent)
        return random((full / 2)...max(full / 2, full))
    }

    /// What an HTTP answer means: 2xx delivered; another 4xx than 408 and 429 dead; anything else retried, after
    /// `Retry-After` (on 429 and 503) or the back-off.
    func fate(status: Int, retryAfter: String?, attempt: Int, now: Date = Date())
        -> DeliveryOutcome.Fate {
        switch status {
        case 200..<300:
            return .delivered
        case 400..<500 where status != 408 && status != 429:
            return .dead
        default:
            if status == 429 || status == 503, let retryAfter,
               let delay = Self.delay(retryAfter: retryAfter, now: now) {
                return .retry(afterMilliseconds: delay)
            }
            return .retry(afterMilliseconds: backoff(afterAttempt: attempt))
        }
    }

    /// `Retry-After` (RFC 9110 section 10.2.3) as milliseconds from `now`: delay-seconds, or an HTTP-date; nil
    /// when it is neither.
    static func delay(retryAfter text: String, now: Date) -> Int64? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if !trimmed.isEmpty, trimmed.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) {
            guard let seconds = Int64(trimmed.prefix(12)) else { return maximumRetryAfterMilliseconds }
            return min(seconds * 1000, maximumRetryAfterMilliseconds)
        }
        let format = DateFormatter()
        format.locale = Locale(identifier: "en_US_POSIX")
        format.timeZone = TimeZone(identifier: "GMT")
        format.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        guard let date = format.date(from: trimmed) else { return nil }
        return min(max(0, Int64((date.timeIntervalSince(now) * 1000).rounded(.up))), maximumRetryAfterMilliseconds)
    }
}
