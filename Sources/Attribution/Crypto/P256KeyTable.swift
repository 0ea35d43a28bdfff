internal import CAttributionOpenSSL

/// Fixed tables of multiples of one P-256 point, so that u·P is a sum of precomputed points with no doubling left:
/// one table for the generator G (shared by every key, ``generator``) and one per trusted key Q.
///
/// `EVP_PKEY_verify` computes the multiples of Q afresh for every signature, and libcrypto's P-256 code, even from
/// a table, is constant-time: it reads a whole window of the table per 7 bits of the scalar and adds for every
/// window. Verification handles public values only, so here the scalar is recoded into 33 signed base-256 digits
/// d (−127 … 128) and each non-zero digit adds one point, |d|·256^i·P or its negative, read directly: u1·G + u2·Q
/// is at most 66 mixed additions (``P256JacobianPoint``, on fixed-size limbs, handling equal and opposite points
/// and the point at infinity). Postbacks come signed by one key or a handful, so a table per trusted key is built
/// once and serves every later signature; ``P256KeyTables`` builds it only once a key has verified enough
/// signatures to repay the building.
///
/// Each table holds j·256^i·P for j in 1 … 128 and i in 0 … 32, affine, in Montgomery form (33 × 128 points of
/// 64 bytes: 264 KiB), computed with ``P256JacobianPoint``'s additions and one field inversion per position.
/// `P256KeyTableTests` holds the tables to libcrypto's own multiples and the verifications to `EVP_PKEY_verify`.
/// Shared read-only by all threads once built.
final class P256KeyTable: Sendable {
    /// j·256^i·P, affine, as eight limbs (x then y, ``P256Field/Element``s) from index 8·(128·i + j − 1).
    private let multiples: [UInt64]

    /// Digit positions of a scalar below 2²⁵⁶ in signed base 256 (the last carries at most 1).
    static let positions = 33
    /// The largest digit magnitude, and the points per position.
    static let digits = 128

    /// The table of P-256's generator, built on first use (by the first key's table); nil if libcrypto cannot
    /// give the generator.
    static let generator: P256KeyTable? = {
        OpenSSLLibrary.setUp()
        guard let group = EC_GROUP_new_by_curve_name(NID_X9_62_prime256v1) else { return nil }
        defer {
            EC_GROUP_free(group)
            OpenSSLErrorQueue.clear()
        }
        var bytes = [UInt8](repeating: 0, count: 65)
        guard let generator = EC_GROUP_get0_generator(group),
              bytes.withUnsafeMutableBufferPointer({
                  EC_POINT_point2oct(group, generator, POINT_CONVERSION_UNCOMPRESSED, $0.baseAddress, 65, nil)
              }) == 65 else { return nil }
        return P256KeyTable(uncompressedPoint: bytes)
    }()

    /// Builds the table for `point`, an uncompressed SEC 1 point `04 || x || y` on P-256 (65 bytes); nil when it
    /// is not one.
    init?(uncompressedPoint point: [UInt8]) {
        guard point.count == 65, point[0] == 4 else { return nil }
        let coordinates = point.withUnsafeBufferPointer { bytes in
            (P256Field.element(bigEndian: UnsafeBufferPointer(rebasing: bytes[1..<33])),
             P256Field.element(bigEndian: UnsafeBufferPointer(rebasing: bytes[33..<65])))
        }
        guard let x = coordinates.0, let y = coordinates.1, P256Field.isOnCurve(x: x, y: y),
              let multiples = Self.multiples(x: x, y: y) else { return nil }
        self.multiples = multiples
    }

    /// The limbs of the table of (x, y) (see ``multiples``); nil if a point at infinity turns up (it cannot for a
    /// point of the curve: its order is the prime n, which divides no j·256^i).
    private static func multiples(x: P256Field.Element, y: P256Field.Element) -> [UInt64]? {
        var limbs: [UInt64] = []
        limbs.reserveCapacity(8 * positions * digits)
        var base = (x: x, y: y)
        var row = [P256JacobianPoint](repeating: .infinity, count: digits)
        var prefixes = [P256Field.Element](repeating: P256Field.one, count: digits)
        for _ in 0..<positions {
            // j·base for j = 1 … 128, Jacobian.
            var sum = P256JacobianPoint(x: base.x, y: base.y, z: P256Field.one)
            row[0] = sum
            for j in 1..<digits {
                sum.add(affineX: base.x, y: base.y)
                row[j] = sum
            }
            // All of the row affine with one inversion: prefix products of Z, then peel one Z off per step.
            var product = P256Field.one
            for j in 0..<digits {
                guard !row[j].isInfinity else { return nil }
                product = P256Field.multiply(product, row[j].z)
                prefixes[j] = product
            }
            var inverse = P256Field.inverse(product)
            var affine = [(x: P256Field.Element, y: P256Field.Element)](repeating: (P256Field.zero, P256Field.zero),
                                                                      count: digits)
            for j in (0..<digits).reversed() {
                let zInverse = j > 0 ? P256Field.multiply(inverse, prefixes[j - 1]) : inverse
                inverse = P256Field.multiply(inverse, row[j].z)
                let zz = P256Field.square(zInverse)
                affine[j] = (P256Field.multiply(row[j].x, zz),
                             P256Field.multiply(row[j].y, P256Field.multiply(zz, zInverse)))
            }
            for point in affine {
                limbs += [point.x.0, point.x.1, point.x.2, point.x.3, point.y.0, point.y.1, point.y.2, point.y.3]
            }
            // The next position's base: 256·base = 2·(128·base).
            var next = P256JacobianPoint(x: affine[digits - 1].x, y: affine[digits - 1].y, z: P256Field.one)
            next.double()
            guard !next.isInfinity else { return nil }
            let zInverse = P256Field.inverse(next.z)
            let zz = P256Field.square(zInverse)
            base = (P256Field.multiply(next.x, zz), P256Field.multiply(next.y, P256Field.multiply(zz, zInverse)))
        }
        return limbs
    }

    /// point += scalar·P, for a scalar of 32 big-endian bytes: one table point per non-zero signed digit.
    func add(scalar bytes: UnsafeBufferPointer<UInt8>, to point: inout P256JacobianPoint) {
        var digits = [Int16](repeating: 0, count: Self.positions)
        Self.recode(scalar: bytes, into: &digits, at: 0)
        add(digits: digits, at: 0, to: &point)
    }

    /// Writes the signed base-256 digits of a scalar of 32 big-endian bytes into `digits` from `start`, least
    /// significant first (``positions`` of them, each in −127 … 128): Σ dᵢ·256^i is the scalar.
    static func recode(scalar bytes: UnsafeBufferPointer<UInt8>, into digits: inout [Int16], at start: Int) {
        precondition(bytes.count == 32, "P-256 scalar of other than 32 bytes")
        recode(scalar: P256Field.number(bigEndian: bytes, at: 0), into: &digits, at: start)
    }

    /// The same for a scalar held as limbs, least significant first (``P256Scalar``).
    static func recode(scalar: P256Field.Element, into digits: inout [Int16], at start: Int) {
        var carry = 0
        for position in 0..<positions {
            let limb: UInt64
            switch position / 8 {
            case 0: limb = scalar.0
            case 1: limb = scalar.1
            case 2: limb = scalar.2
            case 3: limb = scalar.3
            default: limb = 0
            }
            let value = Int(truncatingIfNeeded: (limb >> UInt64(8 * (position % 8))) & 0xFF) + carry
            carry = value > Self.digits ? 1 : 0
            digits[start + position] = Int16(value - 256 * carry)
        }
    }

    /// point += Σ dᵢ·256^i·P for the ``positions`` digits from `start` (``recode(scalar:into:at:)``).
    func add(digits: [Int16], at start: Int, to point: inout P256JacobianPoint) {
        for position in 0..<Self.positions {
            let digit = Int(digits[start + position])
            guard digit != 0 else { continue }
            let multiple = affinePoint(position: position, digit: digit)
            point.add(affineX: multiple.x, y: multiple.y)
        }
    }

    /// digit·256^position·P, affine, for a digit in −128 … 128 other than 0 (−P is (x, −y)).
    @inline(__always)
    private func affinePoint(position: Int, digit: Int) -> (x: P256Field.Element, y: P256Field.Element) {
        let at = 8 * (Self.digits * position + abs(digit) - 1)
        let y: P256Field.Element = (multiples[at + 4], multiples[at + 5], multiples[at + 6], multiples[at + 7])
        return ((multiples[at], multiples[at + 1], multiples[at + 2], multiples[at + 3]),
                digit < 0 ? P256Field.negate(y) : y)
    }

    /// u1·G + u2·Q for many signatures at once: `digits` holds 2·``positions`` digits per sum (u1's, then u2's,
    /// ``recode(scalar:into:at:)``), `keyTables` each sum's Q.
    ///
    /// Each signature has two running sums, u1·G's and u2·Q's, and all of them advance in step, one digit
    /// position at a time, on affine points: adding two affine points takes one division, and the divisions of a
    /// step share one field inversion (Montgomery's trick: three multiplications each), so an addition costs
    /// 5M + 1S and a share of the inversion instead of a mixed addition's 8M + 3S, and ``positions`` steps need
    /// that many inversions for both halves. The two halves are then added (one mixed addition, which handles
    /// equal and opposite points). A sum whose addition would divide by zero (the two points equal or opposite,
    /// which honest signatures never meet) leaves the steps and is computed alone with ``P256JacobianPoint``,
    /// which handles both cases. Results are Jacobian, or the point at infinity.
    static func sums(digits: [Int16], keyTables: [P256KeyTable], generator: P256KeyTable) -> [P256JacobianPoint] {
        typealias F = P256Field
        let count = keyTables.count
        let stride = 2 * positions
        precondition(digits.count == stride * count, "P256KeyTable.sums: digits for other than every sum")
        // Running sum h of signature h / 2: u1·G's for even h, u2·Q's for odd h.
        let halves = 2 * count
        var x = [F.Element](repeating: F.zero, count: halves)
        var y = x
        var started = [Bool](repeating: false, count: halves)
        var alone = [Bool](repeating: false, count: count)
        // Per step, the running sums that add (by slot): which, the point added, its denominator and the prefix
        // products.
        var active: [Int] = []
        active.reserveCapacity(halves)
        var added = [(x: F.Element, y: F.Element)](repeating: (F.zero, F.zero), count: halves)
        var denominators = [F.Element](repeating: F.zero, count: halves)
        var prefixes = denominators
        for step in 0..<positions {
            active.removeAll(keepingCapacity: true)
            var product = F.one
            for h in 0..<halves where !alone[h >> 1] {
                let k = h >> 1
                let digit = Int(digits[stride * k + (h & 1) * positions + step])
                guard digit != 0 else { continue }
                let point = (h & 1 == 0 ? generator : keyTables[k]).affinePoint(position: step, digit: digit)
                guard started[h] else {
                    (x[h], y[h]) = point
                    started[h] = true
                    continue
                }
                let denominator = F.subtract(point.x, x[h])
                guard !F.isZero(denominator) else {
                    alone[k] = true
                    continue
                }
                product = F.multiply(product, denominator)
                let slot = active.count
                active.append(h)
                added[slot] = point
                denominators[slot] = denominator
                prefixes[slot] = product
            }
            guard !active.isEmpty else { continue }
            var inverse = F.inverse(product)
            for slot in active.indices.reversed() {
                let h = active[slot]
                let quotient: F.Element
                if slot > 0 {
                    quotient = F.multiply(inverse, prefixes[slot - 1])
                    inverse = F.multiply(inverse, denominators[slot])
                } else {
                    quotient = inverse
                }
                // λ = (y₂ − y₁)/(x₂ − x₁), x₃ = λ² − x₁ − x₂, y₃ = λ·(x₁ − x₃) − y₁.
                let lambda = F.multiply(F.subtract(added[slot].y, y[h]), quotient)
                let x3 = F.subtract(F.subtract(F.square(lambda), x[h]), added[slot].x)
                y[h] = F.subtract(F.multiply(lambda, F.subtract(x[h], x3)), y[h])
                x[h] = x3
            }
        }
        return (0..<count).map { k in
            guard !alone[k] else {
                var point = P256JacobianPoint.infinity
                generator.add(digits: digits, at: stride * k, to: &point)
                keyTables[k].add(digits: digits, at: stride * k + positions, to: &point)
                return point
            }
            var point = started[2 * k] ? P256JacobianPoint(x: x[2 * k], y: y[2 * k], z: F.one) : .infinity
            if started[2 * k + 1] { point.add(affineX: x[2 * k + 1], y: y[2 * k + 1]) }
            return point
        }
    }

    /// The affine point j·256^i·P of the table as plain (not Montgomery) big-endian coordinates x ‖ y, for tests.
    func point(position: Int, multiple: Int) -> [UInt8] {
        let at = 8 * (Self.digits * position + multiple - 1)
        var bytes: [UInt8] = []
        for coordinate in 0..<2 {
            let limbs = multiples[(at + 4 * coordinate)..<(at + 4 * coordinate + 4)].map { $0 }
            let plain = P256Field.plain((limbs[0], limbs[1], limbs[2], limbs[3]))
            for limb in [plain.3, plain.2, plain.1, plain.0] {
                bytes += (0..<8).reversed().map { UInt8(truncatingIfNeeded: limb >> UInt64(8 * $0)) }
            }
        }
        return bytes
    }
}
