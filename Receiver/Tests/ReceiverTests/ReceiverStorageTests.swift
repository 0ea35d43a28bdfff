import Foundation
import Hummingbird
@_spi(Servers) @testable import ReceiverCore
import Testing

/// Start-up refusals: a state or archive file that is not ours is refused before anything listens, and left
/// byte for byte as it was.
@Suite struct ReceiverStorageTests {
    @Test("a state file that is not ours is refused, untouched")
    func foreignState() async throws {
        var receiver = try TestReceiver()
        let text = Data("not a database\n".utf8)
        try text.write(to: URL(fileURLWithPath: receiver.statePath))
        receiver.configuration.storage = .durable(state: .sqlite(path: receiver.statePath),
                                                  archive: receiver.archivePath)
        await #expect(throws: StorageFailure.self) { _ = try await receiver.application() }
        #expect(try Data(contentsOf: URL(fileURLWithPath: receiver.statePath)) == text)
    }

    @Test("the state file given as the archive is refused, untouched")
    func stateAsArchive() async throws {
        let receiver = try TestReceiver()
        _ = try await receiver.application()  // creates the state file
        let state = try Data(contentsOf: URL(fileURLWithPath: receiver.statePath))
        var second = receiver
        second.configuration.storage = .durable(
            state: .sqlite(path: receiver.directory.appendingPathComponent("other-state.sqlite").path),
            archive: receiver.statePath)
        await #expect(throws: StorageFailure.self) { _ = try await second.application() }
        #expect(try Data(contentsOf: URL(fileURLWithPath: receiver.statePath)) == state)
    }

    @Test("an archive file with a PostgreSQL state is refused before connecting, and no file is made")
    func archiveWithPostgreSQL() async throws {
        var receiver = try TestReceiver()
        receiver.configuration.storage = .durable(
            state: .postgreSQL(connection: "postgresql://receiver@127.0.0.1:1/postbacks"), archive: receiver.archivePath)
        await #expect {
            _ = try await receiver.application()
        } throws: { error in
            (error as? StorageFailure)?.code == "invalid-option"
        }
        #expect(!FileManager.default.fileExists(atPath: receiver.archivePath))
    }

    @Test func defaultArchivePath() {
        #expect(ReceiverConfiguration.defaultArchivePath(for: .sqlite(path: "/var/lib/pb/state.sqlite"))
                == "/var/lib/pb/state-received.sqlite")
        #expect(ReceiverConfiguration.defaultArchivePath(for: .sqlite(path: "state.db")) == "state.db-received.sqlite")
        #expect(ReceiverConfiguration.defaultArchivePath(for: .postgreSQL(connection: "host=db dbname=x")) == nil)
    }
}
