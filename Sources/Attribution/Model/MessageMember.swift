/// One member of a message's layout (``MessageLayout``): its name, JSON type, whether the signature covers it,
/// whether a message must carry it, and the values it may take. Written once per member, in the message's table;
/// the decoders, the fast path's scanner and checks, the rules' facts and the messages all read it from there.
struct MessageMember: Sendable {
    /// The member's name, as the JSON spells it.
    let name: String
    let type: ValueType
    /// True when a signature covers the member (a JWS payload, an SKAdNetwork signed string); false for a body's
    /// members beside it, which anyone on the path could change.
    let isSigned: Bool
    /// True when a message without the member is refused (under the decoder's type rule).
    let isRequired: Bool
    let domain: ValueDomain

    init(_ name: String, _ type: ValueType, signed isSigned: Bool, required isRequired: Bool,
                 domain: ValueDomain = .any) {
        self.name = name
        self.type = type
        self.isSigned = isSigned
        self.isRequired = isRequired
        self.domain = domain
    }

    /// The JSON type of a member (for SKAdNetwork's signed members, also how it is written in the signed string).
    enum ValueType: String, Sendable, Hashable {
        /// A JSON string (written as received, after JSON unescaping).
        case string
        /// A plain non-negative JSON integer up to 2^64-1 (written in decimal).
        case integer
        /// `true` or `false`.
        case boolean

        /// The phrase for messages: "a string", "an integer", "a boolean".
        var phrase: String {
            switch self {
            case .string: "a string"
            case .integer: "an integer"
            case .boolean: "a boolean"
            }
        }
    }
}
