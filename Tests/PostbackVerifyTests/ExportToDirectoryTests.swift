#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
@_spi(CommandLine) @_spi(Servers) @_spi(Stores) @testable import Attribution
@_spi(CommandLine) @_spi(Servers) @testable import AttributionStores
@testable import postback_verify

/// `postback-verify export --to DIR` through the built binary, over a SQLite archive and a PostgreSQL state
/// (``TestPostgres``): the files, checked with `gzip` and `sha256sum` (not with our own code), hold exactly what
/// export prints to standard output, each row once in cursor order, also after a real SIGKILL mid-file, and with
/// `--follow` until a real SIGTERM.
@Suite("Export into files (--to DIR)", .serialized)
final class ExportToDirectoryTests {
    let scratch: CommandLineScratch

    init() throws {
        scratch = try CommandLineScratch()
    }

    deinit {
        scratch.remove()
    }

    /// A new archive of `kind` to export: a SQLite file beside a state path, or a PostgreSQL database written by
    /// the store's one-transaction claim, as ``ArchiveExportTests`` writes them.
    func archive(_ kind: ArchiveExportTests.Kind) throws -> ArchiveExportTests.Archive {
        switch kind {
        case .sqlite:
            let state = scratch.url("state-\(UUID().uuidString).sqlite").path
            let file = try SQLiteReceivedArchive(path: SQLiteReceivedArchive.defaultPath(besideState: state))
            return ArchiveExportTests.Archive(state: state, append: { try file.append($0) })
        case .postgreSQL:
            let database = try TestPostgres.database()
            let store = try PostgreSQLDeduplicationStore(connectionString: database)
            return ArchiveExportTests.Archive(state: database, append: { rows in
                _ = try store.claim([], at: Date(), archiving: { _ in rows })
            })
        }
    }

    /// A run of the binary: its status, standard output's bytes and standard error.
    struct Run {
        let status: Int32
        let stdout: [UInt8]
        let stderr: String
    }

    /// Runs the binary on `arguments` to its end, standard output and error into files (so nothing waits on a pipe).
    func run(_ arguments: [String]) throws -> Run {
        let process = try start(arguments)
        process.waitUntilExit()
        return try finished(process)
    }

    private var outputs: [ObjectIdentifier: (URL, URL)] = [:]

    /// Starts the binary on `arguments`, standard output and error into files of the scratch directory.
    func start(_ arguments: [String]) throws -> Process {
        let out = scratch.url("stdout-\(UUID().uuidString)"), err = scratch.url("stderr-\(UUID().uuidString)")
        _ = FileManager.default.createFile(atPath: out.path, contents: nil)
        _ = FileManager.default.createFile(atPath: err.path, contents: nil)
        let process = Process()
        process.executableURL = try CommandLineTests.binary()
        process.arguments = arguments
        process.currentDirectoryURL = scratch.directory
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = try FileHandle(forWritingTo: out)
        process.standardError = try FileHandle(forWritingTo: err)
        try process.run()
        outputs[ObjectIdentifier(process)] = (out, err)
        return process
    }

    /// What a process ``start(_:)`` started wrote, once it has ended.
    func finished(_ process: Process) throws -> Run {
        let (out, err) = try #require(outputs[ObjectIdentifier(process)])
        return Run(status: process.terminationStatus, stdout: try TestPaths.bytes(out),
                   stderr: String(decoding: try TestPaths.bytes(err), as: UTF8.self))
    }

    /// Runs a system tool (`gzip`, `sha256sum`) and returns its standard output.
    static func tool(_ path: String, _ arguments: [String]) throws -> [UInt8] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let bytes = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0, "\(path) \(arguments) failed")
        return [UInt8](bytes)
    }

    /// The manifest's lines as JSON objects.
    func manifest(_ directory: URL) throws -> [[String: Any]] {
        let url = directory.appendingPathComponent("manifest.jsonl")
        guard FileManager.default.fileExists(atPath: url.path) else { return [] }
        return try String(contentsOf: url, encoding: .utf8).split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
    }

    /// The lines of the files the manifest names, in its order, each file decompressed by `gzip` and checked
    /// against its manifest line (size, SHA-256 by `sha256sum`, rows, first and last cursor).
    func exportedLines(_ directory: URL, sourceLocation: SourceLocation = #_sourceLocation) throws -> [[UInt8]] {
        var lines: [[UInt8]] = []
        for entry in try manifest(directory) {
            let name = try #require(entry["file"] as? String)
            let path = directory.appendingPathComponent(name).path
            let size = try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
            #expect(entry["bytes"] as? Int == size, "\(name)", sourceLocation: sourceLocation)
            let sum = String(decoding: try Self.tool("/usr/bin/sha256sum", [path]).prefix(64), as: UTF8.self)
            #expect(entry["sha256"] as? String == sum, "\(name)", sourceLocation: sourceLocation)
            let text = try Self.tool("/bin/gzip", ["-dc", path])
            #expect(text.last == UInt8(ascii: "\n"), "\(name) ends with a line end", sourceLocation: sourceLocation)
            let fileLines = text.split(separator: UInt8(ascii: "\n")).map(Array.init)
            #expect(entry["rows"] as? Int == fileLines.count, "\(name)", sourceLocation: sourceLocation)
            #expect(entry["first-cursor"] as? String == fileLines.first.map(Self.cursorText),
                    "\(name)", sourceLocation: sourceLocation)
            #expect(entry["last-cursor"] as? String == fileLines.last.map(Self.cursorText),
                    "\(name)", sourceLocation: sourceLocation)
            lines += fileLines
        }
        return lines
    }

    /// The `cursor` of a line, read from its text (it is the first member).
    static func cursorText(_ line: [UInt8]) -> String {
        let text = String(decoding: line, as: UTF8.self)
        guard let match = text.firstMatch(of: /^\{"cursor":"([0-9.]+)"/) else { return "" }
        return String(match.1)
    }

    /// What export prints to standard output for `state`: the lines the files must hold.
    func standardOutputLines(_ state: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> [[UInt8]] {
        let run = try run(["export", "--state", state])
        #expect(run.status == 0, "\(run.stderr)", sourceLocation: sourceLocation)
        return run.stdout.split(separator: UInt8(ascii: "\n")).map(Array.init)
    }

    /// `count` rows from `start`, each with a body of `bodyBytes` pseudo-random bytes (which gzip cannot shrink
    /// much, so files fill), seeded by the row's number.
    static func rows(_ range: Range<Int>, bodyBytes: Int = 600) -> [ArchivedPostback] {
        range.map { number in
            var random = SplitMix64(seed: UInt64(number))
            var row = ArchiveExportTests.row(number)
            row.body = (0..<bodyBytes).map { _ in UInt8.random(in: 0...255, using: &random) }
            return row
        }
    }

    /// Waits until `condition` holds, for at most `seconds`; returns whether it did.
    static func waitUntil(_ seconds: Double, _ condition: () throws -> Bool) rethrows -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if try condition() { return true }
            Thread.sleep(forTimeInterval: 0.02)
        }
        return try condition()
    }

    // MARK: Files and manifest

    @Test("The files the manifest names hold exactly what export prints, each row once; a rerun adds only new rows",
          arguments: ArchiveExportTests.Kind.allCases)
    func filesMatchStandardOutput(_ kind: ArchiveExportTests.Kind) throws {
        try #require(kind == .sqlite || TestPostgres.enabled)
        let archive = try archive(kind)
        try archive.append(Self.rows(0..<700))
        try archive.append(Self.rows(700..<1500))
        let printed = try ArchiveExportTests.settled(1500) { try standardOutputLines(archive.state) }
        let directory = scratch.url("out-\(kind)")
        let first = try run(["export", "--state", archive.state, "--to", directory.path, "--roll-bytes", "64K"])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout.isEmpty, "nothing on standard output")
        let entries = try manifest(directory)
        #expect(entries.count > 5, "rolled by size: \(entries.count) files")
        for entry in entries.dropLast() {
            #expect(try #require(entry["bytes"] as? Int) >= 64 * 1024, "a file rolls only once it holds 64 KiB")
        }
        #expect(entries.map { $0["file"] as? String } == (1...entries.count).map {
            String(format: "postbacks-%08d.jsonl.gz", $0)
        })
        #expect(try exportedLines(directory) == printed, "byte for byte, in cursor order")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
                == (entries.map { $0["file"] as! String } + ["manifest.jsonl"]).sorted(), "nothing else left")

        // Nothing new: no file. New rows: a file of them alone, after the last cursor.
        let again = try run(["export", "--state", archive.state, "--to", directory.path])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(try manifest(directory).count == entries.count)
        try archive.append(Self.rows(1500..<1510))
        let all = try ArchiveExportTests.settled(1510) { try standardOutputLines(archive.state) }
        let more = try ArchiveExportTests.settled(entries.count + 1) {
            _ = try run(["export", "--state", archive.state, "--to", directory.path])
            return try manifest(directory)
        }
        #expect(more.count == entries.count + 1)
        #expect(more.last?["rows"] as? Int == 10)
        #expect(try exportedLines(directory) == all)
    }

    @Test("Each line carries position, the cursor as an integer that orders as the cursors do, before the record",
          arguments: ArchiveExportTests.Kind.allCases)
    func positionMember(_ kind: ArchiveExportTests.Kind) throws {
        try #require(kind == .sqlite || TestPostgres.enabled)
        let archive = try archive(kind)
        try archive.append(Self.rows(0..<5, bodyBytes: 3))
        let lines = try ArchiveExportTests.settled(5) { try standardOutputLines(archive.state) }
        for line in lines {
            let text = String(decoding: line, as: UTF8.self)
            let match = try #require(text.firstMatch(of: /,"position":([0-9]+),"record":\{/), "\(text)")
            let cursor = try #require(ArchiveCursor(Self.cursorText(line)))
            let expected = cursor.transaction.map { "\($0)" + String(format: "%019lld", cursor.row) }
                ?? String(cursor.row)
            #expect(String(match.1) == expected)
            #expect(text.hasPrefix("{\"cursor\":"), "the cursor stays first")
        }
    }

    @Test("A cursor's position orders as the cursors do, also where their text does not", arguments: [
        ("9999.5", "10000.1"), ("5071.9", "5071.10"), ("1", "2"), ("9", "10"), ("0.5", "1.1"),
        ("5071.9223372036854775807", "5072.1"), ("18446744073709551614.9223372036854775807", "18446744073709551615.0"),
    ])
    func positionOrder(_ smaller: String, _ larger: String) throws {
        let left = try #require(ArchiveCursor(smaller)), right = try #require(ArchiveCursor(larger))
        #expect(left < right)
        // Decimal digits without leading zeros: a longer text is a larger number; of equal length, byte order.
        let (a, b) = (Array(left.position.utf8), Array(right.position.utf8))
        #expect(a.count < b.count || (a.count == b.count && a.lexicographicallyPrecedes(b)))
    }

    @Test("Positions worked out by hand", arguments: [
        ("812", "812"), ("5071.813", "50710000000000000000813"), ("1.0", "10000000000000000000"),
        ("18446744073709551615.9223372036854775807", "184467440737095516159223372036854775807"),
    ])
    func positionValues(_ cursor: String, _ position: String) throws {
        #expect(try #require(ArchiveCursor(cursor)).position == position)
    }

    // MARK: Crashes and resumption

    /// Regression test for the bar of issue 33: a `kill -9` mid-file must leave no gap and no repeat.
    @Test("Killed with SIGKILL mid-file, the export resumes from its manifest: every row once, in cursor order")
    func resumesAfterKill() throws {
        let archive = try archive(.sqlite)
        for start in stride(from: 0, to: 24_000, by: 2000) {
            try archive.append(Self.rows(start..<start + 2000, bodyBytes: 1500))
        }
        let directory = scratch.url("killed")
        let arguments = ["export", "--state", archive.state, "--to", directory.path, "--roll-bytes", "1M"]
        let process = try start(arguments)
        let partialSeen = Self.waitUntil(60) {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
            return names.contains { $0.hasSuffix(".partial") } && ((try? manifest(directory).count) ?? 0) >= 2
        }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        #expect(partialSeen, "killed while a file was being written, after two were finished")
        #expect(process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGKILL)
        let finishedBefore = try manifest(directory).count
        let resumed = try run(arguments)
        #expect(resumed.status == 0, "\(resumed.stderr)")
        #expect(resumed.stderr.contains("cleared what a stopped export left: the partial file"), "\(resumed.stderr)")
        #expect(try manifest(directory).count > finishedBefore)
        let lines = try exportedLines(directory)
        #expect(lines == (try standardOutputLines(archive.state)), "the union of the files: every row once")
        #expect(!(try FileManager.default.contentsOfDirectory(atPath: directory.path)).contains {
            $0.hasSuffix(".partial")
        })
    }

    @Test("A file renamed but never named in the manifest, and a manifest line cut short, are cleared, then written")
    func clearsWhatACrashLeft() throws {
        let archive = try archive(.sqlite)
        try archive.append(Self.rows(0..<300))
        let directory = scratch.url("crashed")
        let first = try run(["export", "--state", archive.state, "--to", directory.path, "--roll-bytes", "64K"])
        #expect(first.status == 0, "\(first.stderr)")
        let entries = try manifest(directory)
        try #require(entries.count >= 3)
        // As a crash between the rename and the manifest's line leaves it: the last file is there, its line is
        // half written, and a temporary file of the next one is there too.
        let manifestURL = directory.appendingPathComponent("manifest.jsonl")
        var text = try TestPaths.bytes(manifestURL)
        let lastLineStart = try #require(text.dropLast().lastIndex(of: UInt8(ascii: "\n"))) + 1
        text = Array(text[..<(lastLineStart + 20)])
        try Data(text).write(to: manifestURL)
        let next = String(format: ".postbacks-%08d.jsonl.gz.partial", entries.count + 1)
        try Data("half a file".utf8).write(to: directory.appendingPathComponent(next))
        let resumed = try run(["export", "--state", archive.state, "--to", directory.path, "--roll-bytes", "64K"])
        #expect(resumed.status == 0, "\(resumed.stderr)")
        #expect(resumed.stderr.contains("a manifest line cut short"), "\(resumed.stderr)")
        #expect(resumed.stderr.contains("never named in the manifest"), "\(resumed.stderr)")
        #expect(try manifest(directory).count == entries.count)
        #expect(try exportedLines(directory) == (try standardOutputLines(archive.state)))
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent(next).path))
    }

    // MARK: Following

    @Test("--follow exports rows as they arrive, rolls a file by time, and on SIGTERM finishes it and exits 0",
          arguments: ArchiveExportTests.Kind.allCases)
    func follows(_ kind: ArchiveExportTests.Kind) throws {
        try #require(kind == .sqlite || TestPostgres.enabled)
        let archive = try archive(kind)
        try archive.append(Self.rows(0..<3, bodyBytes: 10))
        let directory = scratch.url("follow-\(kind)")
        let process = try start(["export", "--state", archive.state, "--to", directory.path, "--follow",
                                 "--roll-seconds", "1", "--poll-seconds", "0.05"])
        // Three rows: far under --roll-bytes, so only the time rolls their file.
        #expect(try Self.waitUntil(30) { try manifest(directory).count == 1 }, "a file rolled by time")
        #expect(try manifest(directory).first?["rows"] as? Int == 3)
        try archive.append(Self.rows(3..<5, bodyBytes: 10))
        #expect(try Self.waitUntil(30) { try manifest(directory).count == 2 }, "rows arriving later, in a file")
        try archive.append(Self.rows(5..<9, bodyBytes: 10))
        // SIGTERM once the new rows are in a file not yet finished: it is finished before the exit.
        #expect(Self.waitUntil(30) {
            ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).contains {
                $0.hasSuffix(".partial")
            }
        })
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
        let run = try finished(process)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(process.terminationReason == .exit)
        #expect(run.stderr.contains("SIGTERM: stopped after finishing the file in progress"), "\(run.stderr)")
        let lines = try exportedLines(directory)
        #expect(lines == (try standardOutputLines(archive.state)), "every row once, the last file finished")
        #expect(try manifest(directory).count == 3)
    }

    // MARK: Refusals

    @Test("Options that do not fit --to, or values out of range, are usage errors (status 2) naming the remedy",
          arguments: [
              (["--follow"], "--follow applies to --to DIR only"),
              (["--roll-seconds", "60"], "--roll-seconds applies to --to DIR only"),
              (["--to", "DIR", "--since", "2026-11-26"], "export a period to standard output"),
              (["--to", "DIR", "--report", "r.json"], "--report applies to standard output only"),
              (["--to", "DIR", "--roll-bytes", "1000"], "--roll-bytes takes a size from 64K to 3G"),
              (["--to", "DIR", "--roll-bytes", "4G"], "--roll-bytes takes a size from 64K to 3G"),
              (["--to", "DIR", "--roll-bytes", "-1M"], "--roll-bytes takes a size"),
              (["--to", "DIR", "--roll-seconds", "0"], "--roll-seconds takes whole seconds from 1 to 86400"),
              (["--to", "DIR", "--roll-seconds", "1.5"], "--roll-seconds takes whole seconds"),
              (["--to", "DIR", "--follow", "--poll-seconds", "0.001"], "--poll-seconds takes"),
              (["--to", "DIR", "--follow", "--poll-seconds", "1."], "--poll-seconds takes"),
              (["--to", "DIR", "--poll-seconds", "1"], "--poll-seconds applies to --follow only"),
              (["--to", ""], "--to needs a directory path"),
          ])
    func usageErrors(_ arguments: [String], _ message: String) throws {
        let state = scratch.url("state.sqlite").path
        _ = try SQLiteReceivedArchive(path: SQLiteReceivedArchive.defaultPath(besideState: state))
        let directory = scratch.url("refused").path
        let run = try run(["export", "--state", state] + arguments.map { $0 == "DIR" ? directory : $0 })
        #expect(run.status == 2)
        #expect(run.stderr.contains(message), "\(run.stderr)")
        #expect(run.stderr.contains("Run 'postback-verify export --help' for usage."))
        #expect(!FileManager.default.fileExists(atPath: directory), "nothing created")
    }

    @Test("A directory another export is writing is refused (busy), as is --after away from where it ends")
    func refusesBusyAndMovedCursor() throws {
        let archive = try archive(.sqlite)
        try archive.append(Self.rows(0..<10, bodyBytes: 10))
        let directory = scratch.url("busy")
        #expect(try run(["export", "--state", archive.state, "--to", directory.path]).status == 0)
        // The test process holds the lock, as a running export would.
        let holder = open(directory.appendingPathComponent("manifest.jsonl").path, O_RDONLY)
        defer { close(holder) }
        #expect(flock(holder, LOCK_EX | LOCK_NB) == 0)
        let busy = try run(["export", "--state", archive.state, "--to", directory.path])
        #expect(busy.status == 2)
        #expect(busy.stderr.contains("busy: another export is writing into"), "\(busy.stderr)")
        flock(holder, LOCK_UN)
        let moved = try run(["export", "--state", archive.state, "--to", directory.path, "--after", "3"])
        #expect(moved.status == 2)
        #expect(moved.stderr.contains("--after 3 differs from where"), "\(moved.stderr)")
        let same = try run(["export", "--state", archive.state, "--to", directory.path, "--after", "10"])
        #expect(same.status == 0, "\(same.stderr)")
        // --after in a new directory: the files start after it.
        let later = scratch.url("after")
        #expect(try run(["export", "--state", archive.state, "--to", later.path, "--after", "6"]).status == 0)
        #expect(try exportedLines(later).map(Self.cursorText) == ["7", "8", "9", "10"])
        // A file where the directory should be.
        let file = scratch.url("a-file")
        try Data().write(to: file)
        let notDirectory = try run(["export", "--state", archive.state, "--to", file.path])
        #expect(notDirectory.status == 2)
        #expect(notDirectory.stderr.contains("is not a directory"), "\(notDirectory.stderr)")
    }

    @Test("A damaged record stops the export (status 2) after finishing the file of the rows before it")
    func damagedRecordKeepsRowsBefore() throws {
        let archive = try archive(.sqlite)
        try archive.append(Self.rows(0..<5, bodyBytes: 10))
        try archive.append([ArchiveExportTests.row(5, record: "{\"n\":5}{\"n\":6}")] + Self.rows(6..<8, bodyBytes: 10))
        let directory = scratch.url("damaged-record")
        let run = try run(["export", "--state", archive.state, "--to", directory.path])
        #expect(run.status == 2)
        #expect(run.stderr.contains("damaged: the record of the row at cursor 6"), "\(run.stderr)")
        #expect(try exportedLines(directory).map(Self.cursorText) == ["1", "2", "3", "4", "5"])
    }

    @Test("A directory of one archive's cursors refuses the other kind of archive (status 2)")
    func refusesOtherArchiveKind() throws {
        try #require(TestPostgres.enabled)
        let sqlite = try archive(.sqlite)
        try sqlite.append(Self.rows(0..<3, bodyBytes: 10))
        let directory = scratch.url("one-kind")
        #expect(try run(["export", "--state", sqlite.state, "--to", directory.path]).status == 0)
        let postgres = try archive(.postgreSQL)
        let run = try run(["export", "--state", postgres.state, "--to", directory.path])
        #expect(run.status == 2)
        #expect(run.stderr.contains("holds the cursors of a SQLite archive"), "\(run.stderr)")
        #expect(try manifest(directory).count == 1)
    }

    @Test("A damaged manifest line stops the export (status 2) naming the line, the files untouched")
    func damagedManifest() throws {
        let archive = try archive(.sqlite)
        try archive.append(Self.rows(0..<10, bodyBytes: 10))
        let directory = scratch.url("damaged")
        #expect(try run(["export", "--state", archive.state, "--to", directory.path]).status == 0)
        let manifestURL = directory.appendingPathComponent("manifest.jsonl")
        try Data((String(decoding: try TestPaths.bytes(manifestURL), as: UTF8.self) + "{\"file\":1}\n").utf8)
            .write(to: manifestURL)
        let run = try run(["export", "--state", archive.state, "--to", directory.path])
        #expect(run.status == 2)
        #expect(run.stderr.contains("damaged:") && run.stderr.contains("manifest.jsonl line 2"), "\(run.stderr)")
    }
}

/// `--since` and `--until` read strictly: a date or time that does not exist is refused (status 2), never rolled
/// over into the next day or hour as Foundation's ISO 8601 parsing does.
@Suite("Strict times for --since and --until")
struct StrictExportTimeTests {
    @Test("Dates and times that do not exist are refused", arguments: [
        "2025-11-31", "2025-02-29", "2024-02-30", "1900-02-29", "2025-13-01", "2025-00-10", "2025-01-00",
        "2025-12-04T24:30:00Z", "2025-12-04T24:00:00Z", "2025-12-04T12:60:00Z", "2025-12-04T12:00:61Z",
        "2016-12-31T23:59:60Z", "2025-12-04T12:00:00+24:00", "2025-12-04T12:00:00+01:60", "2025-12-04T12:00Z",
        "2025-12-04T12:00:00", "2025-12-04 12:00:00Z", "2025-12-04T12:00:00.Z", "2025-12-04T12:00:00ZZ",
        "25-12-04", "2025-1-04", "2025-12-04T1:00:00Z", "+2025-12-04", "２０２５-12-04", "",
    ])
    func refused(_ text: String) {
        #expect(throws: RFC3339Timestamp.Refusal.self) { _ = try RFC3339Timestamp.milliseconds(text) }
    }

    @Test("Dates and times that exist give their instant (worked out with Python's calendar.timegm)", arguments: [
        ("2024-02-29", Int64(1_709_164_800_000)), ("2000-02-29T23:59:59Z", 951_868_799_000),
        ("2026-11-26", 1_795_651_200_000), ("2026-11-26T12:00:00Z", 1_795_694_400_000),
        ("2026-11-26t12:00:00z", 1_795_694_400_000), ("2026-11-26T13:30:00+01:30", 1_795_694_400_000),
        ("2026-11-26T10:00:00-02:00", 1_795_694_400_000), ("2026-11-26T12:00:00-00:00", 1_795_694_400_000),
        ("2026-11-26T12:00:00.5Z", 1_795_694_400_500), ("2026-11-26T12:00:00.123Z", 1_795_694_400_123),
        ("2026-11-26T12:00:00.1231Z", 1_795_694_400_124), ("2026-11-26T12:00:00.1230000Z", 1_795_694_400_123),
        ("1969-12-31T23:59:59Z", -1000), ("2025-12-04T23:59:59.999Z", 1_764_892_799_999),
    ])
    func accepted(_ text: String, _ milliseconds: Int64) throws {
        #expect(try RFC3339Timestamp.milliseconds(text) == milliseconds)
    }

    /// Regression test: `export --since 2025-11-31` was read as 1 December, and `--until 2025-12-04T24:30:00Z` as
    /// 00:30 the next day (Foundation's ISO 8601 parsing rolls impossible fields over).
    @Test("export refuses an impossible --since or --until with status 2, saying what is wrong", arguments: [
        (["--since", "2025-11-31"], "November 2025 has 30 days, not 31"),
        (["--until", "2025-12-04T24:30:00Z"], "hour 24 is not a time of day"),
        (["--since", "2025-02-29"], "2025 is not a leap year"),
        (["--until", "2016-12-31T23:59:60Z"], "leap second"),
    ])
    func commandLineRefuses(_ arguments: [String], _ reason: String) throws {
        let run = try CommandLineTests.run(["export", "--state", "unused.sqlite"] + arguments)
        #expect(run.status == 2)
        #expect(run.stderr.contains("postback-verify export: error: \(arguments[0]) takes a UTC date"),
                "\(run.stderr)")
        #expect(run.stderr.contains(reason), "\(run.stderr)")
    }

    /// From 1900 to 2100: further out, a `Date` (a `Double` of seconds since 2001) no longer holds every
    /// millisecond exactly, and the writer is given a `Date`.
    @Test("Every millisecond written reads back as itself")
    func roundTrip() throws {
        var random = SplitMix64(seed: 33)
        for _ in 0..<500 {
            let milliseconds = Int64.random(in: -2_208_988_800_000...4_102_444_800_000, using: &random)
            let text = RFC3339Timestamp.string(Date(milliseconds: milliseconds))
            #expect(try RFC3339Timestamp.milliseconds(text) == milliseconds, "\(text)")
        }
    }
}
