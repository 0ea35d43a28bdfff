/// A JSON object whose member names are unique (the strict parser refuses duplicates), in received order.
@_spi(CommandLine) @_spi(Servers) @_spi(Stores) public struct JSONObject: Sendable, Hashable {
    /// One `"name": value` pair.
    @_spi(CommandLine) @_spi(Servers) @_spi(Stores) public struct Member: Sendable, Hashable {
        /// The member's name, unescaped.
        public let name: String
        /// The member's value.
        public let value: JSONValue
    }

    /// The members in the order they were received.
    public let members: [Member]

    @_spi(CommandLine) public init(members: [Member]) {
        self.members = members
    }

    /// The value of the member with this name, or nil when absent. Linear: our objects have a dozen members.
    ///
    /// Names compare by their exact UTF-8 bytes, as the parser's duplicate check does, not by Swift's canonical
    /// equivalence: `"e\u0301"` must not find a member named `"é"`.
    /// - Parameter name: the member's name.
    /// - Returns: its value, or nil when no member has that name.
    public subscript(name: String) -> JSONValue? {
        // By index, reading only each name: iterating the members would copy (and retain) every value.
        for index in members.indices where members[index].name.isExactlyEqual(to: name) {
            return members[index].value
        }
        return nil
    }

    /// True when a member has this name (exact UTF-8 comparison).
    /// - Parameter name: the member's name.
    /// - Returns: true when a member has that name.
    public func contains(_ name: String) -> Bool {
        members.indices.contains { members[$0].name.isExactlyEqual(to: name) }
    }

    /// A copy without the named members (e.g. an SKAdNetwork body without its signed members), compared by exact
    /// UTF-8 bytes; a list, searched linearly: the names are a dozen, and hashing them cost more than the search.
    func removing(_ names: [String]) -> JSONObject {
        JSONObject(members: members.filter { member in !names.contains { $0.isExactlyEqual(to: member.name) } })
    }

    /// A copy without the member of this name (no `Set` built: this runs once per postback body).
    func removing(_ name: String) -> JSONObject {
        JSONObject(members: members.filter { !$0.name.isExactlyEqual(to: name) })
    }
}
