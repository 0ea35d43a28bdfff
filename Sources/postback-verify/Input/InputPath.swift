@_spi(CommandLine) import Attribution
/// One PATH argument of the command line: standard input, or a file or directory.
enum InputPath: Sendable, Hashable {
    /// Standard input, named `-` in records.
    case standardInput
    /// A file (`*.json` is one item, anything else one item per line) or a directory to search recursively.
    case path(String)

    /// The meaning of one argument: `-` is standard input, anything else a path.
    init(argument: String) {
        self = argument == "-" ? .standardInput : .path(argument)
    }

    /// The inputs named by the PATH arguments, in order; no argument means standard input (docs/cli.md section 2).
    static func parse(arguments: [String]) -> [InputPath] {
        arguments.isEmpty ? [.standardInput] : arguments.map(InputPath.init(argument:))
    }
}
