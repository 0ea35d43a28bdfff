#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The choices that change a verdict beyond the key ring: strictness and the impression clock.
public struct VerificationPolicy: Sendable {
    /// Warnings become errors with code `rule-warning`.
    public var isStrict: Bool
    /// I3's age limit in milliseconds; nil means no age limit (only future timestamps warn).
    public var maximumImpressionAge: UInt64?
    /// Milliseconds since 1970; injectable so tests are deterministic.
    public var clock: @Sendable () -> UInt64

    /// A policy; by default not strict, with no impression-age limit, on the system's clock.
    /// - Parameters:
    ///   - isStrict: warnings become errors with code `rule-warning`.
    ///   - maximumImpressionAge: I3's age limit in milliseconds; nil for none.
    ///   - clock: milliseconds since 1970 (``systemClock``, or a test's).
    public init(
        isStrict: Bool = false,
        maximumImpressionAge: UInt64? = nil,
        clock: @escaping @Sendable () -> UInt64 = VerificationPolicy.systemClock
    ) {
        self.isStrict = isStrict
        self.maximumImpressionAge = maximumImpressionAge
        self.clock = clock
    }

    /// The system's wall clock in milliseconds since 1970.
    public static let systemClock: @Sendable () -> UInt64 = {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return UInt64(max(0, now.tv_sec)) * 1000 + UInt64(max(0, now.tv_nsec)) / 1_000_000
    }
}

extension VerificationPolicy {
    /// A ``maximumImpressionAge`` written as a duration: `30d`, `12h`, `90m`, `3600s`, or a bare number of seconds
    /// (`3600`); ASCII digits only. Nil for anything else, or a duration that overflows milliseconds. The command
    /// line's and the receiver's `--max-impression-age`.
    /// - Parameter text: the duration.
    /// - Returns: the duration in milliseconds, or nil.
    public static func milliseconds(inDuration text: String) -> UInt64? {
        let units: [UInt8: UInt64] = [UInt8(ascii: "s"): 1, UInt8(ascii: "m"): 60, UInt8(ascii: "h"): 3600,
                                      UInt8(ascii: "d"): 86400]
        var digits = Array(text.utf8)
        var unit: UInt64 = 1
        if let last = digits.last, let scale = units[last] {
            unit = scale
            digits.removeLast()
        }
        guard !digits.isEmpty, digits.count <= 19,
              digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return nil }
        let count = digits.reduce(UInt64(0)) { $0 * 10 + UInt64($1 - UInt8(ascii: "0")) }
        let (seconds, overflow1) = count.multipliedReportingOverflow(by: unit)
        let (milliseconds, overflow2) = seconds.multipliedReportingOverflow(by: 1000)
        return overflow1 || overflow2 ? nil : milliseconds
    }
}
