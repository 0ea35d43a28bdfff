/// One command-line argument read as an option: `--name=value` splits at its first `=`; otherwise the value, when
/// the option takes one, is the next argument. The one way `postback-verify` and `postback-verify export` read them.
struct OptionArgument {
    /// The option's name (`--format`), or the whole argument.
    let name: String
    /// The value written after `=`, if any.
    let inlineValue: String?

    init(_ argument: String) {
        if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
            name = String(argument[..<equals])
            inlineValue = String(argument[argument.index(after: equals)...])
        } else {
            name = argument
            inlineValue = nil
        }
    }

    /// The option's value: the inline one, or the next of `remaining` (taken from it).
    func value(from remaining: inout ArraySlice<String>) throws(UsageError) -> String {
        if let inlineValue { return inlineValue }
        guard let next = remaining.popFirst() else { throw UsageError("\(name) needs a value") }
        return next
    }
}
