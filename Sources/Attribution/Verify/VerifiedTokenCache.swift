import Synchronization

/// Remembers tokens whose signature already verified, so an exact repeat skips the ECDSA.
///
/// Apple retries a postback delivery up to nine times with the same bytes. A repeat's record must be exactly the
/// first one's (duplicate marking aside, which the ``Deduplicator`` adds in order), so only the signature check is
/// skipped; everything else is recomputed from the bytes. The key is the SHA-256 of the whole token as received:
/// canonical base64url makes that unique per header, payload and signature. Each entry also holds the key that
/// verified it, so one cache shared by verifiers with different key rings can never vouch for a token under a
/// key that did not verify it. Only successes are remembered (a failure costs nothing to store but could be
/// used to fill the cache). When full, the cache starts over: memory stays bounded by `capacity` × 32 bytes.
public final class VerifiedTokenCache: Sendable {
    private struct Entry: Hashable {
        let token: SHA256Digest
        let key: ECPublicKey
    }

    private let entries: Mutex<Set<Entry>>
    /// The most tokens remembered at once.
    public let capacity: Int

    public init(capacity: Int = 1 << 18) {
        self.capacity = max(1, capacity)
        self.entries = Mutex([])
    }

    /// How many tokens are remembered now.
    public var count: Int { entries.withLock { $0.count } }

    /// True when the token with this digest verified before with `key`.
    func contains(_ token: SHA256Digest, verifiedBy key: ECPublicKey) -> Bool {
        entries.withLock { $0.contains(Entry(token: token, key: key)) }
    }

    /// Records that the token with this digest verified with `key`.
    func insert(_ token: SHA256Digest, verifiedBy key: ECPublicKey) {
        entries.withLock {
            if $0.count >= capacity { $0.removeAll(keepingCapacity: true) }
            $0.insert(Entry(token: token, key: key))
        }
    }
}
