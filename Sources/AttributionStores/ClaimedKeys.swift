@_spi(Stores) import Attribution
/// One SQLite owner's unconfirmed claims: the row of each key it claimed, found again when the key is confirmed or
/// released. Filed by the key's ``StateKeyHash`` (which a claim computes anyway), an integer: a lookup hashes 36
/// bytes once with a few multiplications and compares them once, where a dictionary keyed by the key itself hashed
/// them with SipHash at every insert, lookup and removal. Two keys of one hash (about one chance in 2^64) are told
/// apart by their bytes: the second one is filed by key.
struct ClaimedKeys {
    private var byHash: [Int64: (key: ExactString, row: Int64)] = [:]
    private var colliding: [ExactString: Int64] = [:]

    var isEmpty: Bool { byHash.isEmpty && colliding.isEmpty }

    /// Every claimed row.
    var rows: [Int64] { byHash.values.map(\.row) + colliding.values }

    /// Every claim: its key, the key's hash and its row.
    var entries: [(key: ExactString, hash: Int64, row: Int64)] {
        byHash.map { ($1.key, $0, $1.row) } + colliding.map { ($0, StateKeyHash.of($0.utf8), $1) }
    }

    /// The row claimed for `key`, whose hash is `hash`.
    func row(_ key: ExactString, hash: Int64) -> Int64? {
        if let entry = byHash[hash], entry.key == key { return entry.row }
        return colliding.isEmpty ? nil : colliding[key]
    }

    mutating func insert(_ key: ExactString, hash: Int64, row: Int64) {
        if let entry = byHash[hash], entry.key != key {
            colliding[key] = row
        } else {
            byHash[hash] = (key, row)
        }
    }

    mutating func remove(_ key: ExactString, hash: Int64) {
        if let entry = byHash[hash], entry.key == key {
            byHash[hash] = nil
        } else if !colliding.isEmpty {
            colliding[key] = nil
        }
    }

    mutating func removeAll() {
        byHash = [:]
        colliding = [:]
    }
}
