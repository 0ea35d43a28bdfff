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

    /// One member's presence and type (and an integer's value, unless `checkingDomain` is false: then only
    /// 0 ... 2^64-1); nil (with a finding when it must be there) when absent, mistyped or outside its values.
    mutating func read(_ member: MessageMember, checkingDomain: Bool = true) -> JSONValue? {
        guard let value = object[member.name] else {
            if member.isRequired {
                findings.append(Finding(typeRule,
                                        "\(owner) has no \(member.name) (\(member.type.phrase) is required)"))
            }
            return nil
        }
        switch (member.type, value) {
        case (.string, .string), (.boolean, .bool):
            return value
        case (.integer, .number(let number)):
            guard number.isInteger else {
                require(false, member.name, "must be an integer, not \(number.literal)")
                return nil
            }
            let domain = checkingDomain ? member.domain : .any
            if let complaint = domain.complaint(aboutInteger: number.uint64Value, literal: number.literal) {
                require(false, member.name, complaint)
                return nil
            }
            return value
        default:
            findings.append(Finding(typeRule, "\(member.name) must be \(member.type.phrase), not \(value.typeName)"))
            return nil
        }
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
