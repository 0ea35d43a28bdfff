@_spi(Stores) import Attribution
/// The 64-bit hash a SQLite state (schema version 3) files a deduplication key under, in `postbacks.hash`: FNV-1a
/// (64-bit) over the key's UTF-8 bytes, then MurmurHash3's 64-bit finaliser to spread the bits, as a signed
/// integer (SQLite's INTEGER). Part of the file format: every release computes it the same way on every machine, so
/// it never changes for schema version 3.
///
/// Not a security boundary: only valid (signed) postbacks are remembered, and two keys with one hash are both kept
/// (the second with a NULL `hash`, found by its bytes), so a collision costs a lookup, never a wrong answer.
enum StateKeyHash {
    static func of(_ bytes: [UInt8]) -> Int64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
        }
        hash ^= hash >> 33
        hash &*= 0xff51_afd7_ed55_8ccd
        hash ^= hash >> 33
        hash &*= 0xc4ce_b9fe_1a85_ec53
        hash ^= hash >> 33
        return Int64(bitPattern: hash)
    }
}
