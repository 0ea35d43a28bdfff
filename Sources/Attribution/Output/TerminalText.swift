/// How text that came from the input is shown where a person reads it (text records, messages on standard error):
/// nothing in it may reach a terminal raw, so no input can forge a line, a colour or a mark (docs/cli.md section 3).
///
/// JSON Lines output escapes the same scalars as `\uXXXX` (`JSONValue`), so a record printed to a terminal is
/// safe too and still decodes to the same string. Public, so that every program built on the library (the
/// receiver's start-up messages among them) escapes with this one definition.
@_spi(CommandLine) @_spi(Servers) @_spi(Stores) public enum TerminalText {
    /// Whether a scalar must not reach a terminal raw: C0 and C1 controls and DEL (escape sequences, carriage
    /// returns, line feeds), format characters (bidirectional overrides and isolates, zero-width characters, the
    /// BOM, U+2063), line and paragraph separators, and private-use, surrogate or unassigned code points, whose
    /// rendering nobody can predict.
    /// - Parameter scalar: a scalar of the input.
    /// - Returns: true when it must be shown escaped.
    public static func mustEscape(_ scalar: Unicode.Scalar) -> Bool {
        if scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) { return true }
        guard scalar.value >= 0xA0 else { return false }
        switch scalar.properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator, .privateUse, .surrogate, .unassigned:
            return true
        default:
            return false
        }
    }

    /// How an escaped scalar is shown: `\u{XXXX}`, its code point in hexadecimal.
    /// - Parameter scalar: the scalar to show.
    /// - Returns: `\u{XXXX}` for it, uppercase hexadecimal.
    public static func escape(_ scalar: Unicode.Scalar) -> String {
        "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
    }

    /// `text` with every scalar that ``mustEscape(_:)`` as `\u{XXXX}` (hexadecimal code point), so the result is
    /// one line of plain characters whatever the input held.
    /// - Parameter text: text that came from the input.
    /// - Returns: the text, safe to print.
    public static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: mustEscape) else { return text }
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if mustEscape(scalar) {
                out.append(contentsOf: escape(scalar).unicodeScalars)
            } else {
                out.append(scalar)
            }
        }
        return String(out)
    }
}
