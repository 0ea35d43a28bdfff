import Attribution
import AttributionStores
import Foundation

/// `postback-verify export --state PATH|URL [--archive PATH] [--after CURSOR]`: the received postbacks a
/// receiver stored, as JSON Lines in cursor order, from after `CURSOR` to the last one a consumer can read now
/// (docs/state.md, "Reading the received postbacks"). A consumer that keeps the last line's `cursor` and gives it
/// back as `--after` reads every row once.
enum ExportCommand {
    /// Rows read per query: one round trip (or read transaction) per thousand rows.
    static let batchSize = 1000

    struct Options {
        var state: StateLocation?
        var archivePath: String?
        var after: ArchiveCursor?
        /// `--since`, `--until`: only rows received in [since, until) are printed and reported.
        var since: Date?
        var until: Date?
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
        let started = Date()
        let since = options.since.map { Int64(($0.timeIntervalSince1970 * 1000).rounded(.up)) } ?? .min
        let until = options.until.map { Int64(($0.timeIntervalSince1970 * 1000).rounded(.up)) } ?? .max
        let output = StandardStream(descriptor: 1)
        do throws(AttributionError) {
            let read: (ArchiveCursor?, Int) throws(AttributionError) -> [ExportedPostback]
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
        if let since = options.since { label += " from \(RFC3339Timestamp.string(since))" }
        if let until = options.until { label += " until \(RFC3339Timestamp.string(until))" }
        return label
    }

    /// `--since` and `--until`: a UTC date (`2026-11-26`, its midnight) or an RFC 3339 time
    /// (`2026-11-26T12:00:00Z`, `2026-11-26T12:00:00.5+01:00`).
    static func time(_ text: String, option: String) throws(UsageError) -> Date {
        let dateOnly = Date.ISO8601FormatStyle(timeZone: .gmt).year().month().day()
        if text.utf8.count == 10, let date = try? Date(text, strategy: dateOnly) { return date }
        if let date = try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)) {
            return date
        }
        if let date = try? Date(text, strategy: Date.ISO8601FormatStyle()) { return date }
        throw UsageError("\(option) takes a UTC date (2026-11-26) or an RFC 3339 time (2026-11-26T12:00:00Z), "
                         + "not \(text)")
    }

    static func parse(_ arguments: [String]) throws(UsageError) -> Options {
        var options = Options()
        var remaining = arguments[...]
        while let argument = remaining.popFirst() {
            let option = OptionArgument(argument)
            let name = option.name
            func value() throws(UsageError) -> String { try option.value(from: &remaining) }
            switch name {
            case "-h", "--help":
                options.showsHelp = true
            case "--state":
                guard options.state == nil else { throw UsageError("--state given twice") }
                let text = try value()
                options.state = try UsageError.wrapping { () throws(AttributionError) in try StateLocation(text) }
            case "--archive":
                guard options.archivePath == nil else { throw UsageError("--archive given twice") }
                let path = try value()
                guard !path.isEmpty else { throw UsageError("--archive needs a file path") }
                options.archivePath = path
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
