/// A JSON value as read by `StrictJSONParser`: objects keep their members in received order.
@_spi(CommandLine) @_spi(Servers) @_spi(Stores) public enum JSONValue: Sendable, Hashable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number, kept as its literal text.
    case number(JSONNumber)
    /// A string, unescaped.
    case string(String)
    /// An array, in received order.
    case array([JSONValue])
    /// An object, its members in received order.
    case object(JSONObject)
}

extension JSONValue {
    /// The object, when this value is one.
    public var objectValue: JSONObject? {
        if case .object(let object) = self { return object }
        return nil
    }

    /// The string, when this value is one.
    public var stringValue: String? {
        if case .string(let string) = self { return string }
        return nil
    }

    /// The Boolean, when this value is one.
    public var boolValue: Bool? {
        if case .bool(let bool) = self { return bool }
        return nil
    }

    /// The number, when this value is one.
    public var numberValue: JSONNumber? {
        if case .number(let number) = self { return number }
        return nil
    }

    /// The JSON type's name as RFC 8259 uses it, for messages ("expected an integer, found a string").
    public var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .number(let number): number.isInteger ? "an integer" : "a non-integer number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}
