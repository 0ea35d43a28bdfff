@_spi(CommandLine) @_spi(Servers) @_spi(Stores) @testable import Attribution
@_spi(CommandLine) @_spi(Servers) @testable import AttributionStores
import Foundation
import Glibc
import Testing

/// A state on a file system mounted read-only (a disk the kernel turned read-only after an error, a container's
/// read-only volume) is refused with its real cause: root ignores file modes, but not a read-only mount.
///
/// Regression (Receiver/Tests/e2e/fault.py part 5b): the refusal said "No such file or directory" (SQLite's last
/// system error, from a fallback) and sent the user to look for other files.
@Suite("A state on a read-only file system")
struct ReadOnlyFileSystemTests {
    /// Runs `arguments` (mount, umount); true when it exited 0.
    static func run(_ arguments: [String]) throws -> Bool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus == 0
    }

    /// Needs root to mount (CI runs as root): elsewhere the test is reported skipped, not passed.
    @Test("is refused as cannot-open, naming the read-only file system and the remedy, for a new and an existing file",
          .enabled(if: getuid() == 0, "mounting a tmpfs needs root"), arguments: [false, true])
    func readOnlyMountIsNamed(existing: Bool) throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("read-only-state-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let mounted = try Self.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", directory])
        guard mounted else {
            // Root without the right to mount (a container without CAP_SYS_ADMIN): reported, not passed silently.
            withKnownIssue("root could not mount a tmpfs here, so nothing was checked") {
                Issue.record("mount -t tmpfs failed")
            }
            return
        }
        defer { _ = try? Self.run(["umount", directory]) }
        let path = directory + "/state.sqlite"
        if existing {
            _ = try SQLiteDeduplicationStore(path: path)
        }
        try #require(try Self.run(["mount", "-o", "remount,ro", directory]))
        #expect {
            _ = try SQLiteDeduplicationStore(path: path)
        } throws: { error in
            guard let error = error as? AttributionError else { return false }
            return error.code == .cannotOpen && error.reason.contains("read-only")
                && error.reason.contains("remount it read-write") && !error.reason.contains("No such file")
        }
    }
}
