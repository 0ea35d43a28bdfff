import Foundation
import Testing
@testable import postback_verify

@Suite("Run claims: the memory store's room, guessed from the input")
struct RunClaimsTests {
    /// Runs `body` with a new empty directory, removed afterwards.
    static func withDirectory(_ body: (URL) throws -> Void) throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("postback-verify-claims-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try body(directory)
    }

    @Test("Regular files count 1 item per 512 bytes; standard input, directories and missing paths nothing")
    func expectedItemsFromFileSizes() throws {
        try Self.withDirectory { directory in
            let first = directory.appendingPathComponent("a.jsonl")
            let second = directory.appendingPathComponent("b.jsonl")
            try Data(count: 5 * 512 + 100).write(to: first)
            try Data(count: 3 * 512).write(to: second)
            #expect(RunClaims.expectedItems([first.path, second.path]) == 8)
            #expect(RunClaims.expectedItems([first.path, "-", directory.path, directory.path + "/missing"]) == 5)
            #expect(RunClaims.expectedItems([]) == 0)
        }
    }

    @Test("Regression: a large file reserves at most 65,536 keys (room for 2²⁰ took 111 MiB for 20,000 postbacks)")
    func expectedItemsAreBounded() throws {
        try Self.withDirectory { directory in
            let file = directory.appendingPathComponent("large.jsonl")
            // A sparse file: its size is all that is read.
            try #require(FileManager.default.createFile(atPath: file.path, contents: nil))
            let handle = try FileHandle(forWritingTo: file)
            try handle.truncate(atOffset: 1 << 30)
            try handle.close()
            // 1 GiB would be 2²¹ items at 512 bytes each: the guess stops at 65,536.
            #expect(RunClaims.expectedItems([file.path]) == 1 << 16)
        }
    }
}
