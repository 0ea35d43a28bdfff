/// Reads typed members out of a decoded JSON object, recording a finding for each one that is missing,
/// mistyped or out of range, so one pass reports every field problem.
///
/// `typeRule` covers presence and JSON type; `rangeRule` covers values, including a number that is not an
/// integer (`1.0`, `1e0`), which the spec counts as a value error rather than malformed JSON.
struct FieldReader {
    let object: JSONObject
    let typeRule: RuleID
    let rangeRule: RuleID
    /// What the fields belong to, for messages ("payload", "body").
    let owner: String
    private(set) var findings: [Finding] = []

    init(_ object: JSONObject, owner: String, typeRule: RuleID, rangeRule: RuleID) {
        self.object = object
        self.owner = owner
        self.typeRule = typeRule
        self.rangeRule = rangeRule
    }

    /// Records a value error (the range rule) for `name` unless `condition` holds; returns `condition`.
    @discardableResult
    /// The expectation is an autoclosure: its message is built only when the check fails, not on every valid item.
    mutating func require(_ condition: Bool, _ name: String, _ expectation: @autoclosure () -> String) -> Bool {
        if !condition {
            findings.append(Finding(rangeRule, "\(name) \(expectation())"))
        }
        return condition
    }

    /// A string member; nil (and a type finding when required) when absent or not a string.
    mutating func string(_ name: String, required: Bool = true) -> String? {
        guard let value = member(name, required: required, expected: "a string") else { return nil }
        guard case .string(let string) = value else {
            return mistyped(name, value, expected: "a string")
        }
        return string
    }

    /// A Boolean member; nil (and a type finding when required) when absent or not a Boolean.
    mutating func bool(_ name: String, required: Bool = true) -> Bool? {
        guard let value = member(name, required: required, expected: "a boolean") else { return nil }
        guard case .bool(let bool) = value else {
            return mistyped(name, value, expected: "a boolean")
        }
        return bool
    }

    /// An integer member read exactly, within `range`; a fraction, exponent or out-of-range value is a value error.
    mutating func integer(
        _ name: String, required: Bool = true, in range: ClosedRange<UInt64> = 0...UInt64.max
    ) -> UInt64? {
        guard let value = member(name, required: required, expected: "an integer") else { return nil }
        guard case .number(let number) = value else {
            return mistyped(name, value, expected: "an integer")
        }
        guard number.isInteger else {
            require(false, name, "must be an integer, not \(number.literal)")
            return nil
        }
        guard let exact = number.uint64Value, range.contains(exact) else {
            require(false, name, "is \(number.literal), outside \(range.lowerBound)...\(range.upperBound)")
            return nil
        }
        return exact
    }

    private mutating func member(_ name: String, required: Bool, expected: String) -> JSONValue? {
        guard let value = object[name] else {
            if required {
                findings.append(Finding(typeRule, "\(owner) has no \(name) (\(expected) is required)"))
            }
            return nil
        }
        return value
    }

    private mutating func mistyped<T>(_ name: String, _ value: JSONValue, expected: String) -> T? {
        findings.append(Finding(typeRule, "\(name) must be \(expected), not \(value.typeName)"))
        return nil
    }
}
