@_spi(CommandLine) import AttributionStores

/// `export --to DIR`'s options: their defaults, how their values are read, and which other options they exclude.
extension ExportCommand {
    /// 128 MiB compressed: in Snowflake's advice for loaded files (100-250 MB compressed), far under BigQuery's
    /// 4 GB limit for a compressed JSON file, and, at the receiver's sustained rate, a file every few minutes at
    /// most, so even a loader that loads each file as a job of its own stays under BigQuery's 1,500 loads per
    /// table a day as long as it loads a day's files in batches (docs/state.md).
    static let defaultRollBytes = 128 * 1024 * 1024
    /// 15 minutes: a quiet archive still reaches the warehouse within a quarter of an hour, in at most 96
    /// time-rolled files a day.
    static let defaultRollSeconds = 900
    /// How long a follower waits before reading again when it found nothing new.
    static let defaultPoll = Duration.seconds(5)
    /// The bounds of `--roll-bytes`: below 64 KiB files are too small to be worth a load; BigQuery refuses a gzip
    /// JSON file over 4 GB, and a file ends a little after its size is reached, hence 3 GiB.
    static let rollBytesRange = (64 * 1024)...(3 * 1024 * 1024 * 1024)

    /// The options that make no sense with `--to` or without it, as a usage error's message; nil when none.
    static func directoryConflict(_ options: Options) -> String? {
        guard options.directory != nil else {
            let only = [("--follow", options.follow), ("--roll-bytes", options.rollBytes != nil),
                        ("--roll-seconds", options.rollSeconds != nil), ("--poll-seconds", options.pollSeconds != nil)]
            if let (name, _) = only.first(where: { $0.1 }) {
                return "\(name) applies to --to DIR only (export into files); standard output gets one export"
            }
            return nil
        }
        if options.pollSeconds != nil && !options.follow {
            return "--poll-seconds applies to --follow only: without it, export reads until nothing is left and ends"
        }
        let excluded = [("--since", options.since != nil), ("--until", options.until != nil),
                        ("--report", options.reportPath != nil), ("--schema", options.schemaPath != nil)]
        if let (name, _) = excluded.first(where: { $0.1 }) {
            return "\(name) applies to standard output only: --to DIR holds every row once, so that an export "
                + "resumed from its manifest leaves no gap; export a period to standard output"
        }
        return nil
    }

    static func isPostgreSQL(_ state: StateLocation) -> Bool {
        if case .postgreSQL = state { return true }
        return false
    }

    /// `--roll-bytes`: a whole number of bytes, or of KiB, MiB or GiB with `K`, `M` or `G` (`128M`), within
    /// ``rollBytesRange``.
    static func size(_ text: String, option: String) throws(UsageError) -> Int {
        var digits = Substring(text)
        var unit = 1
        switch text.utf8.last {
        case UInt8(ascii: "K"), UInt8(ascii: "k"): unit = 1024
        case UInt8(ascii: "M"), UInt8(ascii: "m"): unit = 1024 * 1024
        case UInt8(ascii: "G"), UInt8(ascii: "g"): unit = 1024 * 1024 * 1024
        default: break
        }
        if unit > 1 { digits = digits.dropLast() }
        guard let number = wholeNumber(String(digits)), number <= rollBytesRange.upperBound / unit,
              rollBytesRange.contains(number * unit) else {
            throw UsageError("\(option) takes a size from 64K to 3G (bytes, or with K, M or G: 128M), not \(text)")
        }
        return number * unit
    }

    /// ASCII digits, at most 12, as a number; nil for anything else (a sign, a space, a fraction).
    static func wholeNumber(_ text: String) -> Int? {
        guard !text.isEmpty, text.utf8.count <= 12,
              text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else { return nil }
        return Int(text)
    }

    /// `--poll-seconds`: seconds with up to three decimals, from 0.01 to 3600.
    static func pollInterval(_ text: String) throws(UsageError) -> Duration {
        let parts = text.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        let whole = parts.first.flatMap { wholeNumber(String(decoding: $0, as: UTF8.self)) }
        let fraction = parts.count == 2 ? String(decoding: parts[1], as: UTF8.self) : ""
        let thousandths = wholeNumber(fraction.padding(toLength: 3, withPad: "0", startingAt: 0))
        guard parts.count <= 2, let whole, fraction.utf8.count <= 3, parts.count == 1 || !fraction.isEmpty,
              let thousandths else {
            throw UsageError("--poll-seconds takes seconds with up to three decimals (0.5, 5), not \(text)")
        }
        let milliseconds = whole * 1000 + thousandths
        guard (10...3_600_000).contains(milliseconds) else {
            throw UsageError("--poll-seconds takes from 0.01 to 3600 seconds, not \(text)")
        }
        return .milliseconds(milliseconds)
    }
}
