internal import CAttributionOpenSSL
import Foundation

/// ECDSA verification under one P-192 key (Apple's SKAdNetwork 1.0 and 2.0 key) from fixed tables of multiples of
/// both points, G and the key's Q, so that no doubling is left: u·P is the sum of one precomputed point per byte
/// of u.
///
/// libcrypto has no fast code for P-192 (a generic curve to it): `EVP_PKEY_verify` doubles 192 times and adds
/// about 80 times per signature, and precomputation through `EC_GROUP_precompute_mult` does not help here (a
/// multiple of a group's generator alone goes through the constant-time ladder, which ignores it). Anyone can
/// send a postback that claims version 1.0 or 2.0, so before this table each such forgery cost three times a
/// P-256 verification. Here a table per point holds j·256^i·P for every byte value j (1 ... 255) and position i
/// (0 ... 23), affine; u1·G + u2·Q is then at most 48 mixed additions (``P192JacobianPoint``, on fixed-size
/// limbs, handling equal and opposite points and the point at infinity), then R is checked on the curve and
/// x(R) ≡ r on R's Jacobian coordinates, as ``P256BatchVerifier`` does (``accepts(r:_:)``).
///
/// Every step is SEC 1 §4.1.4's: r and s in [1, n − 1], e = the leftmost 192 bits of the SHA-256 digest (its first
/// 24 bytes), u1 = e·s⁻¹ and u2 = r·s⁻¹ mod n, R = u1·G + u2·Q not at infinity, x(R) ≡ r (mod n). The tests hold it
/// to `EVP_PKEY_verify` on random, edge-case and bit-flipped signatures (`P192KeyTableTests`).
///
/// Two tables of 6,120 affine points each (576 KiB in all), computed with libcrypto's point arithmetic once per
/// key when it has verified enough signatures (``P192KeyTables``), then shared read-only by every thread.
package final class P192KeyTable: @unchecked Sendable {
    // Safe to share across threads: written only in `init`, before the table is published under a lock.
    /// j·256^i·G, affine, as six limbs (x then y, ``P192Field/Element``s) from index 6·(255·i + j − 1).
    private let generatorMultiples: [UInt64]
    /// j·256^i·Q, the same way.
    private let keyMultiples: [UInt64]

    /// Bytes in r, s, a scalar and the digest prefix that is e.
    static let scalarBytes = 24

    /// Builds the tables for `point`, an uncompressed SEC 1 point `04 || x || y` on P-192 (49 bytes).
    init?(uncompressedPoint point: [UInt8]) {
        guard point.count == 1 + 2 * Self.scalarBytes, let group = EC_GROUP_new_by_curve_name(NID_X9_62_prime192v1)
        else { return nil }
        let context = BN_CTX_new()
        let key = EC_POINT_new(group)
        defer {
            EC_POINT_free(key)
            BN_CTX_free(context)
            EC_GROUP_free(group)
            OpenSSLErrorQueue.clear()
        }
        guard let context, let key,
              point.withUnsafeBufferPointer({
                  EC_POINT_oct2point(group, key, $0.baseAddress, $0.count, context)
              }) == 1,
              EC_POINT_is_at_infinity(group, key) == 0,
              let generator = EC_GROUP_get0_generator(group),
              let generatorMultiples = Self.multiples(of: generator, group: group, context: context),
              let keyMultiples = Self.multiples(of: key, group: group, context: context) else {
            return nil
        }
        (self.generatorMultiples, self.keyMultiples) = (generatorMultiples, keyMultiples)
    }

    /// j·256^i·P for i in 0 ..< 24 and j in 1 ... 255, affine, as limbs; nil if libcrypto fails. Computed with
    /// libcrypto's point arithmetic (once per key), so the table does not rest on ``P192JacobianPoint``.
    private static func multiples(of point: OpaquePointer, group: OpaquePointer, context: OpaquePointer)
        -> [UInt64]? {
        var table: [OpaquePointer] = []
        table.reserveCapacity(255 * scalarBytes)
        func release() { table.forEach { EC_POINT_free($0) } }
        defer { release() }
        guard let base = EC_POINT_dup(point, group) else { return nil }
        defer { EC_POINT_free(base) }
        for _ in 0..<scalarBytes {
            guard let first = EC_POINT_dup(base, group) else { return nil }
            table.append(first)
            for _ in 2...255 {
                guard let next = EC_POINT_new(group) else { return nil }
                table.append(next)
                guard EC_POINT_add(group, next, table[table.count - 2], base, context) == 1 else { return nil }
            }
            // The next position's base: 256·base = 255·base + base.
            guard EC_POINT_add(group, base, table[table.count - 1], base, context) == 1 else { return nil }
        }
        let affine = table.withUnsafeMutableBufferPointer { buffer in
            buffer.withMemoryRebound(to: Optional<OpaquePointer>.self) {
                attribution_points_make_affine(group, $0.count, $0.baseAddress, context)
            }
        }
        guard affine == 1, let x = BN_new(), let y = BN_new() else { return nil }
        defer {
            BN_free(x)
            BN_free(y)
        }
        var limbs: [UInt64] = []
        limbs.reserveCapacity(6 * table.count)
        var bytes = [UInt8](repeating: 0, count: 2 * scalarBytes)
        for point in table {
            guard EC_POINT_get_affine_coordinates(group, point, x, y, context) == 1,
                  bytes.withUnsafeMutableBufferPointer({
                      BN_bn2binpad(x, $0.baseAddress, 24) == 24 && BN_bn2binpad(y, $0.baseAddress! + 24, 24) == 24
                  }) else { return nil }
            bytes.withUnsafeBufferPointer { buffer in
                let x = P192Field.element(bigEndian: UnsafeBufferPointer(rebasing: buffer[..<24]))
                let y = P192Field.element(bigEndian: UnsafeBufferPointer(rebasing: buffer[24...]))
                limbs += [x.0, x.1, x.2, y.0, y.1, y.2]
            }
        }
        return limbs
    }

    /// Whether (r, s), 24 bytes each, is a valid ECDSA signature under the key of the SHA-256 `digest`. The scalar
    /// steps run on fixed limbs (``P192Scalar``), without a libcrypto call.
    func isValidSignature(r rBytes: ArraySlice<UInt8>, s sBytes: ArraySlice<UInt8>, digest: SHA256Digest) -> Bool {
        guard rBytes.count == Self.scalarBytes, sBytes.count == Self.scalarBytes else { return false }
        let r = rBytes.withUnsafeBufferPointer { P192Scalar.number(bigEndian: $0, at: 0) }
        let s = sBytes.withUnsafeBufferPointer { P192Scalar.number(bigEndian: $0, at: 0) }
        guard P192Scalar.isInRange(r), P192Scalar.isInRange(s) else { return false }
        // e: the leftmost 192 bits of the digest (n has 192 bits), reduced mod n.
        let e = P192Scalar.reduced(digest.withUnsafeBytes { raw in
            P192Scalar.number(bigEndian: raw.assumingMemoryBound(to: UInt8.self), at: 0)
        })
        // s⁻¹ in Montgomery form; a plain number times it is the plain product: u1 = e·s⁻¹, u2 = r·s⁻¹ mod n.
        let sInverse = P192Scalar.inverse(P192Scalar.montgomery(s))
        var point = P192JacobianPoint.infinity
        add(P192Scalar.multiply(e, sInverse), multiplesIn: generatorMultiples, to: &point)
        add(P192Scalar.multiply(r, sInverse), multiplesIn: keyMultiples, to: &point)
        return Self.accepts(r: r, point)
    }

    /// point += scalar·P, one table point per non-zero byte of the scalar (a number below n), by the table sum both
    /// curves share (``MultiplesLayout/add(digits:from:to:)``).
    private func add(_ scalar: P192Scalar.Element, multiplesIn table: [UInt64], to point: inout P192JacobianPoint) {
        let layout = MultiplesLayout<P192Field>(positions: Self.scalarBytes, perPosition: 255)
        precondition(table.count == layout.limbCount, "P192KeyTable: a table of another size")
        table.withUnsafeBufferPointer { multiples in
            layout.add(digits: { position in
                let limb = position < 8 ? scalar.0 : position < 16 ? scalar.1 : scalar.2
                return Int(truncatingIfNeeded: limb >> UInt64(8 * (position % 8))) & 0xFF
            }, from: multiples.baseAddress!, to: &point)
        }
    }

    /// Whether R = `point` (from the tables) accepts r: R is not the point at infinity, is on the curve, and
    /// x(R) ≡ r (mod n), checked on R's Jacobian X and Z (affine x = X / Z²): X ≡ r·Z² (mod p), or, when r + n < p,
    /// the one other x with x mod n = r, X ≡ (r + n)·Z². r is below n, so below p: a field element as it is.
    ///
    /// R must be on the curve before it can accept (as ``P256BatchVerifier`` asks of its R): a fault of the table
    /// arithmetic is a rejection, never an acceptance. 5M + 4S, against the 48 additions that made R.
    static func accepts(r: P192Scalar.Element, _ point: P192JacobianPoint) -> Bool {
        guard point.isOnCurve else { return false }
        let zz = P192Field.square(point.z)
        if P192Field.equal(P192Field.multiply(r, zz), point.x) { return true }
        let (other, carry) = P192Scalar.addingOrder(r)
        guard carry == 0, P192Field.isLessThanP(other) else { return false }
        return P192Field.equal(P192Field.multiply(other, zz), point.x)
    }
}

/// The process's P-192 tables (``P192KeyTable``), one per key, built once a key has verified
/// ``defaultThreshold`` signatures (building one costs about as much as that many verifications without it, so
/// a run with a few SKAdNetwork 1.0 or 2.0 postbacks never pays for it), then shared by every thread.
package final class P192KeyTables: @unchecked Sendable {
    // Safe to share across threads: every stored property but the constants is read and written under `lock`.
    /// The process's registry, which verification uses.
    package static let shared = P192KeyTables(threshold: defaultThreshold)
    static let defaultThreshold = 64
    let threshold: Int
    /// Keys that get a table, at most (Apple has one P-192 key; a custom one may replace it).
    static let maximumTables = 4
    private let lock = NSLock()
    private var keys: [[UInt8]: (verified: Int, table: P192KeyTable?, started: Bool)] = [:]
    private var builtTables = 0

    /// A registry that builds a key's table once it has verified `threshold` signatures.
    package init(threshold: Int) {
        self.threshold = threshold
    }

    /// Counts one more signature under the key whose uncompressed point is `point`, and returns its table: built
    /// already, or built now by this call as the count reaches the threshold; nil otherwise.
    package func table(forPoint point: [UInt8]) -> P192KeyTable? {
        let build: Bool = lock.withLock {
            if keys[point] == nil {
                guard keys.count < 4 * Self.maximumTables else { return false }
                keys[point] = (0, nil, false)
            }
            keys[point]!.verified += 1
            guard keys[point]!.table == nil, !keys[point]!.started, keys[point]!.verified > threshold,
                  builtTables < Self.maximumTables else { return false }
            keys[point]!.started = true
            builtTables += 1
            return true
        }
        guard build else { return lock.withLock { keys[point]?.table } }
        let built = P192KeyTable(uncompressedPoint: point)
        lock.withLock { keys[point]!.table = built }
        return built
    }
}
