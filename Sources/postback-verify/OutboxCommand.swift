@_spi(CommandLine) import Attribution
@_spi(CommandLine) import AttributionStores
import Foundation

/// `postback-verify outbox --state PATH|URL [--archive PATH] [--dead] [--requeue ID | --requeue-dead]`: the
/// deliveries a receiver's relay owes or gave up on (Receiver/README.md, "Relaying"), one JSON object a line, and
/// dead ones made owed again once the destination is fixed.
enum OutboxCommand {
    struct Options {
        var state: StateLocation?
        var archivePath: String?
        var deadOnly = false
        var requeue: Int64?
        var requeueDead = false
        var showsHelp = false
    }

    static let usage = """
        USAGE: postback-verify outbox --state PATH|URL [--archive PATH] [--dead] [--requeue ID | --requeue-dead]

        Lists the deliveries a postback-receiver relay (--forward, --forward-all, --webhook) owes, one JSON object a
        line: {"id":N,"destination":URL,"status":"owed"|"dead","attempts":N,"owed-since":MS,"answer":TEXT|null,
        "request":ID}; dead ones were answered 4xx (other than 408 and 429) or stayed owed past --relay-horizon,
        with the last answer kept.

        OPTIONS:
          --state PATH|URL   the receiver's state: a SQLite file (its archive beside it) or a PostgreSQL database
          --archive PATH     a SQLite state's archive, when not STATE-received.sqlite
          --dead             list only the dead deliveries
          --requeue ID       make dead delivery ID owed again, due now, its horizon counted from now
          --requeue-dead     the same for every dead delivery (a running receiver delivers them)
          -h, --help         this help
        """

    static func main(_ arguments: [String]) -> Int32 {
        let errors = StandardStream(descriptor: 2)
        func fail(_ message: String, usage: Bool) -> Int32 {
            errors.write(line: "postback-verify outbox: error: \(TerminalText.escaped(message))")
            if usage { errors.write(line: "Run 'postback-verify outbox --help' for usage.") }
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
            print(usage)
            return 0
        }
        guard let state = options.state else { return fail("outbox needs --state PATH|URL", usage: true) }
        let output = StandardStream(descriptor: 1)
        do throws(AttributionError) {
            let outbox: any Outbox
            switch state {
            case .sqlite(let path):
                outbox = try SQLiteOutbox(
                    path: options.archivePath ?? SQLiteReceivedArchive.defaultPath(besideState: path))
            case .postgreSQL(let connection):
                if options.archivePath != nil {
                    return fail("--archive applies to a SQLite --state only", usage: true)
                }
                outbox = try PostgresOutbox(connectionString: connection)
            }
            if options.requeue != nil || options.requeueDead {
                let count = try outbox.requeue(options.requeue)
                if let id = options.requeue, count == 0 {
                    return fail("no dead delivery has id \(id) (list them with --dead)", usage: false)
                }
                let deliveries = count == 1 ? "delivery" : "deliveries"
                errors.write(line: "postback-verify outbox: \(count) dead \(deliveries) owed again")
                errors.flush()
                return 0
            }
            for entry in try outbox.entries(deadOnly: options.deadOnly) {
                output.write(line: line(entry))
            }
            output.flush()
            if let failure = output.failure { return fail("cannot write the output: \(failure)", usage: false) }
        } catch {
            return fail("\(error.code.rawValue): \(error.reason)", usage: false)
        }
        return 0
    }

    /// One entry as a JSON object (strings escaped by the library's JSON writer).
    static func line(_ entry: OutboxEntry) -> String {
        "{\"id\":\(entry.id),\"destination\":\(JSONValue.string(entry.destination).jsonText),"
            + "\"status\":\(JSONValue.string(entry.status).jsonText),\"attempts\":\(entry.attempts),"
            + "\"owed-since\":\(entry.owedSince),"
            + "\"answer\":\(entry.answer.map { JSONValue.string($0).jsonText } ?? "null"),"
            + "\"request\":\(JSONValue.string(entry.request).jsonText)}"
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
            case "--dead":
                options.deadOnly = true
            case "--requeue":
                guard options.requeue == nil else { throw UsageError("--requeue given twice") }
                let text = try value()
                guard let id = Int64(text), id > 0 else {
                    throw UsageError("--requeue takes a delivery's id as outbox lists it, not \(text)")
                }
                options.requeue = id
            case "--requeue-dead":
                options.requeueDead = true
            default:
                throw UsageError(argument.hasPrefix("-") ? "unknown option \(name) for outbox"
                                 : "outbox takes no paths (\(argument))")
            }
        }
        if options.requeue != nil && options.requeueDead {
            throw UsageError("give --requeue ID or --requeue-dead, not both")
        }
        return options
    }
}
