/// The command line's option names, the one list the parser accepts and suggests from; `--help`, the README's
/// option table and `docs/cli.md` are held to it by a test (`DocumentationConsistencyTests`).
extension CommandLineOptions {
    /// Every option, each as its spellings (a short form or alias first when there is one) and whether it takes
    /// a value.
    static let names: [(spellings: [String], takesValue: Bool)] = [
        (["--format"], true),
        (["--key"], true),
        (["--allow-development"], false),
        (["--strict"], false),
        (["--no-dedupe"], false),
        (["--no-fast-path"], false),
        (["--expect"], true),
        (["-j", "--jobs"], true),
        (["--max-impression-age"], true),
        (["--color", "--colour"], true),
        (["--explain"], false),
        (["--skadnetwork-key-p256"], true),
        (["--skadnetwork-key-p192"], true),
        (["--state"], true),
        (["--retention"], true),
        (["--schema"], true),
        (["--report"], true),
        (["--label"], true),
        (["-q", "--quiet"], false),
        (["-h", "--help"], false),
        (["-V", "--version"], false),
    ]

    /// Whether `name` (without an `=VALUE`) is one of ``names``.
    static func isKnown(_ name: String) -> Bool {
        names.contains { $0.spellings.contains(name) }
    }

    /// The message for an option the parser does not know, naming the nearest known one when it is close:
    /// `unknown option --formt (did you mean --format?)`.
    static func unknownOption(_ argument: String, name: String) -> String {
        guard let nearest = nearestName(to: name) else {
            return "unknown option \(argument)"
        }
        return "unknown option \(argument) (did you mean \(nearest)?)"
    }

    /// The long option closest to `name` by edit distance, when a typo (or one dash for two) could explain it.
    static func nearestName(to name: String) -> String? {
        let typed = Array(name.drop { $0 == "-" }.lowercased().unicodeScalars)
        guard !typed.isEmpty else { return nil }
        var best: (name: String, distance: Int)?
        for option in names {
            for spelling in option.spellings where spelling.hasPrefix("--") {
                let candidate = Array(spelling.dropFirst(2).unicodeScalars)
                let distance = editDistance(typed, candidate)
                if distance < (best?.distance ?? .max) {
                    best = (spelling, distance)
                }
            }
        }
        guard let best else { return nil }
        // One edit in four characters at most, and at least one edit allowed: `--formt`, `--quite`, `-state`,
        // `--allow-develpment`; never a guess for something unlike every option.
        let allowed = max(1, min(3, typed.count / 4))
        return best.distance <= allowed ? best.name : nil
    }

    /// Levenshtein distance between two scalar arrays (substitutions, insertions, deletions; a swap of two
    /// neighbours counts as one edit).
    static func editDistance(_ a: [Unicode.Scalar], _ b: [Unicode.Scalar]) -> Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previousPrevious = [Int](repeating: 0, count: b.count + 1)
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    current[j] = min(current[j], previousPrevious[j - 2] + 1)
                }
            }
            (previousPrevious, previous, current) = (previous, current, previousPrevious)
        }
        return previous[b.count]
    }
}
