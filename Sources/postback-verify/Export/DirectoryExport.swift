#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@_spi(CommandLine) import Attribution
@_spi(CommandLine) import AttributionStores
import Dispatch
import Synchronization

/// `postback-verify export --to DIR [--follow]`: the rows after the manifest's last cursor into gzip JSON Lines
/// files in DIR, a file finished at `--roll-bytes` compressed bytes or `--roll-seconds` after its first row,
/// whichever comes first; with `--follow`, on as rows arrive, until SIGINT, SIGTERM or SIGHUP, which finish the
/// file in progress (status 0). docs/state.md, "Exporting into files".
struct DirectoryExport {
    /// Reads up to `limit` rows after a cursor (nil: from the first), in cursor order.
    typealias Read = (ArchiveCursor?, Int) throws(AttributionError) -> [ExportedPostback]

    let directoryPath: String
    let after: ArchiveCursor?
    let follow: Bool
    let rollBytes: Int
    let rollSeconds: Int
    let poll: Duration
    let isPostgreSQL: Bool
    let read: Read

    /// What ended a run that did not end cleanly: the message, and whether it is a usage error.
    struct Failure: Error {
        let message: String
        let usage: Bool
    }

    /// Runs the export; writes a line per finished file on `errors`. Returns normally when every row there was
    /// (or, with `--follow`, until a signal) is in finished files.
    func run(errors: StandardStream) throws(Failure) {
        let directory: ExportDirectory
        do {
            directory = try ExportDirectory(path: directoryPath)
        } catch {
            throw Failure(message: "\(error.code.rawValue): \(error.reason)", usage: false)
        }
        for what in directory.cleared {
            note("\(directoryPath): cleared what a stopped export left: \(what)", errors)
        }
        if let last = directory.resumeCursor, (last.transaction != nil) != isPostgreSQL {
            let other = isPostgreSQL ? "SQLite" : "PostgreSQL"
            let given = isPostgreSQL ? "a PostgreSQL database" : "a SQLite file"
            throw Failure(message: "\(directory.manifestPath) holds the cursors of a \(other) archive, and --state is "
                          + "\(given): a directory takes one archive's rows; export into another directory",
                          usage: true)
        }
        if let after, let last = directory.resumeCursor, after != last {
            throw Failure(message: "--after \(after) differs from where \(directory.manifestPath) ends (cursor "
                          + "\(last)), where export --to resumes by itself: leave --after out, or export into "
                          + "a new directory", usage: true)
        }
        let stop = StopRequest()
        Interruption.watch { stop.request($0) }
        var cursor = directory.resumeCursor ?? after
        var file: ExportFile?
        // A row that cannot be read (a server gone, a damaged record) ends the run, but the rows before it are
        // whole and in order: their file is finished, and the next export goes on after them. A failed write
        // leaves nothing worth keeping: the file is deleted.
        var readFailure: AttributionError?
        do throws(AttributionError) {
            defer {
                if let file { directory.abandon(file) }
            }
            reading: while !stop.isRequested {
                let rows: [ExportedPostback]
                do {
                    rows = try read(cursor, ExportCommand.batchSize)
                } catch {
                    readFailure = error
                    break reading
                }
                for row in rows {
                    let record: JSONValue
                    do {
                        record = try row.parsedRecord()
                    } catch {
                        readFailure = error
                        break reading
                    }
                    let current: ExportFile
                    if let file {
                        current = file
                    } else {
                        current = try directory.startFile()
                        file = current
                    }
                    try current.append(line: row.jsonLine(record: record), cursor: row.cursor)
                    cursor = row.cursor
                    if current.bytes >= rollBytes {
                        try finish(current, in: directory, errors)
                        file = nil
                    }
                }
                if let current = file, current.started.duration(to: .now) >= .seconds(rollSeconds) {
                    try finish(current, in: directory, errors)
                    file = nil
                }
                guard rows.count < ExportCommand.batchSize else { continue }
                guard follow else { break }
                var wait = poll
                if let current = file {
                    wait = min(wait, max(.zero, .seconds(rollSeconds) - current.started.duration(to: .now)))
                }
                stop.wait(wait)
            }
            if let current = file {
                try finish(current, in: directory, errors)
                file = nil
            }
        } catch {
            throw Failure(message: "\(error.code.rawValue): \(error.reason)", usage: false)
        }
        if let readFailure {
            throw Failure(message: "\(readFailure.code.rawValue): \(readFailure.reason)", usage: false)
        }
        if let signal = stop.signal {
            note("\(Interruption.name(of: signal)): stopped after finishing the file in progress; the next export "
                 + "resumes after cursor \(directory.resumeCursor.map(String.init(describing:)) ?? "none")", errors)
        }
    }

    private func finish(_ file: ExportFile, in directory: ExportDirectory,
                        _ errors: StandardStream) throws(AttributionError) {
        let entry = try directory.finish(file)
        note("\(entry.file): \(entry.rows) rows, \(entry.bytes) bytes, cursors \(entry.firstCursor) to "
             + "\(entry.lastCursor)", errors)
    }

    private func note(_ text: String, _ errors: StandardStream) {
        errors.write(line: Array(TerminalText.escaped("postback-verify export: \(text)").utf8))
        errors.flush()
    }
}

extension DirectoryExport {
    /// The first signal a follower got, and a wait it cuts short.
    final class StopRequest: Sendable {
        private let received = Atomic<Int32>(0)
        private let wake = DispatchSemaphore(value: 0)

        var isRequested: Bool { received.load(ordering: .acquiring) != 0 }

        /// The signal, once one came.
        var signal: Int32? {
            let number = received.load(ordering: .acquiring)
            return number == 0 ? nil : number
        }

        func request(_ signal: Int32) {
            received.store(signal, ordering: .releasing)
            wake.signal()
        }

        /// Waits `duration`, or less when a signal comes.
        func wait(_ duration: Duration) {
            guard !isRequested else { return }
            let (seconds, attoseconds) = duration.components
            let nanoseconds = Int(max(0, seconds)) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)
            _ = wake.wait(timeout: .now() + .nanoseconds(nanoseconds))
        }
    }
}
