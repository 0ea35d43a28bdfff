/// The member names and values that every postback and impression repeats, handed out as `String` literals.
///
/// Swift keeps strings of up to 15 UTF-8 bytes inline; a longer one parsed from input is a heap allocation, with
/// reference counting on every copy. A literal is an immortal object in the binary: no allocation, no counting.
/// The parser asks here first, so `"advertised-item-identifier"` costs a length check and a `memcmp` instead.
/// The result is the same string either way (exact bytes); only its storage differs.
enum KnownJSONStrings {
    /// The member names of the tables (``MessageLayout``, ``SKAdNetworkField``) longer than 15 bytes, and the long
    /// values Apple's postbacks repeat. The tables' names are literals, so they are immortal here too.
    private static let strings: [String] = {
        let tables = [MessageLayout.postbackPayload, .postbackBody, .impressionPayload]
        let names = tables.flatMap { $0.members.map(\.name) }
            + SKAdNetworkField.allCases.map(\.rawValue) + [SKAdNetworkField.attributionSignature]
        var unique: [String] = []
        for name in names where name.utf8.count > 15 && !unique.contains(where: { $0.isExactlyEqual(to: name) }) {
            unique.append(name)
        }
        return unique + ["com.apple.AppStore"]
    }()

    /// Longest entry's length; `byLength[n]` lists the entries of `n` bytes.
    private static let byLength: [[String]] = {
        var table = [[String]](repeating: [], count: (strings.map(\.utf8.count).max() ?? 0) + 1)
        for string in strings {
            table[string.utf8.count].append(string)
        }
        return table
    }()

    /// The literal with exactly these UTF-8 bytes, when there is one.
    @inline(__always)
    static func string(for bytes: ByteCursor) -> String? {
        // Short strings are inline anyway; anything longer than the table is not in it.
        guard bytes.count > 15, bytes.count < byLength.count else { return nil }
        for candidate in byLength[bytes.count] where ByteCursor.overUTF8(candidate, { bytes.elementsEqual($0) }) {
            return candidate
        }
        return nil
    }
}
