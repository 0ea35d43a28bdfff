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
/// limbs, handling equal and opposite points and the point at infinity), and x(R) ≡ r is checked on R's Jacobian
/// coordinates, as ``P256BatchVerifier`` does.
///
/// Every step is SEC 1 §4.1.4's: r and s in [1, n − 1], e = the leftmost 192 bits of the SHA-256 digest (its first
/// 24 bytes), u1 = e·s⁻¹ and u2 = r·s⁻¹ mod n, R = u1·G + u2·Q not at infinity, x(R) ≡ r (mod n). The tests hold it
/// to `EVP_PKEY_verify` on random, edge-case and bit-flipped signatures (`P192KeyTableTests`).
///
/// Two tables of 6,120 affine points each (576 KiB in all), computed with libcrypto's point arithmetic once per
/// key when it has verified enough signatures (``P192KeyTables``), then shared read-only by every thread.
final class P192KeyTable: @unchecked Sendable {
    // Safe to share across threads: written only in `init`, before the table is published under a lock; libcrypto
    // then only reads `order` and `prime` (openssl-threads(7)).
    private let order: OpaquePointer
    private let prime: OpaquePointer
    /// n − 2, and n's Montgomery context: s⁻¹ = s^(n−2) mod n (n is prime), a third of `BN_mod_inverse`'s cost
    /// here (~40k against ~110k instructions, measured with callgrind on a flood of forged SKAdNetwork 1.0 postbacks).
    private let orderMinusTwo: OpaquePointer
    private let orderMontgomery: OpaquePointer
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
        let order = BN_new(), prime = BN_new(), orderMinusTwo = BN_new(), orderMontgomery = BN_MONT_CTX_new()
        defer {
            EC_POINT_free(key)
            BN_CTX_free(context)
            EC_GROUP_free(group)
            OpenSSLErrorQueue.clear()
        }
        guard let context, let key, let order, let prime, let orderMinusTwo, let orderMontgomery,
              point.withUnsafeBufferPointer({
                  EC_POINT_oct2point(group, key, $0.baseAddress, $0.count, context)
              }) == 1,
              EC_POINT_is_at_infinity(group, key) == 0,
              BN_copy(order, EC_GROUP_get0_order(group)) != nil,
              BN_copy(orderMinusTwo, order) != nil, BN_sub_word(orderMinusTwo, 2) == 1,
              BN_MONT_CTX_set(orderMontgomery, order, context) == 1,
              EC_GROUP_get_curve(group, prime, nil, nil, context) == 1,
              let generator = EC_GROUP_get0_generator(group),
              let generatorMultiples = Self.multiples(of: generator, group: group, context: context),
              let keyMultiples = Self.multiples(of: key, group: group, context: context) else {
            BN_free(order)
            BN_free(prime)
            BN_free(orderMinusTwo)
            BN_MONT_CTX_free(orderMontgomery)
            return nil
        }
        (self.order, self.prime) = (order, prime)
        (self.orderMinusTwo, self.orderMontgomery) = (orderMinusTwo, orderMontgomery)
        (self.generatorMultiples, self.keyMultiples) = (generatorMultiples, keyMultiples)
    }

    deinit {
        BN_free(order)
        BN_free(prime)
        BN_free(orderMinusTwo)
        BN_MONT_CTX_free(orderMontgomery)
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

    /// Whether (r, s), 24 bytes each, is a valid ECDSA signature under the key of the SHA-256 `digest`.
    func isValidSignature(r rBytes: ArraySlice<UInt8>, s sBytes: ArraySlice<UInt8>, digest: SHA256Digest) -> Bool {
        guard rBytes.count == Self.scalarBytes, sBytes.count == Self.scalarBytes,
              let context = BN_CTX_new() else { return false }
        BN_CTX_start(context)
        defer {
            BN_CTX_end(context)
            BN_CTX_free(context)
        }
        let numbers = (0..<6).map { _ in BN_CTX_get(context) }
        guard let r = numbers[0], let s = numbers[1], let e = numbers[2], let inverse = numbers[3],
              let u1 = numbers[4], let u2 = numbers[5] else {
            OpenSSLErrorQueue.clear()
            return false
        }
        var point = P192JacobianPoint.infinity
        let valid = rBytes.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress, 24, r) } != nil
            && sBytes.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress, 24, s) } != nil
            && isInOrderRange(r) && isInOrderRange(s)
            // e: the leftmost 192 bits of the digest (n has 192 bits), not reduced: BN_mod_mul reduces.
            && digest.withUnsafeBytes { BN_bin2bn($0.baseAddress, 24, e) } != nil
            // s⁻¹ = s^(n−2): 1 ≤ s < n and n prime.
            && BN_mod_exp_mont(inverse, s, orderMinusTwo, order, context, orderMontgomery) == 1
            && BN_mod_mul(u1, e, inverse, order, context) == 1
            && BN_mod_mul(u2, r, inverse, order, context) == 1
            && add(u1, multiplesIn: generatorMultiples, to: &point)
            && add(u2, multiplesIn: keyMultiples, to: &point)
            && !point.isInfinity
            && xMatches(r, point, scratch: e, context: context)
        if !valid { OpenSSLErrorQueue.clear() }
        return valid
    }

    /// point += scalar·P, one table point per non-zero byte of the scalar.
    private func add(_ scalar: OpaquePointer, multiplesIn table: [UInt64], to point: inout P192JacobianPoint)
        -> Bool {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: Self.scalarBytes) { bytes in
            guard BN_bn2binpad(scalar, bytes.baseAddress, Int32(Self.scalarBytes)) == Int32(Self.scalarBytes)
            else { return false }
            table.withUnsafeBufferPointer { limbs in
                for position in 0..<Self.scalarBytes {
                    let digit = Int(bytes[Self.scalarBytes - 1 - position])
                    guard digit != 0 else { continue }
                    let at = 6 * (255 * position + digit - 1)
                    point.add(affineX: (limbs[at], limbs[at + 1], limbs[at + 2]),
                              y: (limbs[at + 3], limbs[at + 4], limbs[at + 5]))
                }
            }
            return true
        }
    }

    /// x(R) ≡ r (mod n) from R's Jacobian X and Z (affine x = X / Z²): X ≡ r·Z² (mod p), or, when r + n < p, the
    /// one other x with x mod n = r, X ≡ (r + n)·Z².
    private func xMatches(_ r: OpaquePointer, _ point: P192JacobianPoint, scratch: OpaquePointer,
                          context: OpaquePointer) -> Bool {
        let zz = P192Field.square(point.z)
        guard let candidate = element(r) else { return false }
        if P192Field.equal(P192Field.multiply(candidate, zz), point.x) { return true }
        guard BN_add(scratch, r, order) == 1, BN_ucmp(scratch, prime) < 0, let other = element(scratch) else {
            return false
        }
        return P192Field.equal(P192Field.multiply(other, zz), point.x)
    }

    /// A number below p as a field element.
    private func element(_ value: OpaquePointer) -> P192Field.Element? {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: Self.scalarBytes) { bytes in
            guard BN_bn2binpad(value, bytes.baseAddress, 24) == 24 else { return nil }
            return P192Field.element(bigEndian: UnsafeBufferPointer(bytes))
        }
    }

    /// 1 ≤ value ≤ n − 1.
    private func isInOrderRange(_ value: OpaquePointer) -> Bool {
        BN_is_zero(value) == 0 && BN_ucmp(value, order) < 0
    }
}

/// The process's P-192 tables (``P192KeyTable``), one per key, built once a key has verified
/// ``defaultThreshold`` signatures (building one costs about as much as that many verifications without it, so
/// a run with a few SKAdNetwork 1.0 or 2.0 postbacks never pays for it), then shared by every thread.
final class P192KeyTables: @unchecked Sendable {
    // Safe to share across threads: every stored property but the constants is read and written under `lock`.
    static let shared = P192KeyTables(threshold: defaultThreshold)
    static let defaultThreshold = 64
    let threshold: Int
    /// Keys that get a table, at most (Apple has one P-192 key; a custom one may replace it).
    static let maximumTables = 4
    private let lock = NSLock()
    private var keys: [[UInt8]: (verified: Int, table: P192KeyTable?, started: Bool)] = [:]
    private var builtTables = 0

    init(threshold: Int) {
        self.threshold = threshold
    }

    /// Counts one more signature under the key whose uncompressed point is `point`, and returns its table: built
    /// already, or built now by this call as the count reaches the threshold; nil otherwise.
    func table(forPoint point: [UInt8]) -> P192KeyTable? {
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
