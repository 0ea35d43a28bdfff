import Foundation

/// The seeds of the tests' random draws, so any failure can be replayed: `POSTBACK_VERIFY_TEST_SEED` (decimal or
/// `0x` hexadecimal) when set, else the test's own default (a fixed seed, or one taken from the clock for tests that
/// should explore new values on every run). Every seed is printed with the test's name before it is used.
enum TestSeed {
    /// The environment variable that replays a run: `POSTBACK_VERIFY_TEST_SEED=0x... swift test --filter NAME`.
    static let variable = "POSTBACK_VERIFY_TEST_SEED"

    /// The seed from `POSTBACK_VERIFY_TEST_SEED`, nil when unset; a value that is not a number stops the test run
    /// (a typo must not silently run another seed).
    static let fromEnvironment: UInt64? = {
        guard let text = ProcessInfo.processInfo.environment[variable] else { return nil }
        let parsed = text.hasPrefix("0x") ? UInt64(text.dropFirst(2), radix: 16) : UInt64(text)
        guard let parsed else { fatalError("\(variable)=\(text) is not a decimal or 0x hexadecimal UInt64") }
        return parsed
    }()

    /// The seed for `test`: the environment's, else `fixed`, else one from the clock; printed either way.
    static func value(for test: String, fixed: UInt64? = nil) -> UInt64 {
        let seed = fromEnvironment ?? fixed ?? UInt64(truncatingIfNeeded: DispatchTime.now().uptimeNanoseconds)
            ^ UInt64(bitPattern: Int64(Date().timeIntervalSince1970 * 1e6))
        print("\(test): random seed 0x\(String(seed, radix: 16)) (replay: \(variable)=0x\(String(seed, radix: 16)))")
        return seed
    }

    /// A generator seeded by ``value(for:fixed:)``.
    static func generator(for test: String, fixed: UInt64? = nil) -> SplitMix64 {
        SplitMix64(seed: value(for: test, fixed: fixed))
    }
}
