internal import CAttributionOpenSSL

/// Fixed tables of multiples of one P-256 point, so that u·P is a sum of precomputed points with no doubling left:
/// one table for the generator G (shared by every key, ``generator``) and one per trusted key Q.
///
/// `EVP_PKEY_verify` computes the multiples of Q afresh for every signature, and libcrypto's P-256 code, even from
/// a table, is constant-time: it reads a whole window of the table per 7 bits of the scalar and adds for every
/// window. Verification handles public values only, so here the scalar is recoded into 26 signed digits of
/// ``windowBits`` = 10 bits, d in −511 … 512, and each non-zero digit adds one point, |d|·2^(10i)·P or its
/// negative, read directly: u1·G + u2·Q is at most 52 additions (``P256JacobianPoint``, on fixed-size limbs, handling equal and opposite points
/// and the point at infinity). Postbacks come signed by one key or a handful, so a table per trusted key is built
/// once and serves every later signature; ``P256KeyTables`` builds it only once a key has verified enough
/// signatures to repay the building.
///
/// Each table holds j·2^(10i)·P for j in 1 … 512 and i in 0 … 25, affine, in Montgomery form (26 × 512 points of
/// 64 bytes: 832 KiB; built by ``fill(_:x:y:)``). Ten-bit windows against the eight-bit ones before: 52 additions
/// instead of 66 per signature, for tables 3.2 times as large (measured on Apple-shaped traffic: ~4 % less time
/// with `--jobs 2`, 9 bits half of that; two tables no longer fit a 1 MiB level-2 cache, and the gather pass in
/// ``sums(digits:keyTables:generator:)`` keeps their reads in flight together). The points are stored 64-byte aligned, so reading one touches one cache line, not two (a Swift array's elements
/// start 32 bytes into its allocation). `P256KeyTableTests` holds the tables to libcrypto's own multiples and the
/// verifications to `EVP_PKEY_verify`. Shared read-only by all threads once built; freed with the table.
final class P256KeyTable: @unchecked Sendable {
    // Sendable: `multiples` is written only in `init` and read-only after.
    /// j·2^(w·i)·P, affine, as eight limbs (x then y, ``P256Field/Element``s) from index 8·(``digits``·i + j − 1):
    /// ``limbCount`` limbs, 64-byte aligned.
    private let multiples: UnsafeMutablePointer<UInt64>
    /// The limbs a table holds.
    static let limbCount = 8 * positions * digits

    /// Bits per digit: a scalar is written in signed base 2^windowBits.
    static let windowBits = 10
    /// Digit positions of a scalar below 2²⁵⁶ in signed base 2^windowBits (the last carries at most 1).
    static let positions = (256 + windowBits) / windowBits
    /// The largest digit magnitude, and the points per position.
    static let digits = 1 << (windowBits - 1)

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
        guard let (x, y) = P256Field.affinePoint(uncompressed: point) else { return nil }
        let limbs = UnsafeMutableRawPointer.allocate(byteCount: 8 * Self.limbCount, alignment: 64)
            .bindMemory(to: UInt64.self, capacity: Self.limbCount)
        // Freed here when building fails: `multiples` is not set yet, so `deinit` does not run.
        guard Self.fill(limbs, x: x, y: y) else {
            limbs.deallocate()
            return nil
        }
        multiples = limbs
    }

    deinit {
        multiples.deallocate()
    }

    /// Writes the table of (x, y) into `limbs` (``limbCount`` of them, see ``multiples``); false if a point at
    /// infinity or a division by zero turns up (neither can for a point of the curve: its order is the prime n,
    /// which divides no j·2^(w·i), nor any difference of two multiples of one position).
    ///
    /// First the bases 2^(w·i)·P (w Jacobian doublings apart, made affine with one shared inversion), then every
    /// position's multiples at once, in generations: j·B for j in h+1 … 2h is h·B + (j − h)·B (for j = 2h, a
    /// doubling), h = 1, 2, 4, … ``digits``/2, each generation's divisions sharing one field inversion
    /// (Montgomery's trick) across all positions. About 6M per point and ten inversions in all, a third of a row
    /// of Jacobian additions made affine position by position (~24M instructions for a table).
    private static func fill(_ limbs: UnsafeMutablePointer<UInt64>, x: P256Field.Element, y: P256Field.Element)
        -> Bool {
        typealias F = P256Field
        // The point j·2^(w·i)·P is at index digits·i + j − 1 (eight limbs from 8·index), 0 ≤ index < limbCount / 8.
        func load(_ index: Int) -> (x: F.Element, y: F.Element) {
            precondition(index >= 0 && 8 * index + 8 <= limbCount, "P256KeyTable.fill: outside the table")
            let at = limbs + 8 * index
            return ((at[0], at[1], at[2], at[3]), (at[4], at[5], at[6], at[7]))
        }
        func store(_ index: Int, _ point: (x: F.Element, y: F.Element)) {
            precondition(index >= 0 && 8 * index + 8 <= limbCount, "P256KeyTable.fill: outside the table")
            let at = limbs + 8 * index
            (at[0], at[1], at[2], at[3]) = point.x
            (at[4], at[5], at[6], at[7]) = point.y
        }
        var prefixes = [F.Element](repeating: F.one, count: positions * digits / 2)
        var denominators = prefixes

        // The bases, Jacobian, then affine into j = 1 of each position.
        var bases: [P256JacobianPoint] = []
        bases.reserveCapacity(positions)
        var base = P256JacobianPoint(x: x, y: y, z: F.one)
        for position in 0..<positions {
            if position > 0 {
                for _ in 0..<windowBits { base.double() }
            }
            guard !base.isInfinity else { return false }
            bases.append(base)
        }
        var product = F.one
        for position in 0..<positions {
            product = F.multiply(product, bases[position].z)
            prefixes[position] = product
        }
        var inverse = F.inverse(product)
        for position in (0..<positions).reversed() {
            let zInverse = position > 0 ? F.multiply(inverse, prefixes[position - 1]) : inverse
            inverse = F.multiply(inverse, bases[position].z)
            let zz = F.square(zInverse)
            store(digits * position, (F.multiply(bases[position].x, zz),
                                      F.multiply(bases[position].y, F.multiply(zz, zInverse))))
        }

        // The generations: (j − h)·B + h·B, slot by slot (position, then j), all denominators sharing one inversion.
        let three = F.add(F.add(F.one, F.one), F.one)
        var half = 1
        while half < digits {
            var slot = 0
            product = F.one
            for position in 0..<positions {
                let halfPoint = load(digits * position + half - 1)
                for j in (half + 1)...(2 * half) {
                    // x₂ − x₁ for an addition; 2y for the doubling (j = 2h).
                    let denominator = j == 2 * half
                        ? F.add(halfPoint.y, halfPoint.y)
                        : F.subtract(load(digits * position + j - half - 1).x, halfPoint.x)
                    guard !F.isZero(denominator) else { return false }
                    product = F.multiply(product, denominator)
                    denominators[slot] = denominator
                    prefixes[slot] = product
                    slot += 1
                }
            }
            inverse = F.inverse(product)
            for position in (0..<positions).reversed() {
                let halfPoint = load(digits * position + half - 1)
                for j in ((half + 1)...(2 * half)).reversed() {
                    slot -= 1
                    let quotient = slot > 0 ? F.multiply(inverse, prefixes[slot - 1]) : inverse
                    inverse = F.multiply(inverse, denominators[slot])
                    // λ = (y₂ − y₁)/(x₂ − x₁), or (3x₁² − 3)/(2y₁) for the doubling (a = −3).
                    let other: (x: F.Element, y: F.Element)
                    let lambda: F.Element
                    if j == 2 * half {
                        other = halfPoint
                        let xx = F.square(halfPoint.x)
                        lambda = F.multiply(F.subtract(F.triple(xx), three), quotient)
                    } else {
                        other = load(digits * position + j - half - 1)
                        lambda = F.multiply(F.subtract(other.y, halfPoint.y), quotient)
                    }
                    store(digits * position + j - 1,
                          F.affineSum(x1: halfPoint.x, y1: halfPoint.y, x2: other.x, slope: lambda))
                }
            }
            half *= 2
        }
        return true
    }

    /// point += scalar·P, for a scalar of 32 big-endian bytes: one table point per non-zero signed digit.
    func add(scalar bytes: UnsafeBufferPointer<UInt8>, to point: inout P256JacobianPoint) {
        var digits = [Int16](repeating: 0, count: Self.positions)
        Self.recode(scalar: bytes, into: &digits, at: 0)
        add(digits: digits, at: 0, to: &point)
    }

    /// Writes the signed base-2^w digits (w = ``windowBits``) of a scalar of 32 big-endian bytes into `digits` from
    /// `start`, least significant first (``positions`` of them, each in −(``digits`` − 1) … ``digits``):
    /// Σ dᵢ·2^(w·i) is the scalar.
    static func recode(scalar bytes: UnsafeBufferPointer<UInt8>, into digits: inout [Int16], at start: Int) {
        precondition(bytes.count == 32, "P-256 scalar of other than 32 bytes")
        recode(scalar: P256Field.number(bigEndian: bytes, at: 0), into: &digits, at: start)
    }

    /// The same for a scalar held as limbs, least significant first (``P256Scalar``).
    static func recode(scalar: P256Field.Element, into digits: inout [Int16], at start: Int) {
        let limbs = [scalar.0, scalar.1, scalar.2, scalar.3]
        let mask = (1 << windowBits) - 1
        var carry = 0
        for position in 0..<positions {
            // Bits windowBits·position … of the scalar (zero above bit 255).
            let bit = windowBits * position
            let limb = bit / 64, shift = bit % 64
            var window = limb < 4 ? Int(truncatingIfNeeded: limbs[limb] >> UInt64(shift)) : 0
            if shift + windowBits > 64, limb + 1 < 4 {
                window |= Int(truncatingIfNeeded: limbs[limb + 1] << UInt64(64 - shift))
            }
            let value = (window & mask) + carry
            carry = value > Self.digits ? 1 : 0
            digits[start + position] = Int16(value - (1 << windowBits) * carry)
        }
    }

    /// point += Σ dᵢ·2^(w·i)·P for the ``positions`` digits from `start` (``recode(scalar:into:at:)``), by the
    /// table sum both curves share (``MultiplesLayout/add(digits:from:to:)``).
    func add(digits: [Int16], at start: Int, to point: inout P256JacobianPoint) {
        precondition(start >= 0 && start <= digits.count - Self.positions, "P256KeyTable.add: digits out of bounds")
        digits.withUnsafeBufferPointer { buffer in
            Self.layout.add(digits: { Int(buffer[start + $0]) }, from: multiples, to: &point)
        }
    }

    /// Where the table keeps j·2^(w·i)·P (``multiples``): ``positions`` positions of ``digits`` points.
    static var layout: MultiplesLayout<P256Field> {
        @inline(__always) get { MultiplesLayout(positions: positions, perPosition: digits) }
    }

    /// u1·G + u2·Q for many signatures at once: `digits` holds 2·``positions`` digits per sum (u1's, then u2's,
    /// ``recode(scalar:into:at:)``), `keyTables` each sum's Q. The sums advance in step on affine points, sharing
    /// one inversion per step (``MultiplesLayout/pairedSums(digits:tables:count:)``, written once for any curve).
    static func sums(digits: [Int16], keyTables: [P256KeyTable], generator: P256KeyTable) -> [P256JacobianPoint] {
        let count = keyTables.count
        precondition(digits.count == 2 * positions * count, "P256KeyTable.sums: digits for other than every sum")
        // Running sum h's table: G's for even h, the signature's Q's for odd h.
        let tables = UnsafeMutablePointer<UnsafePointer<UInt64>>.allocate(capacity: 2 * count)
        defer { tables.deallocate() }
        for k in 0..<count {
            (tables + 2 * k).initialize(to: UnsafePointer(generator.multiples))
            (tables + 2 * k + 1).initialize(to: UnsafePointer(keyTables[k].multiples))
        }
        return withExtendedLifetime((keyTables, generator)) {
            digits.withUnsafeBufferPointer { buffer in
                layout.pairedSums(digits: buffer.baseAddress!, tables: UnsafePointer(tables), count: count)
            }
        }
    }

    /// The affine point j·2^(w·i)·P of the table as plain (not Montgomery) big-endian coordinates x ‖ y, for tests.
    func point(position: Int, multiple: Int) -> [UInt8] {
        let at = 8 * (Self.digits * position + multiple - 1)
        var bytes: [UInt8] = []
        for coordinate in 0..<2 {
            precondition(at >= 0 && at + 8 <= Self.limbCount, "P256KeyTable.point: outside the table")
            let limbs = multiples + at + 4 * coordinate
            let plain = P256Field.plain((limbs[0], limbs[1], limbs[2], limbs[3]))
            for limb in [plain.3, plain.2, plain.1, plain.0] {
                bytes += (0..<8).reversed().map { UInt8(truncatingIfNeeded: limb >> UInt64(8 * $0)) }
            }
        }
        return bytes
    }
}
