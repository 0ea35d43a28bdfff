import Foundation
import Testing
@_spi(CommandLine) @_spi(Servers) @_spi(Stores) @testable import Attribution
@_spi(CommandLine) @_spi(Servers) @testable import AttributionStores

/// `postback-verify outbox` through the built binary: usage errors, listing, re-queuing, refused files.
@Suite("postback-verify outbox")
struct OutboxCommandLineTests {
    @Test("usage errors exit 2 with one message and the help hint on stderr, nothing on stdout", arguments: [
        [], ["--dead"], ["--state"], ["--state", "a.sqlite", "--state", "b.sqlite"],
        ["--state", "a.sqlite", "--bogus"], ["--state", "a.sqlite", "--requeue", "1", "--requeue-dead"],
        ["--state", "a.sqlite", "--requeue", "x1"], ["--state", "a.sqlite", "--requeue", "-3"],
        ["--state", "a.sqlite", "--archive", ""], ["--state", "postgresql://127.0.0.1:1/x", "--archive", "a.sqlite"],
    ])
    func usageErrors(_ arguments: [String]) throws {
        let run = try CommandLineTests.run(["outbox"] + arguments)
        #expect(run.status == 2, "\(arguments): \(run.stderr)")
        #expect(run.stdout.isEmpty)
        #expect(run.stderr.hasPrefix("postback-verify outbox: error: "), "\(run.stderr)")
    }

    @Test("--help prints the usage on stdout and exits 0; the main help names the subcommand")
    func help() throws {
        let run = try CommandLineTests.run(["outbox", "--help"])
        #expect(run.status == 0)
        #expect(run.stdout.hasPrefix("USAGE: postback-verify outbox --state PATH|URL"))
        #expect(run.stderr.isEmpty)
        #expect(try CommandLineTests.run(["--help"]).stdout.contains("postback-verify outbox --state"))
    }

    @Test("lists owed and dead deliveries as JSON Lines, re-queues one and then all dead ones")
    func listAndRequeue() throws {
        let scratch = try CommandLineScratch()
        defer { scratch.remove() }
        let state = scratch.url("state.sqlite").path
        let archivePath = SQLiteReceivedArchive.defaultPath(besideState: state)
        let archive = try SQLiteReceivedArchive(path: archivePath)
        let destination = try OutboxDestination(name: "https://mmp.example/pb", selection: .valid)
        // Received now: the outbox's horizon counts from a row's receipt, by this machine's clock.
        let rows = (1...3).map { index in
            ArchivedPostback(received: SQLiteOutbox.systemClock(), request: "request-\(index)",
                             route: "appattribution", verdict: "valid", code: nil, key: Array("key-\(index)".utf8),
                             body: Array("{\"n\":\(index)}".utf8), record: Array("{}".utf8))
        }
        try archive.append(rows, owing: [destination])
        let outbox = try SQLiteOutbox(path: archivePath)
        let taken = try outbox.claim(destination: destination.name, limit: 2, holder: 1, leaseMilliseconds: 60_000,
                                     horizonMilliseconds: 86_400_000)
        try outbox.record(taken.map { DeliveryOutcome(id: $0.id, fate: .dead, answer: "410 \"gone\"") }, holder: 1,
                          horizonMilliseconds: 86_400_000)

        let all = try CommandLineTests.run(["outbox", "--state", state])
        #expect(all.status == 0, "\(all.stderr)")
        let lines = all.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 3)
        let objects = try lines.map { line in
            try #require(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        }
        let deadObjects = objects.filter { $0["status"] as? String == "dead" }
        let owedObjects = objects.filter { $0["status"] as? String == "owed" }
        #expect(deadObjects.count == 2 && owedObjects.count == 1)
        #expect(objects.allSatisfy { $0["destination"] as? String == destination.name })
        #expect(deadObjects.allSatisfy { $0["answer"] as? String == "410 \"gone\"" })
        #expect(owedObjects.allSatisfy { $0["answer"] is NSNull && $0["attempts"] as? Int == 0 })
        #expect(Set(objects.compactMap { $0["request"] as? String }) == ["request-1", "request-2", "request-3"])
        #expect(objects.compactMap { $0["id"] as? Int } == objects.compactMap { $0["id"] as? Int }.sorted())

        let dead = try CommandLineTests.run(["outbox", "--state", state, "--dead"])
        #expect(dead.stdout.split(separator: "\n").count == 2)

        let id = try #require(deadObjects.first?["id"] as? Int)
        let one = try CommandLineTests.run(["outbox", "--state", state, "--requeue", String(id)])
        #expect(one.status == 0)
        #expect(one.stderr == "postback-verify outbox: 1 dead delivery owed again\n")
        let again = try CommandLineTests.run(["outbox", "--state", state, "--requeue", String(id)])
        #expect(again.status == 2, "an id that is not dead any more")
        #expect(again.stderr.contains("no dead delivery has id \(id)"))
        let rest = try CommandLineTests.run(["outbox", "--state", state, "--requeue-dead"])
        #expect(rest.stderr == "postback-verify outbox: 1 dead delivery owed again\n")
        #expect(try CommandLineTests.run(["outbox", "--state", state, "--dead"]).stdout.isEmpty)
    }

    @Test("a state without an archive, or a file that is not one, is refused with status 2 and left as it was")
    func refusedFiles() throws {
        let scratch = try CommandLineScratch()
        defer { scratch.remove() }
        let missing = try CommandLineTests.run(["outbox", "--state", scratch.url("none.sqlite").path])
        #expect(missing.status == 2)
        #expect(missing.stdout.isEmpty)
        let other = scratch.url("other.sqlite")
        try Data("not a database, not an archive".utf8).write(to: other)
        let refused = try CommandLineTests.run(["outbox", "--state", scratch.url("x.sqlite").path, "--archive",
                                                other.path])
        #expect(refused.status == 2)
        #expect(try Data(contentsOf: other) == Data("not a database, not an archive".utf8))
    }
}
