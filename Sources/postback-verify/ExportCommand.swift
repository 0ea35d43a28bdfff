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
                for row in rows {
                    output.write(line: try row.jsonLine())
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
        return 0
    }

    static func parse(_ arguments: [String]) throws(UsageError) -> Options {
        var options = Options()
        var remaining = arguments[...]
        while let argument = remaining.popFirst() {
            var name = argument
            var inlineValue: String?
            if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
                name = String(argument[..<equals])
                inlineValue = String(argument[argument.index(after: equals)...])
            }
            func value() throws(UsageError) -> String {
                if let inlineValue { return inlineValue }
                guard let next = remaining.popFirst() else { throw UsageError("\(name) needs a value") }
                return next
            }
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
