import Foundation
import Testing
@testable import postback_verify

@Suite("Run claims: the memory store's room, guessed from the input")
struct RunClaimsTests {
    @Test("Regular files count 1 item per 512 bytes; standard input, directories and missing paths nothing")
    func expectedItemsFromFileSizes() throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("postback-verify-claims-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let first = directory.appendingPathComponent("a.jsonl")
        let second = directory.appendingPathComponent("b.jsonl")
        try Data(count: 5 * 512 + 100).write(to: first)
        try Data(count: 3 * 512).write(to: second)
        #expect(RunClaims.expectedItems([first.path, second.path]) == 8)
        #expect(RunClaims.expectedItems([first.path, "-", directory.path, directory.path + "/missing"]) == 5)
        #expect(RunClaims.expectedItems([]) == 0)
    }
}
