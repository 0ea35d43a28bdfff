/// A JSON object whose member names are unique (the strict parser refuses duplicates), in received order.
public struct JSONObject: Sendable, Hashable {
    /// One `"name": value` pair.
    public struct Member: Sendable, Hashable {
        public let name: String
        public let value: JSONValue

        public init(name: String, value: JSONValue) {
            self.name = name
            self.value = value
        }
    }

    /// The members in the order they were received.
    public let members: [Member]

    public init(members: [Member]) {
        self.members = members
    }

    /// The value of the member with this name, or nil when absent. Linear: our objects have a dozen members.
    public subscript(name: String) -> JSONValue? {
        members.first { $0.name == name }?.value
    }

    /// True when a member has this name.
    public func contains(_ name: String) -> Bool {
        members.contains { $0.name == name }
    }

    /// A copy without the named members (e.g. a postback body without `jws-string`).
    public func removing(_ names: Set<String>) -> JSONObject {
        JSONObject(members: members.filter { !names.contains($0.name) })
    }
}
