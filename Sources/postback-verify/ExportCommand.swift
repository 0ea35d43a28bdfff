@_spi(CommandLine) import Attribution
@_spi(CommandLine) import AttributionStores
import Foundation

/// `postback-verify export --state PATH|URL [--archive PATH] [--after CURSOR]`: the received postbacks a
/// receiver stored, as JSON Lines in cursor order, from after `CURSOR` to the last one a consumer can read now
/// (docs/state.md, "Reading the received postbacks"). A consumer that keeps the last line's `cursor` and gives it
/// back as `--after` reads every row once. With `--to DIR`, into gzip files and a manifest instead
/// (``DirectoryExport``).
enum ExportCommand {
    /// Rows read per query: one round trip (or read transaction) per thousand rows.
    static let batchSize = 1000

    struct Options {
        var state: StateLocation?
        var archivePath: String?
        var after: ArchiveCursor?
        /// `--since`, `--until`: only rows received in [since, until) are printed and reported, in milliseconds
        /// since 1970.
        var since: Int64?
        var until: Int64?
        /// `--to DIR`: files and a manifest there instead of standard output.
        var directory: String?
        var follow = false
        var rollBytes: Int?
        var rollSeconds: Int?
        var pollSeconds: Duration?
        /// `--report FILE`: the run report of the rows printed (``PeriodReport``).
        var reportPath: String?
        /// `--schema FILE` (with `--report`): decode the valid postbacks for the report.
        var schemaPath: String?
        var showsHelp = false
    }

    static func main(_ arguments: [String]) -> Int32 {
        let errors = StandardStream(descriptor: 2)
        func fail(_ message: String, usage: Bool) -> Int32 {
            errors.write(line: "postback-verify export: error: \(TerminalText.escaped(message))")
            if usage { errors.write(line: "Run 'postback-verify export --help' for usage.") }
            errors.flush()
            return 2
        }
        let options: Options
        do {
            options = try parse(arguments)
        } catch {
            return fail(error.message, usage: true)
        }
        if options.showsHelp {
            print(HelpText.exportUsage)
            return 0
        }
        guard let state = options.state else { return fail("export needs --state PATH|URL", usage: true) }
        if options.schemaPath != nil && options.reportPath == nil {
            return fail("--schema applies to export's --report only (the records are printed as stored)",
                        usage: true)
        }
        var period: PeriodReport?
        if options.reportPath != nil {
            do {
                period = PeriodReport(schema: try options.schemaPath.map { path throws(UsageError) in
                    try UsageError.wrapping { () throws(AttributionError) in try ConversionSchema(contentsOfFile: path) }
                })
            } catch {
                return fail(error.message, usage: true)
            }
        }
        if let message = directoryConflict(options) { return fail(message, usage: true) }
        let started = Date()
        let since = options.since ?? .min
        let until = options.until ?? .max
        let output = StandardStream(descriptor: 1)
        do throws(AttributionError) {
            let read: DirectoryExport.Read
            switch state {
            case .sqlite(let path):
                if options.after?.transaction != nil {
                    return fail("--after \(options.after!) is a PostgreSQL cursor; a SQLite archive's cursor is a "
                                + "row id (a whole number)", usage: true)
                }
                let reader = try SQLiteArchiveReader(
                    path: options.archivePath ?? SQLiteReceivedArchive.defaultPath(besideState: path))
                read = { (cursor, limit) throws(AttributionError) in try reader.rows(after: cursor, limit: limit) }
            case .postgreSQL(let connection):
                if options.archivePath != nil {
                    return fail("--archive applies to a SQLite --state only: a PostgreSQL state holds its "
                                + "received postbacks itself", usage: true)
                }
                if let after = options.after, after.transaction == nil {
                    return fail("--after \(after) is a SQLite cursor; a PostgreSQL archive's cursor is "
                                + "TRANSACTION.ROW (as the cursor member prints it)", usage: true)
                }
                let reader = try PostgresArchiveReader(connectionString: connection)
                read = { (cursor, limit) throws(AttributionError) in try reader.rows(after: cursor, limit: limit) }
            }
            if let directory = options.directory {
                let export = DirectoryExport(
                    directoryPath: directory, after: options.after, follow: options.follow,
                    rollBytes: options.rollBytes ?? defaultRollBytes,
                    rollSeconds: options.rollSeconds ?? defaultRollSeconds,
                    poll: options.pollSeconds ?? defaultPoll, isPostgreSQL: isPostgreSQL(state), read: read)
                do {
                    try export.run(errors: errors)
                    return 0
                } catch {
                    return fail(error.message, usage: error.usage)
                }
            }
            var cursor = options.after
            while true {
                let rows = try read(cursor, batchSize)
                for row in rows where (since..<until).contains(row.postback.received) {
                    let record = try row.parsedRecord()
                    output.write(line: row.jsonLine(record: record))
                    period?.count(record, received: Date(milliseconds: row.postback.received))
                }
                output.flush()
                if let failure = output.failure {
                    return fail("cannot write the output: \(failure)", usage: false)
                }
                guard let last = rows.last, rows.count == batchSize else { break }
                cursor = last.cursor
            }
        } catch {
            output.flush()
            return fail("\(error.code.rawValue): \(error.reason)", usage: false)
        }
        if let period, let reportPath = options.reportPath {
            let seconds = Date().timeIntervalSince(started)
            let context = ReportContext(label: label(options), inputs: .period(state: state.reportName),
                                        started: started, seconds: seconds,
                                        schemaPath: options.schemaPath, interrupted: nil)
            do {
                try period.report.write(to: reportPath, summary: period.summary, context: context)
            } catch {
                return fail("cannot write the report \(reportPath): \((error as NSError).localizedDescription)",
                            usage: false)
            }
            var line = period.summary.render(seconds: seconds, failures: 0)
            if period.unreadable > 0 { line += "; \(period.unreadable) stored record(s) the report cannot read" }
            errors.write(line: TerminalText.escaped(line))
            errors.flush()
        }
        return 0
    }

    /// What the report says it covers: the state, the cursor it started after, and the period.
    static func label(_ options: Options) -> String {
        var label = "received postbacks"
        if let after = options.after { label += " after cursor \(after)" }
        if let since = options.since { label += " from \(RFC3339Timestamp.string(Date(milliseconds: since)))" }
        if let until = options.until { label += " until \(RFC3339Timestamp.string(Date(milliseconds: until)))" }
        return label
    }

    /// `--since` and `--until`: a UTC date (`2026-11-26`, its midnight) or an RFC 3339 time
    /// (`2026-11-26T12:00:00Z`, `2026-11-26T12:00:00.5+01:00`), read strictly: a date or time that does not exist
    /// (30 February, hour 24, second 60) is refused, never rolled over into the next day or minute.
    static func time(_ text: String, option: String) throws(UsageError) -> Int64 {
        do {
            return try RFC3339Timestamp.milliseconds(text)
        } catch {
            throw UsageError("\(option) takes a UTC date (2026-11-26) or an RFC 3339 time (2026-11-26T12:00:00Z), "
                             + "not \(text): \(error.reason)")
        }
    }

    static func parse(_ arguments: [String]) throws(UsageError) -> Options {
        var options = Options()
        var remaining = arguments[...]
        while let argument = remaining.popFirst() {
            let option = OptionArgument(argument)
            let name = option.name
            func value() throws(UsageError) -> String { try option.value(from: &remaining) }
            if try ArchiveOptions.parse(name, state: &options.state, archivePath: &options.archivePath,
                                        value: value) {
                continue
            }
            switch name {
            case "-h", "--help":
                options.showsHelp = true
            case "--since", "--until":
                let text = try value()
                let date = try time(text, option: name)
                if name == "--since" {
                    guard options.since == nil else { throw UsageError("--since given twice") }
                    options.since = date
                } else {
                    guard options.until == nil else { throw UsageError("--until given twice") }
                    options.until = date
                }
            case "--report":
                guard options.reportPath == nil else { throw UsageError("--report given twice") }
                let path = try value()
                guard !path.isEmpty else { throw UsageError("--report needs a file path") }
                options.reportPath = path
            case "--schema":
                guard options.schemaPath == nil else { throw UsageError("--schema given twice") }
                options.schemaPath = try value()
            case "--to":
                guard options.directory == nil else { throw UsageError("--to given twice") }
                let path = try value()
                guard !path.isEmpty else { throw UsageError("--to needs a directory path") }
                options.directory = path
            case "--follow":
                options.follow = true
            case "--roll-bytes":
                guard options.rollBytes == nil else { throw UsageError("--roll-bytes given twice") }
                options.rollBytes = try size(try value(), option: name)
            case "--roll-seconds":
                guard options.rollSeconds == nil else { throw UsageError("--roll-seconds given twice") }
                let text = try value()
                guard let seconds = wholeNumber(text), (1...86_400).contains(seconds) else {
                    throw UsageError("--roll-seconds takes whole seconds from 1 to 86400 (a day), not \(text)")
                }
                options.rollSeconds = seconds
            case "--poll-seconds":
                guard options.pollSeconds == nil else { throw UsageError("--poll-seconds given twice") }
                options.pollSeconds = try pollInterval(try value())
            case "--after":
                guard options.after == nil else { throw UsageError("--after given twice") }
                let text = try value()
                guard let cursor = ArchiveCursor(text) else {
                    throw UsageError("--after takes a cursor as export prints it (812, or 5071.812 for "
                                     + "PostgreSQL), not \(text)")
                }
                options.after = cursor
            default:
                throw UsageError(argument.hasPrefix("-") ? "unknown option \(name) for export"
                                 : "export takes no paths (\(argument)); it reads the archive of --state")
            }
        }
        return options
    }
}
