/// What a valid postback held, in a few hundred bytes: a digest of its signed payload and one of each unsigned
/// member, so that a later sighting with the same key can say which members differ (rule D2).
///
/// A store keeps the first sighting's fingerprint as an opaque blob (``bytes``) and hands it back with a
/// duplicate (``DuplicateReference/firstContent``); ``differences(from:)`` compares. Anyone on the path can
/// change the unsigned members (`conversion-value`, `country-code`, ...) of a genuine postback, and a replay may
/// carry another signed payload under the same identifier: the duplicate is still a duplicate, and its record
/// names what differs.
///
/// Format 1 (`bytes`): the byte `1`; the SHA-256 of the signed payload as compact JSON (the record's `fields`;
/// SKAdNetwork: its signed members); one byte, the count of entries; then per unsigned member, sorted by name
/// bytes, one byte (the name's length), the name's UTF-8 bytes and the first 16 bytes of the SHA-256 of its
/// value as compact JSON (as the record's `unsigned` writes it). At most 32 members are named, each of at most
/// 64 bytes: the others share one last entry whose name is the single byte `0xFF` (never UTF-8), so a
/// fingerprint stays under 2.7 KiB whatever the body holds.
public struct ContentFingerprint: Sendable, Hashable {
    /// The encoded fingerprint: what a store keeps, opaque to it.
    public let bytes: [UInt8]

    static let format: UInt8 = 1
    static let signedDigestSize = 32
    static let valueDigestSize = 16
    static let maximumNamedMembers = 32
    static let maximumNameBytes = 64
    /// The name of the entry that stands for every member beyond the limits.
    static let otherMembers: [UInt8] = [0xFF]

    /// The fingerprint a store kept; nil unless `bytes` is a well-formed fingerprint of a known format.
    public init?(bytes: [UInt8]) {
        guard Self.entries(of: bytes) != nil else { return nil }
        self.bytes = bytes
    }

    /// The fingerprint of a signed payload (its compact JSON) and unsigned members (each name's UTF-8 bytes and
    /// its value's compact JSON).
    package init<Signed: Collection<UInt8>>(signedJSON: Signed, unsigned members: [(name: [UInt8], value: [UInt8])]) {
        var out: [UInt8] = [Self.format]
        out.reserveCapacity(1 + Self.signedDigestSize + 1 + members.count * (1 + 24 + Self.valueDigestSize))
        SHA256Digest(of: signedJSON).withUnsafeBytes { out.append(contentsOf: $0) }
        let sorted = members.sorted { $0.name.lexicographicallyPrecedes($1.name) }
        var named: [(name: [UInt8], value: [UInt8])] = []
        var others: [UInt8] = []
        for member in sorted {
            if named.count < Self.maximumNamedMembers, member.name.count <= Self.maximumNameBytes {
                named.append(member)
            } else {
                others.append(contentsOf: Self.lengthPrefix(member.name.count))
                others.append(contentsOf: member.name)
                others.append(contentsOf: Self.lengthPrefix(member.value.count))
                others.append(contentsOf: member.value)
            }
        }
        out.append(UInt8(named.count + (others.isEmpty ? 0 : 1)))
        for member in named {
            out.append(UInt8(member.name.count))
            out.append(contentsOf: member.name)
            Self.appendValueDigest(of: member.value, to: &out)
        }
        if !others.isEmpty {
            out.append(UInt8(Self.otherMembers.count))
            out.append(contentsOf: Self.otherMembers)
            Self.appendValueDigest(of: others, to: &out)
        }
        bytes = out
    }

    /// The fingerprint of a verified result's signed payload (``VerificationResult/fields``) and unsigned
    /// members; nil when it has no signed payload.
    package init?(_ result: VerificationResult) {
        guard let fields = result.fields else { return nil }
        var signed: [UInt8] = []
        JSONValue.object(fields).appendJSON(to: &signed)
        let unsigned = (result.unsigned?.members ?? []).map { member -> (name: [UInt8], value: [UInt8]) in
            var value: [UInt8] = []
            member.value.appendJSON(to: &value)
            return (Array(member.name.utf8), value)
        }
        self.init(signedJSON: signed, unsigned: unsigned)
    }

    /// What differs between two sightings of one postback.
    public struct Differences: Sendable, Hashable {
        /// The signed payload differs (another `jws-string`, or SKAdNetwork signed members).
        public let signedPayload: Bool
        /// The unsigned members whose values differ, or that only one of the two has, by name in byte order;
        /// members beyond the fingerprint's limits are named `(other unsigned members)`.
        public let unsignedMembers: [String]

        public init(signedPayload: Bool, unsignedMembers: [String]) {
            self.signedPayload = signedPayload
            self.unsignedMembers = unsignedMembers
        }

        /// True when the two sightings held the same content.
        public var isEmpty: Bool { !signedPayload && unsignedMembers.isEmpty }
    }

    /// What this sighting's content changed against `first`'s.
    public func differences(from first: ContentFingerprint) -> Differences {
        guard let mine = Self.entries(of: bytes), let theirs = Self.entries(of: first.bytes) else {
            return Differences(signedPayload: bytes != first.bytes, unsignedMembers: [])
        }
        let signed = !bytes[1...Self.signedDigestSize].elementsEqual(first.bytes[1...Self.signedDigestSize])
        var names: [[UInt8]] = []
        var left = mine[...], right = theirs[...]
        while let a = left.first, let b = right.first {
            if a.name.elementsEqual(b.name) {
                if !a.digest.elementsEqual(b.digest) { names.append(Array(a.name)) }
                left = left.dropFirst()
                right = right.dropFirst()
            } else if a.name.lexicographicallyPrecedes(b.name) {
                names.append(Array(a.name))
                left = left.dropFirst()
            } else {
                names.append(Array(b.name))
                right = right.dropFirst()
            }
        }
        names += left.map { Array($0.name) } + right.map { Array($0.name) }
        return Differences(signedPayload: signed, unsignedMembers: names.map {
            $0 == Self.otherMembers ? "(other unsigned members)" : String(decoding: $0, as: UTF8.self)
        })
    }

    // MARK: - Encoding

    /// The entries of an encoded fingerprint, or nil when it is not one.
    private static func entries(of bytes: [UInt8]) -> [(name: ArraySlice<UInt8>, digest: ArraySlice<UInt8>)]? {
        guard bytes.count >= 2 + signedDigestSize, bytes[0] == format else { return nil }
        var position = 1 + signedDigestSize
        let count = Int(bytes[position])
        position += 1
        var entries: [(name: ArraySlice<UInt8>, digest: ArraySlice<UInt8>)] = []
        entries.reserveCapacity(count)
        for _ in 0..<count {
            guard position < bytes.count else { return nil }
            let length = Int(bytes[position])
            let end = position + 1 + length + valueDigestSize
            guard end <= bytes.count else { return nil }
            entries.append((bytes[(position + 1)..<(position + 1 + length)],
                            bytes[(position + 1 + length)..<end]))
            position = end
        }
        return position == bytes.count ? entries : nil
    }

    private static func appendValueDigest(of value: [UInt8], to out: inout [UInt8]) {
        SHA256Digest(of: value).withUnsafeBytes { out.append(contentsOf: $0.prefix(valueDigestSize)) }
    }

    private static func lengthPrefix(_ count: Int) -> [UInt8] {
        withUnsafeBytes(of: UInt32(truncatingIfNeeded: count).bigEndian) { Array($0) }
    }
}
