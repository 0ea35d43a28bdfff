import Foundation
import Synchronization

/// Request ids: this process's start (milliseconds since 1970, base 36) and a random tag, then a sequence number,
/// e.g. `mia4x2k1-7f3a9c-42`. Unique across restarts and machines for practical purposes, cheap (no UUID per
/// request), and what a duplicate's `duplicate-of-source` names.
final class RequestIDs: Sendable {
    private let prefix: String
    private let next = Atomic<UInt64>(1)

    init() {
        let started = UInt64(Date().timeIntervalSince1970 * 1000)
        let tag = UInt32.random(in: 0...0xFF_FFFF)
        prefix = String(started, radix: 36) + "-" + String(tag, radix: 16)
    }

    func make() -> String {
        let number = next.wrappingAdd(1, ordering: .relaxed).oldValue
        return prefix + "-" + String(number)
    }
}
