/// A message's table: every member it defines, one ``MessageMember`` each (name, JSON type, signed, required,
/// values), in the order the decoders read and report them. The tables are ``postbackPayload``, ``postbackBody``
/// and ``impressionPayload`` (built from ``PostbackPayloadMember``, ``PostbackBodyMember`` and
/// ``ImpressionMember``, whose cases are the slots the code reads) and, for SKAdNetwork, ``SKAdNetworkField`` by
/// version (``SKAdNetworkVersion/signedFields``, each field's ``SKAdNetworkField/member``) and
/// ``SKAdNetworkVersion/unsignedLayout``.
///
/// Everything reads the table rather than restating it: the general decoders (``FieldReader/read(_:skipping:)``),
/// the fast path's scanner (which knows exactly ``names``) and its checks (each present member against ``checks``,
/// compiled here from the same domains), the facts the rules read and the messages. A layout is immutable; a test
/// can add a member (``adding(_:)``) and hand the result to both paths (``MessageLayouts``).
final class MessageLayout: Sendable {
    /// What the members belong to, for messages ("payload", "body", "the 4.0 postback").
    let owner: String
    /// The members, by slot.
    let members: [MessageMember]
    /// Each member's name as UTF-8, by slot: what the fast path's scanner matches.
    let names: [[UInt8]]
    /// Each member's type and values as plain data, by slot: what the fast path checks scanned values against
    /// (``ValueDomain/range``, ``ValueDomain/TextShape``), read without retaining anything.
    let checks: [Check]
    /// The spellings of each slot's ``ValueDomain/oneOf(_:wording:hint:)`` values (empty for other domains).
    let choices: [[[UInt8]]]
    /// A bit per slot, set for the members a message must carry.
    let requiredSlots: UInt32

    /// At most 16 members: the fast path's scanner keeps a slot in 4 bits.
    static let capacity = 16

    /// A member's type and values, compiled from its ``MessageMember`` once, when the table is made.
    struct Check: Sendable {
        let type: MessageMember.ValueType
        /// The integers the member admits (an integer member; see ``ValueDomain/range``).
        let integers: ClosedRange<UInt64>
        /// The strings the member admits (a string member).
        let text: ValueDomain.TextShape
    }

    init(owner: String, members: [MessageMember]) {
        precondition(members.count <= Self.capacity, "a layout has at most \(Self.capacity) members")
        self.owner = owner
        self.members = members
        names = members.map { Array($0.name.utf8) }
        checks = members.map { Check(type: $0.type, integers: $0.domain.range, text: $0.domain.textShape) }
        choices = members.map { member in
            guard case .oneOf(let values, _, _) = member.domain else { return [] }
            return values.map { Array($0.utf8) }
        }
        requiredSlots = members.indices.reduce(0) { $0 | (members[$1].isRequired ? 1 << UInt32($1) : 0) }
    }

    /// The layout with `member` added after the others (its slot is the old member count): a new member Apple
    /// defines, or a test's.
    func adding(_ member: MessageMember) -> MessageLayout {
        MessageLayout(owner: owner, members: members + [member])
    }

    subscript(slot: Int) -> MessageMember { members[slot] }

    /// The slot of the member with these name bytes.
    func slot(named name: some Collection<UInt8>) -> Int? {
        names.firstIndex { $0.elementsEqual(name) }
    }
}

/// The layouts a verifier reads the AdAttributionKit messages with: Apple's (``apple``), or in tests one with an
/// added member.
struct MessageLayouts: Sendable {
    var postbackPayload: MessageLayout
    var postbackBody: MessageLayout
    var impressionPayload: MessageLayout

    init(postbackPayload: MessageLayout = .postbackPayload, postbackBody: MessageLayout = .postbackBody,
                 impressionPayload: MessageLayout = .impressionPayload) {
        self.postbackPayload = postbackPayload
        self.postbackBody = postbackBody
        self.impressionPayload = impressionPayload
    }

    /// The members Apple defines.
    static let apple = MessageLayouts()
}

/// A message's slot names: an enumeration whose cases are its members, in table order, each defining its member.
protocol MessageSlot: CaseIterable, RawRepresentable, Sendable where RawValue == Int {
    /// The case's member, as the table defines it (read ``table`` rather than this, which builds it anew).
    var member: MessageMember { get }
    /// The table: every case's member, made once.
    static var table: MessageLayout { get }
}

extension MessageSlot {
    /// The member's name.
    var name: String { Self.table[rawValue].name }
    /// The member's slot in its table.
    var slot: Int { rawValue }

    /// The table of every case's member, in order.
    static func layout(owner: String) -> MessageLayout {
        MessageLayout(owner: owner, members: allCases.map(\.member))
    }
}
