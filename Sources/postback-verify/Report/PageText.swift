/// Text from the input, the schema or the command line (campaign, app, network and event names, `--label`, paths)
/// as the report page shows it: HTML-escaped, with every character that draws nothing or moves other text shown
/// as a visible `\u{…}` marker, isolated from the text around it, and shortened when long.
///
/// Escaping alone would let a name carrying U+202E RIGHT-TO-LEFT OVERRIDE reverse the text after it, and a
/// zero-width character make two names look alike; `<bdi>` alone (an isolate) still lets the override reorder
/// the name's own letters out of sight. So the controls become markers a reader sees, and the rest of the name (a
/// right-to-left script is legitimate) is isolated so it cannot reorder the page's text around it; each marker is
/// an isolate too (`dir="ltr"`), so that a right-to-left name cannot split it. A name longer than its place is cut
/// at a number of Unicode scalars (not characters: one character can hold any number of combining marks), ends in
/// `…`, and the whole name is in the `title` tooltip.
enum PageText {
    /// Longest text shown whole, in Unicode scalars, where no limit is given.
    static let defaultLimit = 80

    /// Whether `scalar` is shown as a `\u{…}` marker instead of itself: the controls (general category Cc, C0,
    /// DEL and C1, tab and line feed too), every format character (Cf: the bidirectional embeddings, overrides,
    /// isolates and marks U+202A-202E, U+2066-2069, U+200E-200F, U+061C; the zero-width characters U+200B-200D
    /// and U+2060-2064; U+FEFF; the soft hyphen; the tag characters), the line and paragraph separators (Zl, Zp,
    /// which end a bidirectional paragraph), and the Hangul fillers, letters that draw nothing. Emoji built with
    /// U+200D ZERO WIDTH JOINER show the joiner as a marker too: a report prefers seeing every scalar to a picture.
    static func isMarked(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator:
            return true
        default:
            return [0x115F, 0x1160, 0x3164, 0xFFA0].contains(scalar.value)
        }
    }

    /// `text` as element content: escaped, marked, inside one `<bdi>`; past `limit` scalars shortened, with the
    /// whole text in the `<bdi>`'s `title`.
    static func html(_ text: String, limit: Int = defaultLimit) -> String {
        let scalars = text.unicodeScalars
        let isShortened = scalars.count > limit
        var out = isShortened ? "<bdi title=\"\(attribute(text))\">" : "<bdi>"
        for scalar in scalars.prefix(isShortened ? max(1, limit - 1) : limit) {
            if isMarked(scalar) {
                out += "<span class=\"cf\" dir=\"ltr\">\(marker(scalar))</span>"
            } else {
                append(scalar, to: &out)
            }
        }
        return out + (isShortened ? "…</bdi>" : "</bdi>")
    }

    /// `text` in an attribute value or the `<title>`, where no element can be: escaped, controls as plain markers.
    static func attribute(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            if isMarked(scalar) {
                out += marker(scalar)
            } else {
                append(scalar, to: &out)
            }
        }
        return out
    }

    /// The marker of a hidden scalar: `\u{202E}`, as Swift writes one, in ASCII so that it moves nothing.
    static func marker(_ scalar: Unicode.Scalar) -> String {
        "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
    }

    /// `scalar` HTML-escaped: the five characters markup gives a meaning, as references.
    private static func append(_ scalar: Unicode.Scalar, to out: inout String) {
        switch scalar {
        case "&": out += "&amp;"
        case "<": out += "&lt;"
        case ">": out += "&gt;"
        case "\"": out += "&quot;"
        case "'": out += "&#39;"
        default: out.unicodeScalars.append(scalar)
        }
    }
}
