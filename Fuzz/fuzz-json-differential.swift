@_spi(CommandLine) @_spi(Servers) @_spi(Stores) @testable import Attribution
import Foundation

// libFuzzer target `fuzz-json-differential`: StrictJSONParser against Foundation's JSONSerialization.
//
// On every text both accept (Foundation with `.fragmentsAllowed`), the two must read the same structure: the same
// types, strings equal scalar for scalar, the same member names, and numbers equal (integers exactly, others as
// `Double`). Texts only Foundation accepts are not compared: it is deliberately more lenient (duplicate names,
// lone surrogate escapes, nesting deeper than 16).
//
// Divergences that are intended, and skipped:
// - a number beyond `Double`'s range (`1e400`): we keep its literal; Foundation refuses the text;
// - member names that differ only by Unicode canonical equivalence (`"\u00e9"` and `"e\u0301"`): two members to
//   us, as to most parsers; one key to Foundation's `[String: Any]`, which compares keys by canonical equivalence;
// - a string or member name holding U+FEFF: Foundation drops the character where a string starts, or right after an
//   escape, taking it for a byte order mark (swiftlang/swift-foundation#300); we keep every character;
// - Foundation reads integers beyond 64 bits and non-integers it cannot hold in a `Double` exactly as
//   `NSDecimalNumber` (38 significant digits), so those are compared with a relative tolerance.

/// Called by libFuzzer once per input; the bytes are read in place, so AddressSanitizer sees any overread.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJSONDifferential(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    guard let ours = try? StrictJSONParser.parse(bytes) else { return 0 }
    let theirs: Any
    do {
        theirs = try JSONSerialization.jsonObject(with: Data(bytes), options: .fragmentsAllowed)
    } catch {
        precondition(hasNumberBeyondDouble(ours), "Foundation refuses a text we accept: \(error)")
        return 0
    }
    guard !hasCanonicallyEquivalentNames(ours), !containsByteOrderMarkCharacter(ours) else { return 0 }
    if let difference = JSONComparison.difference(ours, theirs, at: "$") {
        fatalError("parsers disagree at \(difference)")
    }
    return 0
}

/// True when some number in the value is too large for a `Double` (Foundation refuses those texts).
private func hasNumberBeyondDouble(_ value: JSONValue) -> Bool {
    switch value {
    case .number(let number): Double(number.literal).map { !$0.isFinite } ?? true
    case .array(let elements): elements.contains(where: hasNumberBeyondDouble)
    case .object(let object): object.members.contains { hasNumberBeyondDouble($0.value) }
    default: false
    }
}

/// True when some object has two names that Swift's `String` equality (canonical equivalence) takes as one.
private func hasCanonicallyEquivalentNames(_ value: JSONValue) -> Bool {
    switch value {
    case .array(let elements):
        return elements.contains(where: hasCanonicallyEquivalentNames)
    case .object(let object):
        return Set(object.members.map(\.name)).count != object.members.count
            || object.members.contains { hasCanonicallyEquivalentNames($0.value) }
    default:
        return false
    }
}

/// True when some string or member name holds U+FEFF, which Foundation may drop.
private func containsByteOrderMarkCharacter(_ value: JSONValue) -> Bool {
    switch value {
    case .string(let string):
        string.unicodeScalars.contains("\u{FEFF}")
    case .array(let elements):
        elements.contains(where: containsByteOrderMarkCharacter)
    case .object(let object):
        object.members.contains {
            $0.name.unicodeScalars.contains("\u{FEFF}") || containsByteOrderMarkCharacter($0.value)
        }
    default:
        false
    }
}

/// Structural comparison of our value with what JSONSerialization returned.
private enum JSONComparison {
    /// Where the two differ (a path such as `$.a[2]` and why), or nil when they agree.
    static func difference(_ ours: JSONValue, _ theirs: Any, at path: String) -> String? {
        switch ours {
        case .null:
            return theirs is NSNull ? nil : "\(path): null versus \(theirs)"
        case .bool(let bool):
            guard let number = theirs as? NSNumber, isBoolean(number) else { return "\(path): bool versus \(theirs)" }
            return number.boolValue == bool ? nil : "\(path): \(bool) versus \(number)"
        case .number(let number):
            guard let theirNumber = theirs as? NSNumber, !isBoolean(theirNumber) else {
                return "\(path): number versus \(theirs)"
            }
            return numbersAgree(number, theirNumber) ? nil : "\(path): \(number) versus \(theirNumber)"
        case .string(let string):
            guard let theirString = theirs as? String else { return "\(path): string versus \(theirs)" }
            return string.unicodeScalars.elementsEqual(theirString.unicodeScalars)
                ? nil : "\(path): \(JSONValue.quoted(string)) versus \(JSONValue.quoted(theirString))"
        case .array(let elements):
            guard let theirElements = theirs as? [Any], theirElements.count == elements.count else {
                return "\(path): array of \(elements.count) versus \(theirs)"
            }
            for (index, element) in elements.enumerated() {
                if let found = difference(element, theirElements[index], at: "\(path)[\(index)]") { return found }
            }
            return nil
        case .object(let object):
            guard let dictionary = theirs as? [String: Any] else { return "\(path): object versus \(theirs)" }
            let ourNames = object.members.map { Array($0.name.unicodeScalars) }.sorted(by: lexicographicallyPrecedes)
            let theirNames = dictionary.keys.map { Array($0.unicodeScalars) }.sorted(by: lexicographicallyPrecedes)
            guard ourNames == theirNames else { return "\(path): member names differ" }
            for member in object.members {
                let child = "\(path).\(JSONValue.quoted(member.name))"
                if let found = difference(member.value, dictionary[member.name] as Any, at: child) { return found }
            }
            return nil
        }
    }

    /// Foundation returns its shared boolean objects (`objCType` "c") for `true` and `false`.
    private static func isBoolean(_ number: NSNumber) -> Bool {
        String(cString: number.objCType) == "c" && !(number is NSDecimalNumber)
    }

    private static func numbersAgree(_ ours: JSONNumber, _ theirs: NSNumber) -> Bool {
        if ours.isInteger, !(theirs is NSDecimalNumber) {
            switch String(cString: theirs.objCType) {
            case "Q":
                return ours.uint64Value == theirs.uint64Value
            case "q", "l", "i", "s", "c":
                return ours.int64Value == theirs.int64Value
            default:
                break
            }
        }
        guard let ourDouble = Double(ours.literal) else { return false }
        let theirDouble = theirs.doubleValue
        if ourDouble == theirDouble { return true }
        // NSDecimalNumber keeps 38 significant digits and rounds its own way into a Double.
        let tolerance = theirs is NSDecimalNumber ? 1e-12 : 0
        return abs(ourDouble - theirDouble) <= tolerance * max(abs(ourDouble), abs(theirDouble))
    }

    private static func lexicographicallyPrecedes(_ left: [Unicode.Scalar], _ right: [Unicode.Scalar]) -> Bool {
        left.lexicographicallyPrecedes(right) { $0.value < $1.value }
    }
}
