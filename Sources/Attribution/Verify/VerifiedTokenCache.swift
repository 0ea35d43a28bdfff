import Foundation

/// Remembers tokens whose signature already verified, so an exact repeat skips the ECDSA.
///
/// Apple retries a postback delivery up to nine times with the same bytes. A repeat's record must be exactly the
/// first one's (duplicate marking aside, which D1 adds in order: ``BatchVerifier/markDuplicate(_:_:source:line:of:content:)``),
/// so only the signature check is skipped; everything else is recomputed from the bytes. An entry is the SHA-256
/// of the signing input (computed anyway for the ECDSA) with the 64 signature bytes: canonical base64url makes that
/// pair identify the token as received. Each entry also names the key that verified it (by identity; the entry's
/// shard keeps that key alive), so one cache shared by verifiers with different key rings can never vouch for a
/// token under a key that did not verify it. Only successes are remembered (a failure costs nothing to store but
/// could be used to fill the cache). When full, the cache starts over (shard by shard): memory stays bounded by
/// `capacity` entries of about 150 bytes.
final class VerifiedTokenCache: Sendable {
    private struct Entry: Hashable {
        let signingInput: SHA256Digest
        let signature: SignatureBytes
        /// The verifying key's identity (its libcrypto key object), which its shard keeps alive (``Shard/keys``) as
        /// long as the entry exists, so no other key can take that identity meanwhile. Plain values only: an entry
        /// costs no reference counting, where holding the key itself had every lookup and insertion of every worker
        /// retain and release the same shared key objects (two threads then fight over their cache lines).
        let key: ObjectIdentifier

        /// Hashes the digest's first word only: a SHA-256 output is already uniformly spread, and nobody can aim
        /// inputs at a bucket without breaking SHA-256. Equality (`==`, synthesised) still compares the whole
        /// digest, every signature byte and the key; the hash only picks the bucket.
        func hash(into hasher: inout Hasher) {
            hasher.combine(signingInput.leadingWord)
        }
    }

    /// One lock and one set per shard, chosen by the digest, so workers verifying different tokens rarely wait
    /// for each other (one lock over one set made every item of every worker queue on it).
    private final class Shard: @unchecked Sendable {
        // @unchecked: `entries` is read and written only while `lock` is held.
        let lock = NSLock()
        var entries: Set<Entry> = []
        /// Every key an entry names, held so that its identity stays its own (emptied with `entries`).
        var keys: [ObjectIdentifier: EVPPublicKey] = [:]
    }

    private let shards: [Shard]
    private let shardCapacity: Int
    /// 16 shards, or fewer for a tiny cache, so the shards' capacities add up to at most `capacity`.
    private static let maximumShardCount = 16
    /// The most tokens remembered at once.
    let capacity: Int

    init(capacity: Int = 1 << 16) {
        self.capacity = max(1, capacity)
        let shardCount = min(Self.maximumShardCount, self.capacity)
        self.shardCapacity = self.capacity / shardCount
        self.shards = (0..<shardCount).map { _ in Shard() }
    }

    /// How many tokens are remembered now.
    var count: Int {
        shards.reduce(0) { total, shard in
            shard.lock.lock()
            defer { shard.lock.unlock() }
            return total + shard.entries.count
        }
    }

    /// True when the signature over the signing input with this digest verified before with `key`.
    func contains(signingInput: SHA256Digest, signature: some Collection<UInt8>, verifiedBy key: ECPublicKey) -> Bool {
        guard let signature = SignatureBytes(signature) else { return false }
        let entry = Entry(signingInput: signingInput, signature: signature, key: ObjectIdentifier(key.evpKey))
        let shard = shard(for: signingInput)
        shard.lock.lock()
        defer { shard.lock.unlock() }
        // An entry naming this identity means its shard holds the key that has it: this key.
        return shard.entries.contains(entry)
    }

    /// Records that the signature over the signing input with this digest verified with `key`.
    func insert(signingInput: SHA256Digest, signature: some Collection<UInt8>, verifiedBy key: ECPublicKey) {
        guard let signature = SignatureBytes(signature) else { return }
        let identity = ObjectIdentifier(key.evpKey)
        let entry = Entry(signingInput: signingInput, signature: signature, key: identity)
        let shard = shard(for: signingInput)
        shard.lock.lock()
        defer { shard.lock.unlock() }
        // A full shard starts over: at most `capacity` entries in all (each shard holds capacity / shards).
        if shard.entries.count >= shardCapacity {
            shard.entries.removeAll(keepingCapacity: true)
            shard.keys.removeAll()
        }
        if shard.keys[identity] == nil { shard.keys[identity] = key.evpKey }
        shard.entries.insert(entry)
    }

    private func shard(for digest: SHA256Digest) -> Shard {
        shards[Int(digest.leadingWord % UInt64(shards.count))]
    }

    /// An ES256 signature's 64 bytes held inline (no array to allocate for each lookup): r then s, 4 words each.
    private struct SignatureBytes: Equatable {
        private var r = (UInt64(0), UInt64(0), UInt64(0), UInt64(0))
        private var s = (UInt64(0), UInt64(0), UInt64(0), UInt64(0))

        /// Nil unless exactly 64 bytes: only ES256 signatures are remembered.
        init?(_ bytes: some Collection<UInt8>) {
            guard bytes.count == 64 else { return nil }
            // Eight word loads (arrays, slices and cursors are read in place; anything else is copied once first).
            (r, s) = ByteCursor.over(bytes) { raw in
                ((raw.word(at: 0), raw.word(at: 8), raw.word(at: 16), raw.word(at: 24)),
                 (raw.word(at: 32), raw.word(at: 40), raw.word(at: 48), raw.word(at: 56)))
            }
        }

        static func == (lhs: SignatureBytes, rhs: SignatureBytes) -> Bool {
            lhs.r == rhs.r && lhs.s == rhs.s
        }
    }
}
