/// Reads the members of a decoded JSON object as its table (``MessageLayout``) defines them, recording a finding
/// for each one that is missing, mistyped or outside its values, so one pass reports every field problem.
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
    /// The expectation is an autoclosure: its message is built only when the check fails, not on every valid item.
    @discardableResult
    mutating func require(_ condition: Bool, _ name: String, _ expectation: @autoclosure () -> String) -> Bool {
        if !condition {
            findings.append(Finding(rangeRule, "\(name) \(expectation())"))
        }
        return condition
    }

    /// Every member of `layout` but the slot `skipped`, by slot: nil where absent, mistyped or outside its values.
    ///
    /// Presence and types are read first, member by member, with integers' values (which are checked as they are
    /// read, from their literal); then the strings' values, in table order.
    mutating func read(_ layout: MessageLayout, skipping skipped: Int? = nil) -> [JSONValue?] {
        var values = layout.members.indices.map { slot in
            slot == skipped ? nil : read(layout[slot])
        }
        for slot in values.indices {
            guard case .string(let string)? = values[slot] else { continue }
            if !checkValue(layout[slot], string) { values[slot] = nil }
        }
        return values
    }

    /// One member's presence and type, and an integer's value; nil (with a finding when it must be there) when
    /// absent, mistyped or outside its values.
    mutating func read(_ member: MessageMember) -> JSONValue? {
        read(member.name, member.type, required: member.isRequired, domain: member.domain)
    }

    /// The member `name` of JSON type `type`: nil (with a finding when `required`) when absent or mistyped, or an
    /// integer outside `domain` (with ``ValueDomain/any``, 0 ... 2^64-1).
    mutating func read(_ name: String, _ type: MessageMember.ValueType, required: Bool, domain: ValueDomain = .any)
        -> JSONValue? {
        guard let value = typed(name, type, required: required) else { return nil }
        if case .number(let number) = value, integer(name, number, domain: domain) == nil { return nil }
        return value
    }

    /// A string member; nil (and a type finding when required) when absent or not a string.
    mutating func string(_ name: String, required: Bool) -> String? {
        guard case .string(let string)? = typed(name, .string, required: required) else { return nil }
        return string
    }

    /// A Boolean member; nil (and a type finding when required) when absent or not a Boolean.
    mutating func bool(_ name: String, required: Bool) -> Bool? {
        guard case .bool(let bool)? = typed(name, .boolean, required: required) else { return nil }
        return bool
    }

    /// An integer member read exactly, within 0 ... 2^64-1; nil (and a finding) when absent and required,
    /// mistyped, or not such an integer.
    mutating func integer(_ name: String, required: Bool) -> UInt64? {
        guard case .number(let number)? = typed(name, .integer, required: required) else { return nil }
        return integer(name, number, domain: .any)
    }

    /// The member `name` when present and of JSON type `type`; nil (with a finding when `required`) when absent or
    /// mistyped.
    private mutating func typed(_ name: String, _ type: MessageMember.ValueType, required: Bool) -> JSONValue? {
        guard let value = object[name] else {
            if required {
                findings.append(Finding(typeRule, "\(owner) has no \(name) (\(type.phrase) is required)"))
            }
            return nil
        }
        switch (type, value) {
        case (.string, .string), (.boolean, .bool), (.integer, .number):
            return value
        default:
            findings.append(Finding(typeRule, "\(name) must be \(type.phrase), not \(value.typeName)"))
            return nil
        }
    }

    /// The integer member `name` (which is present, of type integer) read exactly, within `domain`; a fraction,
    /// exponent or out-of-range value is a value error.
    mutating func integer(_ name: String, _ number: JSONNumber, domain: ValueDomain) -> UInt64? {
        guard number.isInteger else {
            require(false, name, "must be an integer, not \(number.literal)")
            return nil
        }
        let exact = number.uint64Value
        if let complaint = domain.complaint(aboutInteger: exact, literal: number.literal) {
            require(false, name, complaint)
            return nil
        }
        return exact
    }

    /// Records a value error when the string `value` is outside `member`'s values; returns whether it is inside.
    @discardableResult
    mutating func checkValue(_ member: MessageMember, _ value: String) -> Bool {
        guard let complaint = member.domain.complaint(about: value) else { return true }
        return require(false, member.name, complaint)
    }

    /// Records a value error when the already-typed `value` (a string or an integer) is outside `member`'s values.
    mutating func checkValue(_ member: MessageMember, _ value: JSONValue) {
        switch value {
        case .string(let string):
            checkValue(member, string)
        case .number(let number):
            if let complaint = member.domain.complaint(aboutInteger: number.uint64Value, literal: number.literal) {
                require(false, member.name, complaint)
            }
        default:
            break
        }
    }
}
