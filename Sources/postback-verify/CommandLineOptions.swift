import Attribution

/// The command line, parsed and validated before any input is read.
struct CommandLineOptions {
    enum Format: String {
        case text
        case jsonl
    }

    var format: Format = .text
    var keys: [(keyID: String, path: String)] = []
    var allowsDevelopmentKeys = false
    var isStrict = false
    var deduplicates = true
    /// `--no-fast-path` turns it off: every item takes the general path (for comparing the two; same records).
    var usesFastPath = true
    var expectation: Verdict?
    var jobs: Int?
    var isQuiet = false
    var maximumImpressionAge: UInt64?
    var colour: Bool?
    /// `--explain`: records also show the exact string an SKAdNetwork signature was checked over.
    var explains = false
    /// `--skadnetwork-key-p256 PATH`: replaces Apple's SKAdNetwork 2.1+ key (testing your own signing).
    var skAdNetworkP256KeyPath: String?
    /// `--skadnetwork-key-p192 PATH`: replaces Apple's SKAdNetwork 1.0/2.0 key (testing your own signing).
    var skAdNetworkP192KeyPath: String?
    /// `--state PATH|URL`: remember valid postbacks across runs in this SQLite file, or in the PostgreSQL database
    /// a `postgresql://` URL or libpq keyword string names (contract 1.1; `docs/state.md`).
    var statePath: String?
    /// `--retention DAYS`: with `--state`, forget postbacks first seen more than this many days ago.
    var retentionDays: Int?
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
                guard let equals = text.firstIndex(of: "="), equals != text.startIndex,
                      text.index(after: equals) != text.endIndex else {
                    throw UsageError("--key takes KID=PATH, got \(text)")
                }
                options.keys.append((String(text[..<equals]), String(text[text.index(after: equals)...])))
            case "--allow-development":
                options.allowsDevelopmentKeys = true
            case "--strict":
                options.isStrict = true
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
                guard let milliseconds = VerificationPolicy.milliseconds(inDuration: text) else {
                    throw UsageError("--max-impression-age takes a duration like 30d, 12h, 90m or 3600s, not \(text)")
                }
                options.maximumImpressionAge = milliseconds
            case "--explain":
                options.explains = true
            case "--skadnetwork-key-p256":
                guard options.skAdNetworkP256KeyPath == nil else { throw UsageError("\(name) given twice") }
                options.skAdNetworkP256KeyPath = try value()
            case "--skadnetwork-key-p192":
                guard options.skAdNetworkP192KeyPath == nil else { throw UsageError("\(name) given twice") }
                options.skAdNetworkP192KeyPath = try value()
            case "--color", "--colour":
                switch try value() {
                case "always": options.colour = true
                case "never": options.colour = false
                case "auto": options.colour = nil
                case let other: throw UsageError("\(name) must be auto, always or never, not \(other)")
                }
            case "--state":
                guard options.statePath == nil else { throw UsageError("\(name) given twice") }
                let path = try value()
                guard !path.isEmpty else {
                    throw UsageError("--state needs a file path or a PostgreSQL connection string")
                }
                guard path != "-" else {
                    throw UsageError("--state needs a file path, not - (write ./- for a file named -)")
                }
                options.statePath = path
            case "--retention":
                let text = try value()
                guard text.allSatisfy(\.isASCII), let days = Int(text), (0...36500).contains(days) else {
                    throw UsageError("--retention takes a whole number of days from 0 to 36500, not \(text)")
                }
                options.retentionDays = days
            default:
                // Every name in `names` has a case above (DocumentationConsistencyTests parses each one).
                throw UsageError(Self.unknownOption(argument, name: name))
            }
        }
        if options.retentionDays != nil && options.statePath == nil {
            throw UsageError("--retention needs --state")
        }
        if options.statePath != nil && !options.deduplicates {
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
}
