import Synchronization

/// Remembers tokens whose signature already verified, so an exact repeat skips the ECDSA.
///
/// Apple retries a postback delivery up to nine times with the same bytes. A repeat's record must be exactly the
/// first one's (duplicate marking aside, which the ``Deduplicator`` adds in order), so only the signature check is
/// skipped; everything else is recomputed from the bytes. An entry is the SHA-256 of the signing input (computed
/// anyway for the ECDSA) with the 64 signature bytes: canonical base64url makes that pair identify the token as
/// received. Each entry also holds the key that
/// verified it, so one cache shared by verifiers with different key rings can never vouch for a token under a
/// key that did not verify it. Only successes are remembered (a failure costs nothing to store but could be
/// used to fill the cache). When full, the cache starts over: memory stays bounded by `capacity` entries of about 150 bytes.
public final class VerifiedTokenCache: Sendable {
    private struct Entry: Hashable {
        let signingInput: SHA256Digest
        let signature: [UInt8]
        let key: ECPublicKey

        /// The signature's bytes in one block (an array's own hash feeds them one by one).
        func hash(into hasher: inout Hasher) {
            hasher.combine(signingInput)
            signature.withUnsafeBytes { hasher.combine(bytes: $0) }
            hasher.combine(key)
        }
    }

    private let entries: Mutex<Set<Entry>>
    /// The most tokens remembered at once.
    public let capacity: Int

    public init(capacity: Int = 1 << 16) {
        self.capacity = max(1, capacity)
        self.entries = Mutex([])
    }

    /// How many tokens are remembered now.
    public var count: Int { entries.withLock { $0.count } }

    /// True when the signature over the signing input with this digest verified before with `key`.
    func contains(signingInput: SHA256Digest, signature: [UInt8], verifiedBy key: ECPublicKey) -> Bool {
        let entry = Entry(signingInput: signingInput, signature: signature, key: key)
        return entries.withLock { $0.contains(entry) }
    }

    /// Records that the signature over the signing input with this digest verified with `key`.
    func insert(signingInput: SHA256Digest, signature: [UInt8], verifiedBy key: ECPublicKey) {
        let entry = Entry(signingInput: signingInput, signature: signature, key: key)
        entries.withLock {
            if $0.count >= capacity { $0.removeAll(keepingCapacity: true) }
            $0.insert(entry)
        }
    }
}
