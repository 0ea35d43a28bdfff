import Testing

@_spi(CommandLine) @_spi(Servers) @_spi(Stores) @testable import Attribution

@Suite("StrictJSONParser")
struct StrictJSONParserTests {
    static let hostile: [Input] = [
        // Duplicate member names, however they are spelled.
        Input("duplicate member", #"{"a":1,"a":2}"#),
        Input("duplicate member with the same value", #"{"a":1,"a":1}"#),
        Input("duplicate spelled with a \\u escape", #"{"a":1,"\u0061":2}"#),
        Input("duplicate kid spelled with a \\u escape", #"{"kid":"x","k\u0069d":"y"}"#),
        Input("duplicate spelled with an escaped slash", #"{"a/b":1,"a\/b":2}"#),
        Input("duplicate astral name via a surrogate pair", #"{"😀":1,"\ud83d\ude00":2}"#),
        Input("duplicate in a nested object", #"{"x":{"b":1,"b":2}}"#),
        Input("duplicate of the first member of a large object", largeObject(members: 40, repeatingFirst: true)),
        Input("duplicate empty name", #"{"":1,"":2}"#),
        // Byte order mark and whitespace RFC 8259 does not allow.
        Input("leading byte order mark", bytes: [0xEF, 0xBB, 0xBF] + Array("{}".utf8)),
        Input("byte order mark alone", bytes: [0xEF, 0xBB, 0xBF]),
        Input("form feed as whitespace", "\u{0C}{}"),
        Input("no-break space as whitespace", "\u{A0}{}"),
        Input("empty text", ""),
        Input("whitespace only", " \t\r\n"),
        // Depth.
        .nestedArrays(17),
        .nestedObjects(17),
        Input("100000 opening brackets", String(repeating: "[", count: 100_000)),
        Input("100000 nested objects opened", String(repeating: "{\"a\":", count: 100_000)),
        // Numbers outside the RFC 8259 grammar.
        Input("leading zero", "01"),
        Input("negative leading zero", "-01"),
        Input("leading zero in an array", "[00]"),
        Input("minus alone", "-"),
        Input("minus then space", "- 1"),
        Input("trailing decimal point", "1."),
        Input("leading decimal point", ".5"),
        Input("plus sign", "+1"),
        Input("exponent without digits", "1e"),
        Input("signed exponent without digits", "1e+"),
        Input("fraction then empty exponent", "1.5E-"),
        Input("hexadecimal", "0x10"),
        Input("NaN", "NaN"),
        Input("Infinity", "Infinity"),
        Input("negative Infinity", "-Infinity"),
        // Invalid UTF-8 inside strings.
        .string("overlong two-byte slash", [0xC0, 0xAF]),
        .string("overlong two-byte with C1 lead", [0xC1, 0xBF]),
        .string("overlong three-byte", [0xE0, 0x80, 0xAF]),
        .string("overlong four-byte", [0xF0, 0x80, 0x80, 0xAF]),
        .string("UTF-8 encoded high surrogate", [0xED, 0xA0, 0x80]),
        .string("UTF-8 encoded low surrogate", [0xED, 0xBF, 0xBF]),
        .string("scalar above U+10FFFF", [0xF4, 0x90, 0x80, 0x80]),
        .string("F5 lead byte", [0xF5, 0x80, 0x80, 0x80]),
        .string("FF byte", [0xFF]),
        .string("lone continuation byte", [0x80]),
        .string("truncated three-byte sequence", [0xE2, 0x82]),
        .string("truncated four-byte sequence", [0xF0, 0x9F, 0x98]),
        Input("truncated sequence at the end of the text", bytes: [0x22, 0xE2, 0x82]),
        Input("invalid UTF-8 outside a string", bytes: [0x5B, 0xFF, 0x5D]),
        // Escapes a Swift String cannot hold or RFC 8259 does not define.
        Input("lone high surrogate escape", #""\uD800""#),
        Input("lone low surrogate escape", #""\uDC00""#),
        Input("high surrogate then a letter", #""\uD800x""#),
        Input("high surrogate then a non-surrogate escape", #""\uD800\u0041""#),
        Input("two high surrogates", #""\uDBFF\uDBFF""#),
        Input("reversed surrogate pair", #""\uDE00\uD83D""#),
        Input("lone surrogate in a member name", #"{"\uD800":1}"#),
        Input("short \\u escape", #""\u12""#),
        Input("non-hex \\u escape", #""\u12G4""#),
        Input("unknown escape", #""\x41""#),
        Input("escaped single quote", #""\'""#),
        Input("backslash at the end", #""\"#),
        // Strings.
        Input("raw tab in a string", "\"a\tb\""),
        Input("raw NUL in a string", bytes: [0x22, 0x00, 0x22]),
        Input("unterminated string", "\"abc"),
        Input("single-quoted string", "'a'"),
        // Trailing data.
        Input("trailing letter", "{} x"),
        Input("extra closing brace", "{}}"),
        Input("extra closing bracket", "[1]]"),
        Input("two values", "1 2"),
        Input("string then letter", #""a"b"#),
        Input("trailing NUL", bytes: Array("{}".utf8) + [0x00]),
        Input("trailing comment", "[1] // note"),
        // Structure.
        Input("trailing comma in an array", "[1,]"),
        Input("trailing comma in an object", #"{"a":1,}"#),
        Input("missing comma", "[1 2]"),
        Input("missing colon", #"{"a" 1}"#),
        Input("missing value", #"{"a":}"#),
        Input("number as a member name", "{1:1}"),
        Input("unclosed array", "[1"),
        Input("unclosed object", #"{"a":1"#),
        Input("truncated literal", "tru"),
        Input("capitalised literal", "True"),
        Input("literal with trailing letters", "nulll"),
    ]

    static func largeObject(members: Int, repeatingFirst: Bool) -> String {
        var names = (0..<members).map { "\"m\($0)\":\($0)" }
        if repeatingFirst {
            names.append("\"m0\":0")
        }
        return "{" + names.joined(separator: ",") + "}"
    }

    @Test("A hostile input is rejected as malformed input (J1)", arguments: hostile)
    func rejectsHostileInput(_ input: Input) {
        #expect(throws: AttributionError.malformed("any reason")) {
            try StrictJSONParser.parse(input.bytes)
        }
    }

    static let acceptable: [Input] = [
        .nestedArrays(16),
        .nestedObjects(16),
        Input("names equal only under canonical equivalence", "{\"\u{E9}\":1,\"e\u{301}\":2}"),
        Input("names differing in case", #"{"a":1,"A":2}"#),
        Input("same name in sibling objects", #"[{"a":1},{"a":2}]"#),
        Input("large object without duplicates", largeObject(members: 40, repeatingFirst: false)),
        Input(
            "large object with names equal only under canonical equivalence",
            "{" + (0..<20).map { "\"m\($0)\":0," }.joined() + "\"\u{E9}\":1,\"e\u{301}\":2}"
        ),
        Input("surrogate pair escape", #""\ud83d\ude00""#),
        Input("NUL escape", #""\u0000""#),
        Input("every simple escape", #""\"\\\/\b\f\n\r\t""#),
        Input("noncharacter U+FFFF", bytes: [0x22, 0xEF, 0xBF, 0xBF, 0x22]),
        Input("highest scalar U+10FFFF", bytes: [0x22, 0xF4, 0x8F, 0xBF, 0xBF, 0x22]),
        Input("negative zero", "-0"),
        Input("zero fraction and exponent", "0.0e-0"),
        Input("capital exponent with sign", "1E+2"),
        Input("whitespace around a value", " \t\r\n[ 1 , { \"a\" : null } ]\n"),
        Input("bare string", #""kid""#),
        Input("bare literal", "false"),
    ]

    @Test("An input at the edge of the rules is accepted", arguments: acceptable)
    func acceptsEdgeInput(_ input: Input) throws {
        _ = try StrictJSONParser.parse(input.bytes)
    }

    static let reasons: [(text: String, reason: String)] = [
        (#"{"alg":"ES256","kid":"a","k\u0069d":"b"}"#, #"duplicate member "kid" at byte 25"#),
        (String(repeating: "[", count: 17), "nesting deeper than 16 at byte 16"),
        (#"{"alg":"ES256","n": 01}"#, "leading zero in number at byte 20"),
        ("\u{FEFF}{}", "byte order mark"),
        (#"{"a":1} x"#, "unexpected 'x' at byte 8"),
        (#""\uD800""#, "unpaired high surrogate escape at byte 1"),
        ("[\"\u{1}\"]", "unescaped control character 0x01 in string at byte 2"),
    ]

    @Test("A rejection says what and where", arguments: reasons)
    func explainsRejection(_ text: String, _ reason: String) {
        let error = #expect(throws: AttributionError.self) {
            try StrictJSONParser.parse(Array(text.utf8))
        }
        #expect(error?.code == .malformedInput)
        #expect(error?.rule == "J1")
        #expect(error?.reason.contains(reason) == true, "\(error?.reason ?? "no error")")
    }

    @Test("Every proper prefix of a valid object is rejected")
    func rejectsEveryPrefix() throws {
        let text = Array(#"{"a":[1,-2.5e3,true,null,"x\u00e9\n"],"b":{"c":{}}}"#.utf8)
        _ = try StrictJSONParser.parse(text)
        for end in 0..<text.count {
            #expect(throws: AttributionError.self, "prefix of \(end) bytes") {
                try StrictJSONParser.parse(text[..<end])
            }
        }
    }

    @Test("The depth limit follows the options")
    func depthFollowsOptions() throws {
        _ = try StrictJSONParser.parse(Array("[[]]".utf8), options: .init(maximumDepth: 2))
        #expect(throws: AttributionError.self) {
            try StrictJSONParser.parse(Array("[[[]]]".utf8), options: .init(maximumDepth: 2))
        }
        _ = try StrictJSONParser.parse(Array("1".utf8), options: .init(maximumDepth: 0))
        #expect(throws: AttributionError.self) {
            try StrictJSONParser.parse(Array("[]".utf8), options: .init(maximumDepth: 0))
        }
    }

    @Test("Duplicates are kept in order when the options allow them")
    func keepsDuplicatesWhenAllowed() throws {
        let value = try StrictJSONParser.parse(
            Array(#"{"a":1,"\u0061":2}"#.utf8), options: .init(rejectsDuplicateMembers: false)
        )
        let object = try #require(value.objectValue)
        #expect(object.members.map(\.name) == ["a", "a"])
        #expect(object.members.map { $0.value.numberValue?.literal } == ["1", "2"])
    }

    @Test("Names equal only under canonical equivalence stay two members")
    func keepsCanonicallyEquivalentNames() throws {
        let value = try StrictJSONParser.parse(Array("{\"\u{E9}\":1,\"e\u{301}\":2}".utf8))
        let names = try #require(value.objectValue).members.map(\.name)
        #expect(names.map { Array($0.unicodeScalars) } == [["\u{E9}"], ["e", "\u{301}"]])
    }

    @Test("Members keep their received order")
    func keepsMemberOrder() throws {
        let value = try StrictJSONParser.parse(Array(#"{"z":1,"a":2,"m":{"y":0,"b":0}}"#.utf8))
        let object = try #require(value.objectValue)
        #expect(object.members.map(\.name) == ["z", "a", "m"])
        #expect(object["m"]?.objectValue?.members.map(\.name) == ["y", "b"])
    }

    @Test("Escapes decode to the scalars they name")
    func decodesEscapes() throws {
        let text = #"["\"\\\/\b\f\n\r\t", "\u0041\u00e9\u20AC\ud83d\ude00", "a\u0000b"]"#
        let value = try StrictJSONParser.parse(Array(text.utf8))
        #expect(value == .array([.string("\"\\/\u{8}\u{C}\n\r\t"), .string("Aé€😀"), .string("a\u{0}b")]))
    }

    @Test("A string without escapes keeps its UTF-8 as received")
    func keepsRawUTF8() throws {
        let value = try StrictJSONParser.parse(Array("\"caf\u{E9} \u{1F600} \u{2028}\"".utf8))
        #expect(value.stringValue.map { Array($0.utf8) } == Array("caf\u{E9} \u{1F600} \u{2028}".utf8))
    }

    static let integers: [(literal: String, uint64: UInt64?, int64: Int64?)] = [
        ("18446744073709551615", UInt64.max, nil),
        ("18446744073709551616", nil, nil),
        ("9223372036854775807", UInt64(Int64.max), Int64.max),
        ("-9223372036854775808", nil, Int64.min),
        ("-9223372036854775809", nil, nil),
        ("10738027756", 10_738_027_756, 10_738_027_756),
        ("0", 0, 0),
        ("-0", 0, 0),
        ("-1", nil, -1),
    ]

    @Test("Integers are read exactly from the literal", arguments: integers)
    func readsIntegersExactly(_ literal: String, _ uint64: UInt64?, _ int64: Int64?) throws {
        let number = try #require(StrictJSONParser.parse(Array(literal.utf8)).numberValue)
        #expect(number.literal == literal)
        #expect(number.isInteger)
        #expect(number.uint64Value == uint64)
        #expect(number.int64Value == int64)
    }

    @Test("A fraction or an exponent makes a non-integer, kept as written", arguments: ["1.0", "1e0", "1E+2", "-0.5"])
    func keepsNonIntegers(_ literal: String) throws {
        let number = try #require(StrictJSONParser.parse(Array(literal.utf8)).numberValue)
        #expect(number.literal == literal)
        #expect(!number.isInteger)
        #expect(number.uint64Value == nil)
    }

    @Test("Parsing reads any collection of bytes, contiguous or not")
    func parsesAnyCollection() throws {
        let text = #"{"kid":"apple-development-identifier\/1"}"#
        let kid = JSONObject.Member(name: "kid", value: .string("apple-development-identifier/1"))
        let expected = JSONValue.object(JSONObject(members: [kid]))
        #expect(try StrictJSONParser.parse(text.utf8) == expected)
        #expect(try StrictJSONParser.parse(Array(("  " + text).utf8).dropFirst(2)) == expected)
        #expect(try StrictJSONParser.parse(text.utf8.lazy.map { $0 }) == expected)
    }

    @Test("Serialisation is compact, keeps member order, escapes what RFC 8259 and a terminal require")
    func serialises() throws {
        let text = #"{ "b" : [ 1 , -2.50E+3 , true , false , null ] , "a" : { } , "c" : [ ] , "d" : "\u00e9\/\u0001" "#
            + "}"
        let value = try StrictJSONParser.parse(Array(text.utf8))
        #expect(value.jsonText == #"{"b":[1,-2.50E+3,true,false,null],"a":{},"c":[],"d":"é/\u0001"}"#)
        #expect(JSONValue.quoted("a\"b\\c\n\r\t\u{8}\u{C}\u{0}\u{1F}\u{7F}/€") == #""a\"b\\c\n\r\t\b\f\u0000\u001f"#
            + #"\u007f/€""#)
        // C1 controls, bidirectional overrides and isolates, line separators, U+2063, private use: as \uXXXX
        // (a surrogate pair above U+FFFF), and they decode to the same string; printable non-ASCII stays UTF-8.
        let hostile = "é\u{85}\u{9B}\u{202E}\u{2066}\u{2028}\u{2063}\u{FEFF}\u{E000}\u{F0000}ü"
        #expect(JSONValue.quoted(hostile)
            == #""é\u0085\u009b\u202e\u2066\u2028\u2063\ufeff\ue000\udb80\udc00ü""#)
        #expect(try StrictJSONParser.parse(Array(JSONValue.quoted(hostile).utf8)) == .string(hostile))
        // DEL is valid raw inside a JSON string (RFC 8259 section 7): read as itself, written escaped.
        #expect(try StrictJSONParser.parse(Array("\"a\u{7F}b\"".utf8)) == .string("a\u{7F}b"))
        #expect(JSONValue.quoted("") == #""""#)
    }

    @Test("Serialising then parsing gives the same value", arguments: JSONTestSuiteTests.mustAccept)
    func roundTrips(_ name: String) throws {
        let options = StrictJSONParser.Options(rejectsDuplicateMembers: false)
        let value = try StrictJSONParser.parse(JSONTestSuiteTests.contents(of: name), options: options)
        let text = value.jsonText
        let again = try StrictJSONParser.parse(Array(text.utf8), options: options)
        #expect(again == value)
        #expect(Array(again.jsonText.utf8) == Array(text.utf8))
    }

    /// `PlainJSONText.end` reads unchecked, proven in bounds by its `checkBounds(start..<bytes.count)` (start not
    /// negative) and its loops' conditions (the end). From every start of texts whose first byte that is not plain
    /// falls at each offset of an eight-byte word, and past its last word, it finds what a byte-by-byte search finds.
    @Test("PlainJSONText.end is proven in bounds by its range check and finds the first byte that is not plain",
          arguments: [UInt8(ascii: "\""), UInt8(ascii: "\\"), 0x00, 0x1F, 0x7F, 0x80, 0xFF, nil])
    func plainTextEndIsProvenInBounds(_ stop: UInt8?) {
        for length in 0...27 {
            for stopAt in 0...length {
                var bytes = (0..<length).map { UInt8(ascii: "a") + UInt8($0 % 26) }
                if let stop, stopAt < length { bytes[stopAt] = stop }
                ByteCursor.over(bytes) { cursor in
                    for start in 0...length {
                        let expected = bytes[start...].firstIndex { !PlainJSONText.isPlain($0) } ?? length
                        #expect(PlainJSONText.end(in: cursor, from: start) == expected,
                                "length \(length), stop at \(stopAt), start \(start)")
                    }
                }
            }
        }
    }
}

extension StrictJSONParserTests {
    /// One JSON text for a parameterized case, shown in test output by its label.
    struct Input: Sendable, CustomTestStringConvertible {
        let label: String
        let bytes: [UInt8]

        init(_ label: String, _ text: String) {
            self.label = label
            self.bytes = Array(text.utf8)
        }

        init(_ label: String, bytes: [UInt8]) {
            self.label = label
            self.bytes = bytes
        }

        var testDescription: String { label }

        static func nestedArrays(_ depth: Int) -> Input {
            let text = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
            return Input("\(depth) nested arrays", text)
        }

        static func nestedObjects(_ depth: Int) -> Input {
            let text = String(repeating: "{\"a\":", count: depth - 1) + "{}" + String(repeating: "}", count: depth - 1)
            return Input("\(depth) nested objects", text)
        }

        /// A string literal around raw bytes, for UTF-8 cases.
        static func string(_ label: String, _ raw: [UInt8]) -> Input {
            Input(label, bytes: [0x22] + raw + [0x22])
        }
    }
}

/// The parser hands out literals for the long names postbacks repeat; the value must be the received bytes exactly.
@Suite("Known JSON strings")
struct KnownJSONStringsTests {
    static let spellings: [String] = [
        // Known names and values, as they are.
        "postback-identifier", "advertised-item-identifier", "com.apple.AppStore", "publisher-item-identifier",
        // Same length as a known name, one byte off; a prefix; a longer name; a canonically equivalent spelling.
        "postback-identifieR", "postback-identifie", "postback-identifiers", "source-identifi\u{E9}r",
        "source-identifie\u{301}r",
    ]

    @Test("A parsed name or value has exactly the received UTF-8 bytes, known or not", arguments: spellings)
    func exactBytes(spelling: String) throws {
        let text = #"{"\#(spelling)":"\#(spelling)"}"#
        let object = try #require(try StrictJSONParser.parse(Array(text.utf8)).objectValue)
        let member = try #require(object.members.first)
        #expect(Array(member.name.utf8) == Array(spelling.utf8))
        #expect(Array((member.value.stringValue ?? "").utf8) == Array(spelling.utf8))
    }

    @Test("An escaped spelling of a known name decodes to the name and still counts as a duplicate of it")
    func escapedKnownName() throws {
        let escaped = #"{"postback-identifier":"a","postback-identifie\u0072":"b"}"#
        #expect(throws: AttributionError.self) { try StrictJSONParser.parse(Array(escaped.utf8)) }
        let single = #"{"postback-identifie\u0072":"a"}"#
        let object = try #require(try StrictJSONParser.parse(Array(single.utf8)).objectValue)
        #expect(object["postback-identifier"]?.stringValue == "a")
    }
}
