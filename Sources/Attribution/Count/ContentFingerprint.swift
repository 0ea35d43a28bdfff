/// What a valid postback held, in about a hundred bytes: the digest of its signed content and each unsigned member,
/// so that a later sighting with the same key can say which members differ (rule D2).
///
/// A store keeps the first sighting's fingerprint as an opaque blob (``bytes``) and hands it back with a
/// duplicate (``DuplicateReference/firstContent``); `differences(from:)` compares. Anyone on the path can
/// change the unsigned members (`conversion-value`, `country-code`, ...) of a genuine postback, and a replay may
/// carry another signed payload under the same identifier: the duplicate is still a duplicate, and its record
/// names what differs.
///
/// Format 1 (`bytes`): the byte `1`; the first 16 bytes of the SHA-256 of the signed content (a JWS's signing input,
/// which the signature check hashes anyway; SKAdNetwork: the signed string); one byte, the count of entries; then one
/// entry per unsigned member, in received order: its name, as one byte `0xC0 + n` for the n-th of
/// `knownNames` (Apple's members) or one byte for its length and its UTF-8 bytes; then its value as compact JSON
/// (as the record's `unsigned` writes it): one byte for its length and the bytes when at most 16 (Apple's values all
/// are), else the byte `0xFF` and the first 16 bytes of the value's SHA-256. At most 32 members with names of at most
/// 64 bytes are named; the others share one last entry whose name is the single byte `0xFF` (never UTF-8), hashed.
/// So a fingerprint costs no hashing beyond the signature check's for Apple's postbacks and takes about 40 bytes for
/// their bodies, and it stays under 3 KiB whatever a body holds.
public struct ContentFingerprint: Sendable, Hashable {
    /// The encoded fingerprint: what a store keeps, opaque to it.
    public let bytes: [UInt8]

    static let format: UInt8 = 1
    static let signedDigestSize = 16
    /// Member names written as one byte (`0xC0` + their index): part of the format, never reordered.
    static let knownNames: [[UInt8]] = [
        PostbackBodyMember.adInteractionType.name, PostbackBodyMember.conversionValue.name,
        PostbackBodyMember.coarseConversionValue.name, PostbackBodyMember.countryCode.name,
        SKAdNetworkField.postbackSequenceIndex.rawValue, SKAdNetworkField.didWin.rawValue,
        SKAdNetworkField.sourceIdentifier.rawValue, SKAdNetworkField.fidelityType.rawValue,
    ].map { Array($0.utf8) }
    static let knownNameCode: UInt8 = 0xC0
    static let inlineValueBytes = 16
    static let hashedValue: UInt8 = 0xFF
    static let maximumNamedMembers = 32
    static let maximumNameBytes = 64
    /// The name of the entry that stands for every member beyond the limits.
    static let otherMembers: [UInt8] = [0xFF]

    /// The fingerprint a store kept; nil unless `bytes` is a well-formed fingerprint of a known format.
    /// - Parameter bytes: the fingerprint's ``bytes``, as a store kept them.
    public init?(bytes: [UInt8]) {
        guard Self.entries(of: bytes) != nil else { return nil }
        self.bytes = bytes
    }

    private init(encoded: [UInt8]) {
        bytes = encoded
    }

    /// Builds a fingerprint member by member, writing straight into its bytes.
    struct Builder {
        private var out: [UInt8]
        private var count = 0
        /// The members beyond the limits, each as (name length, name, value length, value), hashed at the end.
        private var others: [UInt8] = []

        init(signedDigest: SHA256Digest) {
            out = [ContentFingerprint.format]
            out.reserveCapacity(48)  // an Apple body's fingerprint, about 32 bytes, without growing: kept per key
            signedDigest.append(prefix: ContentFingerprint.signedDigestSize, to: &out)
            out.append(0)
        }

        /// Adds an unsigned member: its name's bytes, and its value's compact JSON, `value` between quotes when
        /// `quoted` (a string whose escapes need none).
        @_spi(CommandLine) @_spi(Stores) public mutating func add<Name: Collection<UInt8>, Value: Collection<UInt8>>(
            name: Name, value: Value, quoted: Bool = false
        ) {
            let length = value.count + (quoted ? 2 : 0)
            guard count < ContentFingerprint.maximumNamedMembers, name.count <= ContentFingerprint.maximumNameBytes
            else {
                others.append(contentsOf: ContentFingerprint.lengthPrefix(name.count))
                others.append(contentsOf: name)
                others.append(contentsOf: ContentFingerprint.lengthPrefix(length))
                if quoted { others.append(UInt8(ascii: "\"")) }
                others.append(contentsOf: value)
                if quoted { others.append(UInt8(ascii: "\"")) }
                return
            }
            count += 1
            if let known = ContentFingerprint.knownNames.firstIndex(where: {
                $0.count == name.count && $0.elementsEqual(name)
            }) {
                out.append(ContentFingerprint.knownNameCode + UInt8(known))
            } else {
                out.append(UInt8(name.count))
                out.append(contentsOf: name)
            }
            if length <= ContentFingerprint.inlineValueBytes {
                out.append(UInt8(length))
                if quoted { out.append(UInt8(ascii: "\"")) }
                out.append(contentsOf: value)
                if quoted { out.append(UInt8(ascii: "\"")) }
            } else {
                out.append(ContentFingerprint.hashedValue)
                let digest = quoted ? SHA256Digest(of: [UInt8(ascii: "\"")] + Array(value) + [UInt8(ascii: "\"")])
                    : SHA256Digest(of: value)
                digest.append(prefix: ContentFingerprint.inlineValueBytes, to: &out)
            }
        }

        @_spi(CommandLine) @_spi(Stores) public consuming func finish() -> ContentFingerprint {
            if !others.isEmpty {
                count += 1
                out.append(UInt8(ContentFingerprint.otherMembers.count))
                out.append(contentsOf: ContentFingerprint.otherMembers)
                out.append(ContentFingerprint.hashedValue)
                SHA256Digest(of: others).append(prefix: ContentFingerprint.inlineValueBytes, to: &out)
            }
            out[1 + ContentFingerprint.signedDigestSize] = UInt8(count)
            return ContentFingerprint(encoded: out)
        }
    }

    /// The fingerprint of a verified result: its signed content's digest (the signing input's, or the SKAdNetwork
    /// signed string's) and its unsigned members; nil when nothing signed was verified.
    @_spi(Stores) public init?(_ result: VerificationResult) {
        let digest: SHA256Digest
        if let signed = result.signedDigest {
            digest = signed
        } else if result.signature == .verified, let signedString = result.signedString {
            digest = SHA256Digest(of: Array(signedString.utf8))
        } else {
            return nil
        }
        var builder = Builder(signedDigest: digest)
        for member in result.unsigned?.members ?? [] {
            var value: [UInt8] = []
            member.value.appendJSON(to: &value)
            builder.add(name: member.name.utf8, value: value)
        }
        self = builder.finish()
    }

    /// What differs between two sightings of one postback.
    @_spi(Servers) public struct Differences: Sendable, Hashable {
        /// The signed content differs (another `jws-string`, or other SKAdNetwork signed members).
        public let signedPayload: Bool
        /// The unsigned members whose values differ, or that only one of the two has, by name in byte order;
        /// members beyond the fingerprint's limits are named ``beyondLimits``.
        public let unsignedMembers: [String]

        /// The name `unsignedMembers` gives the members beyond the fingerprint's limits, together (no member's
        /// name: those are real): `(other unsigned members)`.
        public static let beyondLimits = "(other unsigned members)"

        /// The differences given.
        /// - Parameters:
        ///   - signedPayload: true when the signed content differs.
        ///   - unsignedMembers: the names of the unsigned members that differ, in byte order.
        public init(signedPayload: Bool, unsignedMembers: [String]) {
            self.signedPayload = signedPayload
            self.unsignedMembers = unsignedMembers
        }

        /// True when the two sightings held the same content.
        public var isEmpty: Bool { !signedPayload && unsignedMembers.isEmpty }
    }

    /// What this sighting's content changed against `first`'s.
    /// - Parameter first: the first sighting's fingerprint.
    /// - Returns: what differs; the signed content alone when either fingerprint cannot be read.
    @_spi(Servers) public func differences(from first: ContentFingerprint) -> Differences {
        guard bytes != first.bytes else { return Differences(signedPayload: false, unsignedMembers: []) }
        guard let mine = Self.entries(of: bytes), let theirs = Self.entries(of: first.bytes) else {
            return Differences(signedPayload: true, unsignedMembers: [])
        }
        let signedRange = 1...Self.signedDigestSize
        let signed = !bytes[signedRange].elementsEqual(first.bytes[signedRange])
        let byName = { (entries: [Entry]) in entries.sorted { $0.name.lexicographicallyPrecedes($1.name) } }
        var names: [ArraySlice<UInt8>] = []
        var left = byName(mine)[...], right = byName(theirs)[...]
        while let a = left.first, let b = right.first {
            if a.name.elementsEqual(b.name) {
                if !a.value.elementsEqual(b.value) { names.append(a.name) }
                left = left.dropFirst()
                right = right.dropFirst()
            } else if a.name.lexicographicallyPrecedes(b.name) {
                names.append(a.name)
                left = left.dropFirst()
            } else {
                names.append(b.name)
                right = right.dropFirst()
            }
        }
        names += left.map(\.name) + right.map(\.name)
        return Differences(signedPayload: signed, unsignedMembers: names.map {
            $0.elementsEqual(Self.otherMembers) ? Differences.beyondLimits : String(decoding: $0, as: UTF8.self)
        })
    }

    // MARK: - Encoding

    /// One member's entry: its name and its value (tag included, so an inline value never equals a hashed one).
    private struct Entry {
        let name: ArraySlice<UInt8>
        let value: ArraySlice<UInt8>
    }

    /// The entries of an encoded fingerprint, or nil when it is not one.
    private static func entries(of bytes: [UInt8]) -> [Entry]? {
        guard bytes.count >= 2 + signedDigestSize, bytes[0] == format else { return nil }
        var position = 1 + signedDigestSize
        let count = Int(bytes[position])
        position += 1
        var entries: [Entry] = []
        entries.reserveCapacity(count)
        for _ in 0..<count {
            guard position < bytes.count else { return nil }
            let name: ArraySlice<UInt8>
            let nameEnd: Int
            if bytes[position] >= knownNameCode {
                let known = Int(bytes[position] - knownNameCode)
                guard known < knownNames.count else { return nil }
                name = knownNames[known][...]
                nameEnd = position + 1
            } else {
                guard bytes[position] <= maximumNameBytes else { return nil }
                nameEnd = position + 1 + Int(bytes[position])
                guard nameEnd <= bytes.count else { return nil }
                name = bytes[(position + 1)..<nameEnd]
            }
            guard nameEnd < bytes.count else { return nil }
            let tag = bytes[nameEnd]
            let valueLength = tag == hashedValue ? inlineValueBytes : Int(tag)
            guard tag == hashedValue || valueLength <= inlineValueBytes else { return nil }
            let end = nameEnd + 1 + valueLength
            guard end <= bytes.count else { return nil }
            entries.append(Entry(name: name, value: bytes[nameEnd..<end]))
            position = end
        }
        return position == bytes.count ? entries : nil
    }

    static func lengthPrefix(_ count: Int) -> [UInt8] {
        let value = UInt32(truncatingIfNeeded: count)
        return [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }
}
