import Foundation

/// How many invalid bodies may still be stored in the current clock hour (`--invalid-quota`). Forgeries cost an
/// attacker nothing, so storing every one would let anyone fill the disk: beyond the quota an invalid body is
/// only counted in metrics (and still answered 200, like every body, so the answers reveal nothing).
public final class InvalidQuota: @unchecked Sendable {
    private let lock = NSLock()
    private let perHour: Int
    private var hour: Int64 = -1
    private var used = 0

    public init(perHour: Int) {
        self.perHour = perHour
    }

    /// Takes one unit of the quota for the hour holding `milliseconds`; false when the hour's quota is spent.
    public func take(at milliseconds: Int64) -> Bool {
        let thisHour = milliseconds / 3_600_000
        lock.lock()
        defer { lock.unlock() }
        if thisHour != hour {
            hour = thisHour
            used = 0
        }
        guard used < perHour else { return false }
        used += 1
        return true
    }
}
