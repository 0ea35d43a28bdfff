@_spi(CommandLine) @_spi(Servers) @_spi(Stores) @testable import Attribution

// libFuzzer target `fuzz-json`: StrictJSONParser on arbitrary bytes.
//
// Whatever the bytes, parsing must return or throw J1 `malformed-input`, never trap, overread or hang. For every
// accepted text it checks that the compact serialisation is a fixed point (parsing it gives an equal value that
// re-serialises byte for byte), that the grammar options (duplicates allowed) accept it too and read the same
// value, and that the depth limit is exact: the value's own depth is accepted and one less is refused.

/// Called by libFuzzer once per input; the bytes are read in place, so AddressSanitizer sees any overread.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJSON(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    let value: JSONValue
    do {
        value = try StrictJSONParser.parse(bytes)
    } catch {
        precondition(error.code == .malformedInput && error.rule == .j1, "unexpected error \(error)")
        return 0
    }
    let text = value.jsonText
    // Without the value budget: it allows values per byte of text, and the serialisation drops the whitespace.
    guard let reparsed = try? StrictJSONParser.parse(Array(text.utf8), options: .init(valueBudget: nil)) else {
        fatalError("the serialisation of an accepted value is refused: \(text)")
    }
    precondition(reparsed == value, "the serialisation reads back to a different value: \(text)")
    precondition(reparsed.jsonText == text, "the serialisation is not a fixed point: \(text)")

    let grammar = StrictJSONParser.Options(rejectsDuplicateMembers: false)
    guard let lenient = try? StrictJSONParser.parse(bytes, options: grammar) else {
        fatalError("the grammar options refuse a text the verifier options accept")
    }
    precondition(lenient.jsonText == text, "the grammar options read a different value")

    let depth = nestingDepth(of: value)
    precondition(depth <= StrictJSONParser.Options().maximumDepth, "accepted a value nested \(depth) deep")
    precondition((try? StrictJSONParser.parse(bytes, options: .init(maximumDepth: depth))) != nil,
                 "refused at its own depth \(depth)")
    if depth > 0 {
        precondition((try? StrictJSONParser.parse(bytes, options: .init(maximumDepth: depth - 1))) == nil,
                     "accepted at depth limit \(depth - 1) a value nested \(depth) deep")
    }
    return 0
}

/// The nesting depth as the parser counts it: a scalar is 0, `[]` and `{}` are 1.
private func nestingDepth(of value: JSONValue) -> Int {
    switch value {
    case .array(let elements):
        1 + (elements.map(nestingDepth(of:)).max() ?? 0)
    case .object(let object):
        1 + (object.members.map { nestingDepth(of: $0.value) }.max() ?? 0)
    default:
        0
    }
}
