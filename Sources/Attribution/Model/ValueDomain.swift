/// The values a member may take beyond its JSON type (``MessageMember/domain``), and what a message says when a
/// value is outside them. One definition serves both paths: ``range`` and ``textShape`` (with the choices' bytes)
/// are what the fast path checks the bytes it scanned against (no `String` made, ``MessageLayout/checks``), and
/// ``complaint(about:)`` and ``complaint(aboutInteger:literal:)`` decide and word the general path's finding
/// through the same two, the words built only when a value fails. A domain of the other JSON type (an integer
/// range on a string member) constrains nothing.
enum ValueDomain: Sendable {
    /// Any value of the member's type (integers: 0 ... 2^64-1).
    case any
    /// A string that is not empty; with `lowercase`, holding no ASCII capital letter either.
    case nonEmpty(lowercase: Bool)
    /// An integer in `range`; `wording` names the values in messages ("0, 1 or 2"), else the range is shown.
    case integers(ClosedRange<UInt64>, wording: String? = nil)
    /// A string spelled exactly as one of `values`, which messages name as `wording`; a `hint` is added when the
    /// value is `misspelling` (Apple's own spelling differs from an obvious one).
    case oneOf([String], wording: String, hint: (misspelling: String, hint: String)? = nil)
    /// A string of ASCII digits whose count is in `counts` (leading zeros allowed: "07" has two).
    case digits(ClosedRange<Int>)
    /// A string of exactly `count` ASCII capital letters, named `wording` in messages.
    case capitalLetters(count: Int, wording: String)
    /// 36 characters, hex digits in groups 8-4-4-4-12, either case; version and variant bits not checked.
    case uuid

    // MARK: - Strings

    /// Whether a string with these UTF-8 bytes is in the domain (any string, for an integer domain).
    func admits(_ utf8: some Collection<UInt8>) -> Bool {
        let choices: [String] = if case .oneOf(let values, _, _) = self { values } else { [] }
        return textShape.admits(utf8, choices: choices.lazy.map(\.utf8))
    }

    /// The domain's string values as plain data (the choices apart): what ``MessageLayout`` keeps per slot for
    /// the fast path, so checking a value retains nothing.
    var textShape: TextShape {
        switch self {
        case .any: .any
        case .nonEmpty(let lowercase): lowercase ? .nonEmptyLowercase : .nonEmpty
        case .integers: .any
        case .oneOf: .choices
        case .digits(let counts): .digits(counts)
        case .capitalLetters(let count, _): .capitalLetters(count)
        case .uuid: .uuid
        }
    }

    /// The values a string member may take, without their wording (see the cases of ``ValueDomain``).
    enum TextShape: Sendable, Equatable {
        case any, nonEmpty, nonEmptyLowercase, choices, uuid
        case digits(ClosedRange<Int>)
        case capitalLetters(Int)

        /// Whether a string with these UTF-8 bytes is in the domain; `choices` are the spellings of ``choices``.
        @inline(__always)
        func admits<Choices: Sequence>(_ utf8: some Collection<UInt8>, choices: Choices) -> Bool
        where Choices.Element: Collection<UInt8> {
            switch self {
            case .any:
                true
            case .nonEmpty:
                !utf8.isEmpty
            case .nonEmptyLowercase:
                !utf8.isEmpty && !utf8.contains { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") }
            case .choices:
                choices.contains { $0.elementsEqual(utf8) }
            case .digits(let counts):
                counts.contains(utf8.count) && utf8.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
            case .capitalLetters(let count):
                utf8.count == count && utf8.allSatisfy { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") }
            case .uuid:
                ValueDomain.isUUID(utf8)
            }
        }
    }

    /// What a message says after the member's name when `value` is outside the domain; nil when it is inside.
    func complaint(about value: String) -> String? {
        guard !admits(value.utf8) else { return nil }
        let quoted = JSONValue.quoted(value)
        switch self {
        case .any, .integers:
            return nil
        case .nonEmpty:
            return value.isEmpty ? "must not be empty" : "must be lowercase"
        case .oneOf(_, let wording, let hint):
            let extra = hint.flatMap { value.isExactlyEqual(to: $0.misspelling) ? " (\($0.hint))" : nil } ?? ""
            return "is \(quoted), not \(wording)\(extra)"
        case .digits(let counts):
            return "is \(quoted), not \(Self.alternatives(counts.map(String.init))) ASCII digits"
        case .capitalLetters(_, let wording):
            return "is \(quoted), not \(wording)"
        case .uuid:
            return "is \(quoted), not a UUID (8-4-4-4-12 hex digits)"
        }
    }

    // MARK: - Integers

    /// Whether the integer is in the domain (any integer, for a string domain).
    func admits(_ integer: UInt64) -> Bool {
        range.contains(integer)
    }

    /// The integers the domain admits (all of them for ``any`` and the string domains).
    var range: ClosedRange<UInt64> {
        if case .integers(let range, _) = self { return range }
        return 0...UInt64.max
    }

    /// What a message says after the member's name when the integer whose literal is `literal` is outside the
    /// domain (or beyond 2^64-1: `value` nil).
    func complaint(aboutInteger value: UInt64?, literal: String) -> String? {
        if let value, admits(value) { return nil }
        if case .integers(_, let wording?) = self {
            return "is \(literal), not \(wording)"
        }
        return "is \(literal), outside \(range.lowerBound)...\(range.upperBound)"
    }

    // MARK: - Helpers

    /// "a", "a or b", "a, b or c".
    private static func alternatives(_ words: [String]) -> String {
        guard words.count > 1 else { return words.first ?? "" }
        return words.dropLast().joined(separator: ", ") + " or " + words[words.count - 1]
    }

    fileprivate static func isUUID(_ utf8: some Collection<UInt8>) -> Bool {
        guard utf8.count == 36 else { return false }
        for (offset, byte) in utf8.enumerated() {
            if offset == 8 || offset == 13 || offset == 18 || offset == 23 {
                guard byte == UInt8(ascii: "-") else { return false }
            } else {
                let isHex = (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                    || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
                    || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(byte)
                guard isHex else { return false }
            }
        }
        return true
    }
}
