import CAttributionOpenSSL
import Foundation
import Testing

@_spi(CommandLine) @_spi(Servers) @_spi(Stores) @testable import Attribution

/// P-256 arithmetic on fixed-size limbs (``P256Field``, ``P256JacobianPoint``) and the tables and batched sums built
/// on it (``P256KeyTable``). Every expected value comes from libcrypto (`BN_mod_mul`, `BN_mod_inverse`,
/// `EC_POINT_mul`), never from the code under test; the verifications themselves are held to `EVP_PKEY_verify` in
/// `P256KeyTableTests`.
@Suite("P-256 field and point arithmetic")
struct P256PointTests {
    static let prime = WycheproofECDSATests.hexBytes(
        "ffffffff00000001000000000000000000000000ffffffffffffffffffffffff")

    /// Values where carries and reductions turn: 0, 1, small, p − 1, p − 2, 2²⁵⁵, a limb of ones (the top limb of
    /// ones is not below p).
    static let edgeValues: [[UInt8]] = {
        var p = prime
        let minusOne = { (value: [UInt8]) -> [UInt8] in
            var value = value
            var index = 31
            while value[index] == 0 {
                value[index] = 0xFF
                index -= 1
            }
            value[index] -= 1
            return value
        }
        p = minusOne(p)
        let limb = (0..<3).map { index in
            [UInt8](repeating: 0, count: 24 - 8 * index) + [UInt8](repeating: 0xFF, count: 8)
                + [UInt8](repeating: 0, count: 8 * index)
        }
        return [[UInt8](repeating: 0, count: 32), [UInt8](repeating: 0, count: 31) + [1],
                [UInt8](repeating: 0, count: 31) + [2], p, minusOne(p), [0x80] + [UInt8](repeating: 0, count: 31),
                [0x7F] + [UInt8](repeating: 0xFF, count: 31)] + limb
    }()

    /// libcrypto's figures mod p.
    final class Reference {
        let context = BN_CTX_new()!
        let p: OpaquePointer
        let a = BN_new()!, b = BN_new()!, out = BN_new()!

        init() {
            p = BN_bin2bn(P256PointTests.prime, 32, nil)!
        }

        deinit {
            [p, a, b, out].forEach { BN_free($0) }
            BN_CTX_free(context)
        }

        func bytes(_ value: OpaquePointer) -> [UInt8] {
            var bytes = [UInt8](repeating: 0, count: 32)
            _ = BN_bn2binpad(value, &bytes, 32)
            return bytes
        }

        func apply(_ x: [UInt8], _ y: [UInt8],
                   _ operation: (OpaquePointer, OpaquePointer, OpaquePointer, OpaquePointer, OpaquePointer) -> Int32)
            -> [UInt8] {
            _ = BN_bin2bn(x, 32, a)
            _ = BN_bin2bn(y, 32, b)
            #expect(operation(out, a, b, p, context) == 1)
            return bytes(out)
        }
    }

    static func element(_ bytes: [UInt8]) throws -> P256Field.Element {
        try #require(bytes.withUnsafeBufferPointer { P256Field.element(bigEndian: $0) })
    }

    static func bytes(_ element: P256Field.Element) -> [UInt8] {
        let plain = P256Field.plain(element)
        return [plain.3, plain.2, plain.1, plain.0].flatMap { limb in
            (0..<8).reversed().map { UInt8(truncatingIfNeeded: limb >> UInt64(8 * $0)) }
        }
    }

    @Test("Multiplication, squaring, addition, subtraction and inversion agree with libcrypto's BIGNUMs mod p")
    func fieldAgreesWithBIGNUM() throws {
        let reference = Reference()
        var generator = SplitMix64(seed: 0x9256)
        func random() -> [UInt8] {
            var bytes = (0..<4).flatMap { _ in withUnsafeBytes(of: generator.next()) { Array($0) } }
            // Below p: p's top 32 bits are ffffffff 00000001, so a value with a top byte under 0xff is.
            if bytes[0] == 0xFF { bytes[0] = 0xFE }
            return bytes
        }
        let values = Self.edgeValues + (0..<300).map { _ in random() }
        for x in values {
            for y in values.prefix(40) + [random()] {
                let (a, b) = (try Self.element(x), try Self.element(y))
                #expect(Self.bytes(P256Field.multiply(a, b))
                    == reference.apply(x, y) { BN_mod_mul($0, $1, $2, $3, $4) })
                #expect(Self.bytes(P256Field.add(a, b)) == reference.apply(x, y) { BN_mod_add($0, $1, $2, $3, $4) })
                #expect(Self.bytes(P256Field.subtract(a, b))
                    == reference.apply(x, y) { BN_mod_sub($0, $1, $2, $3, $4) })
            }
            let a = try Self.element(x)
            #expect(Self.bytes(P256Field.square(a)) == reference.apply(x, x) { BN_mod_mul($0, $1, $2, $3, $4) })
            if x != [UInt8](repeating: 0, count: 32) {
                let inverse = reference.apply(x, x) { out, a, _, p, context in
                    BN_mod_inverse(out, a, p, context) != nil ? 1 : 0
                }
                #expect(Self.bytes(P256Field.inverse(a)) == inverse)
            }
        }
    }

    @Test("Bytes not below p are no field element")
    func rejectsUnreduced() {
        for bytes in [Self.prime, [UInt8](repeating: 0xFF, count: 32)] {
            #expect(bytes.withUnsafeBufferPointer { P256Field.element(bigEndian: $0) } == nil)
        }
    }

    /// j·2^(w·i)·P from libcrypto (w = ``P256KeyTable/windowBits``), affine x ‖ y.
    static func libcryptoMultiple(_ point: [UInt8], position: Int, multiple: Int) throws -> [UInt8] {
        let group = try #require(EC_GROUP_new_by_curve_name(NID_X9_62_prime256v1))
        let context = try #require(BN_CTX_new())
        let base = try #require(EC_POINT_new(group)), result = try #require(EC_POINT_new(group))
        let scalar = try #require(BN_new())
        defer {
            BN_free(scalar)
            EC_POINT_free(base)
            EC_POINT_free(result)
            BN_CTX_free(context)
            EC_GROUP_free(group)
        }
        #expect(EC_POINT_oct2point(group, base, point, 65, context) == 1)
        // j, then shifted left by w·i bits.
        let bytes = [UInt8(truncatingIfNeeded: multiple >> 8), UInt8(truncatingIfNeeded: multiple)]
        #expect(BN_bin2bn(bytes, Int32(bytes.count), scalar) != nil)
        #expect(BN_lshift(scalar, scalar, Int32(P256KeyTable.windowBits * position)) == 1)
        #expect(EC_POINT_mul(group, result, nil, base, scalar, context) == 1)
        var out = [UInt8](repeating: 0, count: 65)
        #expect(EC_POINT_point2oct(group, result, POINT_CONVERSION_UNCOMPRESSED, &out, 65, context) == 65)
        return Array(out.dropFirst())
    }

    @Test("The tables of G and of a key hold libcrypto's multiples j·2^(w·i)·P")
    func tablesHoldLibcryptoMultiples() throws {
        let key = Array(try ReferenceSigner().publicKey.derRepresentation.suffix(65))
        let generator = try #require(P256KeyTable.generator)
        let keyTable = try #require(P256KeyTable(uncompressedPoint: key))
        for (table, point) in [(generator, Self.generatorPoint), (keyTable, key)] {
            var samples: [(Int, Int)] = []
            let last = P256KeyTable.positions - 1
            for position in [0, 1, 2, last / 2, last - 1, last] {
                samples += (1...P256KeyTable.digits).map { (position, $0) }
            }
            for position in 0..<P256KeyTable.positions {
                samples += [1, 2, 3, P256KeyTable.digits - 1, P256KeyTable.digits].map { (position, $0) }
            }
            for (position, multiple) in samples {
                #expect(table.point(position: position, multiple: multiple)
                    == (try Self.libcryptoMultiple(point, position: position, multiple: multiple)),
                    "\(multiple)·2^(w·\(position))")
            }
        }
    }

    @Test("Points that are not on the curve, or not uncompressed, get no table")
    func rejectsPointsOffTheCurve() throws {
        var key = Array(try ReferenceSigner().publicKey.derRepresentation.suffix(65))
        #expect(P256KeyTable(uncompressedPoint: Array(key.prefix(64))) == nil)
        key[64] ^= 1
        #expect(P256KeyTable(uncompressedPoint: key) == nil)
        key[64] ^= 1
        key[0] = 0x03
        #expect(P256KeyTable(uncompressedPoint: key) == nil)
        #expect(P256KeyTable(uncompressedPoint: [0x04] + Self.prime + [UInt8](repeating: 0, count: 32)) == nil)
    }

    @Test("Signed digits: each within −(2^(w−1) − 1) … 2^(w−1) and Σ dᵢ·2^(w·i) the scalar, for scalars up to 2²⁵⁶ − 1")
    func recodedDigitsSumToTheScalar() {
        var random = SplitMix64(seed: 0xD161_75)
        var scalars: [[UInt8]] = [[UInt8](repeating: 0, count: 32), [UInt8](repeating: 0xFF, count: 32),
                                  [UInt8](repeating: 0, count: 31) + [0x01], [UInt8](repeating: 0x80, count: 32),
                                  (0..<32).map { $0 % 2 == 0 ? 0xFF : 0x00 }, WycheproofECDSATests.p256Order]
        scalars += (0..<500).map { _ in (0..<4).flatMap { _ in withUnsafeBytes(of: random.next()) { Array($0) } } }
        for scalar in scalars {
            var digits = [Int16](repeating: 0, count: P256KeyTable.positions + 1)
            scalar.withUnsafeBufferPointer { P256KeyTable.recode(scalar: $0, into: &digits, at: 1) }
            #expect(digits[0] == 0)
            let largest = P256KeyTable.digits
            #expect(digits.allSatisfy { -(largest - 1) <= Int($0) && Int($0) <= largest })
            // Σ dᵢ·2^(w·i), big-endian bytes, through a BIGNUM.
            let total = BN_new()!, term = BN_new()!
            defer {
                BN_free(total)
                BN_free(term)
            }
            BN_zero_ex(total)
            for (position, digit) in digits.dropFirst().enumerated() where digit != 0 {
                _ = BN_set_word(term, UInt(abs(Int(digit))))
                _ = BN_lshift(term, term, Int32(P256KeyTable.windowBits * position))
                _ = digit < 0 ? BN_sub(total, total, term) : BN_add(total, total, term)
            }
            var bytes = [UInt8](repeating: 0, count: 32)
            #expect(BN_is_negative(total) == 0 && BN_bn2binpad(total, &bytes, 32) == 32)
            #expect(bytes == scalar)
        }
    }

    /// R as affine x ‖ y (plain), or nil at infinity.
    static func affine(_ point: P256JacobianPoint) -> [UInt8]? {
        guard !point.isInfinity else { return nil }
        let zInverse = P256Field.inverse(point.z)
        let zz = P256Field.square(zInverse)
        return bytes(P256Field.multiply(point.x, zz))
            + bytes(P256Field.multiply(point.y, P256Field.multiply(zz, zInverse)))
    }

    @Test("Sums with shared inversions: equal and opposite points midway (taken out of the step) and random digits")
    func sharedInversionSums() throws {
        let generator = try #require(P256KeyTable.generator)
        let key = Array(try ReferenceSigner().publicKey.derRepresentation.suffix(65))
        let keyTable = try #require(P256KeyTable(uncompressedPoint: key))
        let stride = 2 * P256KeyTable.positions
        var digits: [Int16] = []
        var tables: [P256KeyTable] = []
        /// u1's digits at positions, u2's likewise, under Q (G itself when `qIsG`).
        func sum(_ u1: [Int: Int16], _ u2: [Int: Int16], qIsG: Bool) {
            var row = [Int16](repeating: 0, count: stride)
            for (position, digit) in u1 { row[position] = digit }
            for (position, digit) in u2 { row[P256KeyTable.positions + position] = digit }
            digits += row
            tables.append(qIsG ? generator : keyTable)
        }
        // Q = G: the second addition meets the accumulator itself (a doubling) or its negative (infinity).
        sum([0: 1], [0: 1], qIsG: true)
        sum([0: 1], [0: -1], qIsG: true)
        sum([3: 128], [3: 128], qIsG: true)
        sum([3: -7, 5: 2], [3: 7, 5: -2], qIsG: true)
        sum([1: 1, 2: 5], [1: 1, 4: 9], qIsG: true)
        sum([:], [:], qIsG: false)
        sum([:], [P256KeyTable.positions - 1: 1], qIsG: false)
        var random = SplitMix64(seed: 0x5A_2256)
        for _ in 0..<40 {
            var u1: [Int: Int16] = [:], u2: [Int: Int16] = [:]
            for position in 0..<P256KeyTable.positions {
                u1[position] = Self.randomDigit(&random)
                u2[position] = Self.randomDigit(&random)
            }
            sum(u1, u2, qIsG: random.next() % 4 == 0)
        }
        let shared = P256KeyTable.sums(digits: digits, keyTables: tables, generator: generator)
        #expect(shared.count == tables.count)
        for (index, table) in tables.enumerated() {
            var alone = P256JacobianPoint.infinity
            generator.add(digits: digits, at: stride * index, to: &alone)
            table.add(digits: digits, at: stride * index + P256KeyTable.positions, to: &alone)
            #expect(Self.affine(shared[index]) == Self.affine(alone), "sum \(index)")
        }
        // The doubling is 2G, the opposite sums are at infinity, the empty sum too.
        let twoG = try Self.libcryptoMultiple(Self.generatorPoint, position: 0, multiple: 2)
        #expect(Self.affine(shared[0]) == twoG)
        #expect(shared[1].isInfinity && shared[3].isInfinity && shared[5].isInfinity)
        #expect(!shared[2].isInfinity && !shared[4].isInfinity && !shared[6].isInfinity)
        // Every sum that is a point is on the curve, affine (the shared path) or Jacobian (one by one)...
        for (index, table) in tables.enumerated() where !shared[index].isInfinity {
            var alone = P256JacobianPoint.infinity
            generator.add(digits: digits, at: stride * index, to: &alone)
            table.add(digits: digits, at: stride * index + P256KeyTable.positions, to: &alone)
            #expect(shared[index].isOnCurve && alone.isOnCurve, "sum \(index)")
        }
    }

    @Test("A point the arithmetic got wrong is off the curve: one limb, one coordinate or Z changed, or infinity")
    func faultsLeaveTheCurve() throws {
        let generator = try #require(P256KeyTable.generator)
        var point = P256JacobianPoint.infinity
        var random = SplitMix64(seed: 0xFA_0175)
        var digits = [Int16](repeating: 0, count: P256KeyTable.positions)
        for position in digits.indices { digits[position] = Self.randomDigit(&random) }
        generator.add(digits: digits, at: 0, to: &point)
        try #require(point.isOnCurve && !P256Field.equal(point.z, P256Field.one))
        #expect(!P256JacobianPoint.infinity.isOnCurve)
        var flipped = point
        flipped.x.1 ^= 1 << 17
        #expect(!flipped.isOnCurve)
        flipped = point
        flipped.y = P256Field.add(flipped.y, P256Field.one)
        #expect(!flipped.isOnCurve)
        flipped = point
        flipped.z = P256Field.add(flipped.z, flipped.z)
        #expect(!flipped.isOnCurve)
        // −R is on the curve too (the equation holds for ±Y).
        var negated = point
        negated.y = P256Field.negate(point.y)
        #expect(negated.isOnCurve)
    }

    /// A digit as ``P256KeyTable/recode(scalar:into:at:)`` writes them: −(digits − 1) … digits, 0 included.
    static func randomDigit(_ random: inout SplitMix64) -> Int16 {
        Int16(Int(random.next() % UInt64(2 * P256KeyTable.digits)) - (P256KeyTable.digits - 1))
    }

    /// G, uncompressed (SEC 2 §2.4.2).
    static let generatorPoint = WycheproofECDSATests.hexBytes(
        "046b17d1f2e12c4247f8bce6e563a440f277037d812deb33a0f4a13945d898c296"
            + "4fe342e2fe1a7f9b8ee7eb4a7c0f9e162bce33576b315ececbb6406837bf51f5")
}
