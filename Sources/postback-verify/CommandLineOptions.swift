@_spi(CommandLine) import Attribution
@_spi(CommandLine) import AttributionStores

/// The command line, parsed and validated before any input is read.
struct CommandLineOptions {
    enum Format: String {
        case text
        case jsonl
    }

    var format: Format = .text
    /// `--key`, `--allow-development`, `--skadnetwork-key-p256`, `--skadnetwork-key-p192`, `--strict` and
    /// `--max-impression-age`, as the library defines them for every program that verifies.
    var verification = VerifierOptions()
    var deduplicates = true
    /// `--no-fast-path` turns it off: every item takes the general path (for comparing the two; same records).
    var usesFastPath = true
    var expectation: Verdict?
    var jobs: Int?
    var isQuiet = false
    var colour: Bool?
    /// `--explain`: records also show the exact string an SKAdNetwork signature was checked over.
    var explains = false
    /// `--state PATH|URL`: remember valid postbacks across runs in this SQLite file, or in the PostgreSQL database
    /// a `postgresql://` URL or libpq keyword string names (contract 1.1; `docs/state.md`).
    var state: StateLocation?
    /// `--retention DAYS`: with `--state`, forget postbacks first seen more than this many days ago.
    var retentionDays: Int?
    /// `--schema FILE`: what conversion values mean; valid records gain `decoded` (docs/schema.md).
    var schemaPath: String?
    /// `--report FILE`: the run report's path; HTML when it ends in `.html`, JSON otherwise.
    var reportPath: String?
    /// `--label NAME`: the name standard input's items are remembered and reported by (default: `stdin` and the
    /// run's date).
    var label: String?
    var paths: [String] = []
    var showsHelp = false
    var showsVersion = false

    /// Parses `arguments` (without the program name); throws ``UsageError`` on anything it does not understand.
    static func parse(_ arguments: [String]) throws(UsageError) -> CommandLineOptions {
        var options = CommandLineOptions()
        var remaining = arguments[...]
        var onlyPaths = false
        while let argument = remaining.popFirst() {
            if onlyPaths || argument == "-" || !argument.hasPrefix("-") {
                options.paths.append(argument)
                continue
            }
            let option = OptionArgument(argument)
            let name = option.name
            func value() throws(UsageError) -> String { try option.value(from: &remaining) }
            guard name == "--" || Self.isKnown(name) else {
                throw UsageError(Self.unknownOption(argument, name: name))
            }
            switch name {
            case "--":
                onlyPaths = true
            case "-h", "--help":
                options.showsHelp = true
            case "-V", "--version":
                options.showsVersion = true
            case "--format":
                let text = try value()
                guard let format = Format(rawValue: text) else {
                    throw UsageError("--format must be text or jsonl, not \(text)")
                }
                options.format = format
            case "--key":
                let text = try value()
                try UsageError.wrapping { () throws(AttributionError) in try options.verification.addKey(text) }
            case "--allow-development":
                options.verification.allowsDevelopmentKeys = true
            case "--strict":
                options.verification.isStrict = true
            case "--no-dedupe":
                options.deduplicates = false
            case "--no-fast-path":
                options.usesFastPath = false
            case "--expect":
                let text = try value()
                guard let verdict = Verdict(rawValue: text) else {
                    throw UsageError("--expect must be valid or invalid, not \(text)")
                }
                options.expectation = verdict
            case "--jobs", "-j":
                let text = try value()
                guard let jobs = Int(text), (1...1024).contains(jobs) else {
                    throw UsageError("--jobs must be a whole number from 1 to 1024, not \(text)")
                }
                options.jobs = jobs
            case "--quiet", "-q":
                options.isQuiet = true
            case "--max-impression-age":
                let text = try value()
                try UsageError.wrapping { () throws(AttributionError) in
                    try options.verification.setMaximumImpressionAge(text)
                }
            case "--explain":
                options.explains = true
            case "--skadnetwork-key-p256", "--skadnetwork-key-p192":
                let path = try value()
                try UsageError.wrapping { () throws(AttributionError) in
                    try options.verification.replaceSKAdNetworkKey(name.hasSuffix("p256") ? .p256 : .p192, path: path)
                }
            case "--color", "--colour":
                switch try value() {
                case "always": options.colour = true
                case "never": options.colour = false
                case "auto": options.colour = nil
                case let other: throw UsageError("\(name) must be auto, always or never, not \(other)")
                }
            case "--state":
                guard options.state == nil else { throw UsageError("\(name) given twice") }
                let text = try value()
                options.state = try UsageError.wrapping { () throws(AttributionError) in try StateLocation(text) }
            case "--retention":
                let text = try value()
                options.retentionDays = try UsageError.wrapping { () throws(AttributionError) in
                    try StateLocation.retentionDays(text)
                }
            case "--schema":
                guard options.schemaPath == nil else { throw UsageError("\(name) given twice") }
                options.schemaPath = try value()
            case "--report":
                guard options.reportPath == nil else { throw UsageError("\(name) given twice") }
                let path = try value()
                guard !path.isEmpty else { throw UsageError("--report needs a file name") }
                options.reportPath = path
            case "--label":
                let text = try value()
                let isControl = { (scalar: Unicode.Scalar) in
                    scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
                }
                guard !text.isEmpty, !text.unicodeScalars.contains(where: isControl) else {
                    throw UsageError("--label must be a non-empty name without control characters")
                }
                options.label = text
            default:
                // Every name in `names` has a case above (DocumentationConsistencyTests parses each one).
                throw UsageError(Self.unknownOption(argument, name: name))
            }
        }
        if options.retentionDays != nil && options.state == nil {
            throw UsageError("--retention needs --state")
        }
        if options.state != nil && !options.deduplicates {
            throw UsageError("--state and --no-dedupe cannot be used together")
        }
        return options
    }
}

/// A mistake on the command line or in its setup (a key file that cannot be used): exit status 2.
struct UsageError: Error {
    let message: String

    init(_ message: String) {
        self.message = message
    }

    /// Runs `body`, turning the library's word on an option's value (`invalid-option`, `invalid-key`) into a usage
    /// error with the same message.
    static func wrapping<Value>(_ body: () throws(AttributionError) -> Value) throws(UsageError) -> Value {
        do {
            return try body()
        } catch {
            throw UsageError(error.reason)
        }
    }
}
