#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// Who holds a claim in a shared store, and whether it still lives: what every database store (SQLite,
/// PostgreSQL) records in its `owners` table and reads back the same way.
@_spi(Stores) public enum DeduplicationOwner {
    /// This machine, as an owner's `host`: its host name and, where the system has one, the boot's id, so a
    /// process id from before a reboot is never taken for a live process after it.
    @_spi(Stores) public static let thisHost: String = {
        var name = [CChar](repeating: 0, count: 256)
        let host = gethostname(&name, name.count) == 0
            ? String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : "unknown"
        let boot = (try? String(contentsOfFile: "/proc/sys/kernel/random/boot_id", encoding: .utf8))?
            .trimmingCharacters(in: .whitespacesAndNewlines)
        return boot.map { "\(host) boot \($0)" } ?? host
    }()

    /// This process's id.
    @_spi(Stores) public static let thisProcess = Int(getpid())

    /// Whether an owner still holds its claims at `now` (milliseconds since 1970): its lease runs, and, when it
    /// runs on this machine, its process exists. A process killed on this machine loses its claims at once; one
    /// on another machine (or in another container) when its lease runs out.
    @_spi(Stores) public static func isAlive(host: String, process: Int64, leaseUntil: Int64, now: Int64) -> Bool {
        guard leaseUntil >= now else { return false }
        guard host.utf8.elementsEqual(thisHost.utf8), let pid = pid_t(exactly: process) else { return true }
        if pid == getpid() { return true }
        return kill(pid, 0) == 0 || errno == EPERM
    }
}
