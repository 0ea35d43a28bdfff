import Foundation
import Testing
@_spi(CommandLine) @_spi(Servers) @_spi(Stores) @testable import Attribution

/// `duplicate-of-run` is RFC 3339 in UTC with milliseconds; checked against dates worked out by hand.
@Suite("RFC 3339 timestamps")
struct RFC3339TimestampTests {
    @Test("Known instants", arguments: [
        (0.0, "1970-01-01T00:00:00.000Z"),
        (951_782_400.5, "2000-02-29T00:00:00.500Z"),  // a leap day of a century leap year
        (1_795_305_599.999, "2026-11-21T23:59:59.999Z"),
        (-1.0, "1969-12-31T23:59:59.000Z"),
        (4_102_444_800.0, "2100-01-01T00:00:00.000Z"),
    ])
    func knownInstants(seconds: Double, text: String) {
        #expect(RFC3339Timestamp.string(Date(timeIntervalSince1970: seconds)) == text)
    }

    @Test("Foundation's ISO 8601 parser reads back the same millisecond")
    func roundTrip() throws {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        var random = SplitMix64(seed: 7)
        for _ in 0..<200 {
            let milliseconds = Int64.random(in: 0...4_102_444_800_000, using: &random)
            let date = Date(timeIntervalSince1970: Double(milliseconds) / 1000)
            #expect(date.millisecondsSince1970 == milliseconds, "the state's whole milliseconds read back exactly")
            let parsed = try #require(formatter.date(from: RFC3339Timestamp.string(date)))
            #expect(Int64((parsed.timeIntervalSince1970 * 1000).rounded()) == milliseconds)
        }
    }
}
