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
