@_spi(CommandLine) @_spi(Servers) @_spi(Stores) @testable import Attribution

/// A JWK as Wycheproof writes it: string members, and lists of strings (`key_ops`). Every member is kept (a
/// member of another shape fails decoding), so a member the library must look at, such as `key_ops`, cannot be
/// dropped on the way. Shared by the JWK tests and the Wycheproof JWS suite.
struct WycheproofJWK: Decodable {
    enum Member: Decodable, Equatable {
        case string(String)
        case strings([String])

        init(from decoder: Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let string = try? container.decode(String.self) {
                self = .string(string)
            } else {
                self = .strings(try container.decode([String].self))
            }
        }

        var jsonValue: JSONValue {
            switch self {
            case .string(let string): .string(string)
            case .strings(let strings): .array(strings.map { .string($0) })
            }
        }
    }

    let members: [String: Member]

    init(from decoder: Decoder) throws {
        members = try decoder.singleValueContainer().decode([String: Member].self)
    }

    /// The members as the library's JSON object, in name order.
    var jsonObject: JSONObject {
        JSONObject(members: members.sorted { $0.key < $1.key }.map {
            JSONObject.Member(name: $0.key, value: $0.value.jsonValue)
        })
    }
}
