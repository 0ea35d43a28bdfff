import CAttributionOpenSSL
import Foundation
import Testing

@_spi(CommandLine) @_spi(Servers) @_spi(Stores) @testable import Attribution

/// The P-192 key's tables of multiples (``P192KeyTable``): u1·G + u2·Q as one table point per byte of each scalar.
/// Every expected answer comes from `EVP_PKEY_verify` on the same key, digest and signature, never from the code
/// under test; the edge cases are built through the ECDSA equations with libcrypto's point arithmetic and a known
/// private scalar, and each is also held to the label its construction gives.
@Suite("P-192 tables of multiples (SKAdNetwork 1.0 and 2.0)")
struct P192KeyTableTests {
    static let order = "FFFFFFFFFFFFFFFFFFFFFFFF99DEF836146BC9B1B4D22831"
    static let prime = "FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEFFFFFFFFFFFFFFFF"

    /// `EVP_PKEY_verify`'s answer for r‖s (24 bytes each) over `digest`.
    static func evp(_ key: ECPublicKey, _ raw: [UInt8], _ digest: SHA256Digest) -> Bool {
        raw.withUnsafeBytes { rawBytes in
            P1363Signature.withDEREncoding(of: rawBytes) { der in
                digest.withUnsafeBytes { key.evpKey.isValidSignature(der: der, overSHA256Digest: $0) }
            }
        }
    }

    static func table(_ key: ECPublicKey) throws -> P192KeyTable {
        try #require(P192KeyTable(uncompressedPoint: key.uncompressedPoint))
    }

    static func tableAnswer(_ table: P192KeyTable, _ raw: [UInt8], _ digest: SHA256Digest) -> Bool {
        table.isValidSignature(r: raw[..<24], s: raw[24...], digest: digest)
    }

    static func raw(fromDER der: [UInt8]) throws -> [UInt8] {
        try #require(der.withUnsafeBytes { P1363Signature.raw(fromStrictDER: $0, half: 24) })
    }

    @Test("Apple's P-192 key gets its tables")
    func appleKey() throws {
        let key = SKAdNetworkKeys.apple.p192.key
        #expect(key.curve == .p192)
        _ = try Self.table(key)
    }

    /// `P192_TABLE_RANDOM_CHECKS` sets the count (default 3,000).
    static let randomCount = ProcessInfo.processInfo.environment["P192_TABLE_RANDOM_CHECKS"].flatMap { Int($0) }
        ?? 3_000

    @Test("Random valid and invalid signatures under three keys: the tables agree with EVP_PKEY_verify")
    func randomSignatures() throws {
        let signers = try (0..<3).map { _ in try ReferenceSigner(curve: .p192) }
        let tables = try signers.map { try Self.table($0.publicKey) }
        var generator = SplitMix64(seed: 0x192_192)
        var valid = 0
        var disagreements = 0
        for _ in 0..<Self.randomCount {
            let which = Int(generator.next() % 3)
            let digest = SHA256Digest(of: withUnsafeBytes(of: generator.next()) { Array($0) })
            var raw = try Self.raw(fromDER: signers[which].signDER(digest))
            var keyIndex = which
            var checked = digest
            switch generator.next() % 8 {
            case 0, 1, 2:
                break
            case 3:
                keyIndex = (which + 1) % 3
            case 4:
                checked = SHA256Digest(of: withUnsafeBytes(of: generator.next()) { Array($0) })
            case 5:
                raw[Int(generator.next() % 48)] ^= UInt8(truncatingIfNeeded: generator.next() | 1)
            case 6:
                // High s: n − s, as valid as s.
                raw = raw[..<24] + Self.subtract(from: Self.order, raw[24...])
            default:
                raw = (0..<48).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
            }
            let expected = Self.evp(signers[keyIndex].publicKey, raw, checked)
            let answer = Self.tableAnswer(tables[keyIndex], raw, checked)
            if answer != expected {
                disagreements += 1
                Issue.record("r‖s \(raw) under key \(keyIndex): tables \(answer), EVP \(expected)")
            }
            if expected { valid += 1 }
        }
        #expect(disagreements == 0)
        // About half are valid (cases 0-2 and 6); a run where nothing verified would prove little.
        #expect(valid > Self.randomCount / 3)
    }

    @Test("Every one-bit change of four valid signatures: the tables agree with EVP_PKEY_verify")
    func bitFlips() throws {
        let signer = try ReferenceSigner(curve: .p192)
        let table = try Self.table(signer.publicKey)
        var valid = 0
        for index in 0..<4 {
            let digest = SHA256Digest(of: Array("p192 bit flips \(index)".utf8))
            let raw = try Self.raw(fromDER: signer.signDER(digest))
            for bit in -1..<(8 * 48) {
                var flipped = raw
                if bit >= 0 { flipped[bit / 8] ^= 1 << (bit % 8) }
                let expected = Self.evp(signer.publicKey, flipped, digest)
                #expect(Self.tableAnswer(table, flipped, digest) == expected, "signature \(index), bit \(bit)")
                if expected { valid += 1 }
            }
        }
        #expect(valid == 4)
    }

    /// An edge case: key, digest, r‖s, and the answer the construction gives.
    struct EdgeCase: CustomTestStringConvertible, Sendable {
        let name: String
        let keyDER: [UInt8]
        let digest: [UInt8]
        let raw: [UInt8]
        let isValid: Bool
        var testDescription: String { name }
    }

    @Test("ECDSA's edge cases on P-192, built through the equations: the tables agree with EVP and the construction",
          arguments: try EdgeCases.make())
    func edgeCase(_ edge: EdgeCase) throws {
        let key = try ECPublicKey(derRepresentation: edge.keyDER, curve: .p192)
        let digest = try #require(SHA256Digest(digestBytes: edge.digest))
        let evp = Self.evp(key, edge.raw, digest)
        #expect(evp == edge.isValid, "EVP_PKEY_verify and the construction disagree")
        #expect(Self.tableAnswer(try Self.table(key), edge.raw, digest) == evp)
    }

    @Test("SKAdNetwork 1.0 and 2.0 fixtures through ECPublicKey, before and after the key's tables are built")
    func throughTheKey() throws {
        let signer = try ReferenceSigner(curve: .p192)
        let messages = (0..<(P192KeyTables.defaultThreshold + 8)).map { Array("message \($0)".utf8) }
        for message in messages {
            let der = signer.signDER(SHA256Digest(of: message))
            #expect(signer.publicKey.isValidDERSignature(der, sha256Over: message))
            #expect(!signer.publicKey.isValidDERSignature(der, sha256Over: message + [0]))
        }
        #expect(P192KeyTables.shared.table(forPoint: signer.publicKey.uncompressedPoint) != nil)
    }

    /// R = k·G (libcrypto's point arithmetic) in Jacobian coordinates with Z = z: X = x·z², Y = y·z³.
    static func jacobian(_ math: P192Math, _ point: OpaquePointer, z: P192Field.Element) -> P192JacobianPoint {
        func element(_ value: OpaquePointer) -> P192Field.Element {
            math.bytes(value).withUnsafeBufferPointer { P192Field.element(bigEndian: $0) }
        }
        let zz = P192Field.square(z)
        return P192JacobianPoint(x: P192Field.multiply(element(math.x(point)), zz),
                                 y: P192Field.multiply(element(math.y(point)), P192Field.multiply(zz, z)), z: z)
    }

    /// r as the table's scalar code reads it (24 big-endian bytes).
    static func scalar(_ bytes: [UInt8]) -> P192Scalar.Element {
        bytes.withUnsafeBufferPointer { P192Scalar.number(bigEndian: $0, at: 0) }
    }

    @Test("R must be on the curve: an R whose x matches r but that is off the curve is rejected")
    func rOffTheCurveIsRejected() throws {
        let math = try #require(P192Math())
        var random = TestSeed.generator(for: "P192KeyTableTests.rOffTheCurveIsRejected", fixed: 0x192_0FF)
        for round in 0..<64 {
            let k = math.number(String(random.next() | 1, radix: 16) + String(random.next(), radix: 16))
            let point = math.multiplyG(k)
            let r = Self.scalar(math.bytes(math.mod(math.x(point), math.n)))
            let z: P192Field.Element = (random.next() | 1, random.next(), random.next() >> 1)
            let good = Self.jacobian(math, point, z: z)
            // libcrypto's point, at any Z: on the curve, and x(R) ≡ r, so accepted.
            #expect(good.isOnCurve, "round \(round)")
            #expect(P192KeyTable.accepts(r: r, good), "round \(round)")
            // −R has the same x: still accepted.
            var negated = good
            negated.y = P192Field.subtract(P192Field.zero, good.y)
            #expect(P192KeyTable.accepts(r: r, negated), "round \(round)")
            // Y changed: X still ≡ r·Z² (what the x check alone would accept), but R is off the curve.
            var faulty = good
            faulty.y = P192Field.add(good.y, P192Field.one)
            #expect(P192Field.equal(P192Field.multiply(r, P192Field.square(faulty.z)), faulty.x))
            #expect(!faulty.isOnCurve, "round \(round)")
            #expect(!P192KeyTable.accepts(r: r, faulty), "round \(round)")
            faulty = good
            faulty.y.1 ^= 1 << (random.next() % 64)
            #expect(!P192KeyTable.accepts(r: r, faulty), "round \(round)")
        }
        #expect(!P192JacobianPoint.infinity.isOnCurve)
        #expect(!P192KeyTable.accepts(r: P192Field.one, .infinity))
        // x(R) ≥ n: accepted with r = x(R) − n (the second branch), and not once Y is off the curve.
        let big = try #require(math.pointWithXAtLeastN())
        let rSmall = Self.scalar(math.bytes(math.sub(math.x(big), math.n)))
        let jacobianBig = Self.jacobian(math, big, z: (3, 5, 7))
        #expect(P192KeyTable.accepts(r: rSmall, jacobianBig))
        var faultyBig = jacobianBig
        faultyBig.y = P192Field.add(faultyBig.y, faultyBig.y)
        #expect(!P192KeyTable.accepts(r: rSmall, faultyBig))
    }

    @Test("The shared point formulas on P-192: the field inverse, the affine form and the full addition")
    func inverseAndFullAddition() throws {
        let math = try #require(P192Math())
        var random = TestSeed.generator(for: "P192KeyTableTests.inverseAndFullAddition", fixed: 0x192_1AF)
        #expect(P192Field.isZero(P192Field.inverse(P192Field.zero)))
        #expect(P192Field.equal(P192Field.inverse(P192Field.one), P192Field.one))
        for round in 0..<32 {
            let k = math.number(String(random.next() | 1, radix: 16) + String(random.next(), radix: 16))
            let point = math.multiplyG(k)
            let x = math.bytes(math.x(point)).withUnsafeBufferPointer { P192Field.element(bigEndian: $0) }
            let y = math.bytes(math.y(point)).withUnsafeBufferPointer { P192Field.element(bigEndian: $0) }
            let z: P192Field.Element = (random.next() | 1, random.next(), random.next() >> 1)
            #expect(P192Field.equal(P192Field.multiply(z, P192Field.inverse(z)), P192Field.one), "round \(round)")
            let jacobian = Self.jacobian(math, point, z: z)
            let affine = try #require(jacobian.affine)
            #expect(P192Field.equal(affine.x, x) && P192Field.equal(affine.y, y), "round \(round)")
            // P + P at two Zs through the full addition (its inversion) is the doubling.
            var sum = Self.jacobian(math, point, z: (3, 5, 7))
            sum.add(jacobian)
            var doubled = jacobian
            doubled.double()
            let sumAffine = try #require(sum.affine), doubledAffine = try #require(doubled.affine)
            #expect(P192Field.equal(sumAffine.x, doubledAffine.x) && P192Field.equal(sumAffine.y, doubledAffine.y),
                    "round \(round)")
        }
        #expect(P192JacobianPoint.infinity.affine == nil)
    }

    /// `minuend − value` for a 24-byte big-endian value (minuend in hex, larger).
    static func subtract(from minuend: String, _ value: ArraySlice<UInt8>) -> [UInt8] {
        let context = BN_CTX_new()
        defer { BN_CTX_free(context) }
        var left: OpaquePointer? = nil
        _ = BN_hex2bn(&left, minuend)
        let right = value.withContiguousStorageIfAvailable { BN_bin2bn($0.baseAddress, Int32($0.count), nil) }!
        defer { BN_free(left); BN_free(right) }
        _ = BN_sub(left, left, right)
        var out = [UInt8](repeating: 0, count: 24)
        _ = BN_bn2binpad(left, &out, 24)
        return out
    }
}

/// Builds P-192 edge cases with libcrypto's arithmetic: a known private scalar d, chosen nonces, chosen digests.
enum EdgeCases {
    static func make() throws -> [P192KeyTableTests.EdgeCase] {
        let math = try #require(P192Math())
        var cases: [P192KeyTableTests.EdgeCase] = []
        let d = math.number("1C0FFEE1C0FFEE1C0FFEE1C0FFEE1C0FFEE1C0FFEE1C0FFE")
        let key = math.publicKeyDER(math.multiplyG(d))
        func add(_ name: String, _ key: [UInt8], _ e: [UInt8], _ r: OpaquePointer, _ s: OpaquePointer, _ valid: Bool) {
            cases.append(.init(name: name, keyDER: key, digest: e, raw: math.bytes(r) + math.bytes(s), isValid: valid))
        }
        /// A signature of e (its first 24 bytes as a number) with nonce k.
        func sign(_ e: [UInt8], nonce: String) -> (r: OpaquePointer, s: OpaquePointer) {
            let k = math.number(nonce)
            let r = math.mod(math.x(math.multiplyG(k)), math.n)
            let s = math.mulMod(math.inverse(k), math.addMod(math.digestNumber(e), math.mulMod(r, d)))
            return (r, s)
        }
        let zero = [UInt8](repeating: 0, count: 32)
        let signed = sign(zero, nonce: "123456789ABCDEF")
        add("u1 = 0: digest 0, valid", key, zero, signed.r, signed.s, true)
        add("u1 = 0, high s (n - s), valid", key, zero, signed.r, math.subMod(math.n, signed.s), true)
        let nDigest = math.bytes(math.n) + [UInt8](repeating: 0xAB, count: 8)
        let signedN = sign(nDigest, nonce: "FEDCBA987654321")
        add("digest n (e = n, so u1 = 0), valid", key, nDigest, signedN.r, signedN.s, true)
        let ones = [UInt8](repeating: 0xFF, count: 32)
        let signedOnes = sign(ones, nonce: "31415926535897932384626")
        add("digest of all ones (e > n), valid", key, ones, signedOnes.r, signedOnes.s, true)
        // u1·G = u2·Q: e = r·d, so R = 2·u1·G (the addition's doubling case).
        let k = math.number("2718281828459045235360287")
        let r = math.mod(math.x(math.multiplyG(k)), math.n)
        let e = math.mulMod(r, d)
        let s = math.mulMod(math.inverse(k), math.addMod(e, math.mulMod(r, d)))
        add("u1·G = u2·Q (doubling), valid", key, math.bytes(e) + [UInt8](repeating: 0, count: 8), r, s, true)
        // u1·G = −u2·Q: e = −r·d, so R is the point at infinity.
        let minusE = math.subMod(math.n, math.mulMod(r, d))
        add("R at infinity, invalid", key, math.bytes(minusE) + [UInt8](repeating: 0, count: 8), r,
            math.number("1234567"), false)
        let digest = Array(repeating: UInt8(7), count: 32)
        let good = sign(digest, nonce: "55555555555555555555")
        add("a plain valid signature", key, digest, good.r, good.s, true)
        add("r = 0, invalid", key, digest, math.number("0"), good.s, false)
        add("s = 0, invalid", key, digest, good.r, math.number("0"), false)
        add("r = n, invalid", key, digest, math.n, good.s, false)
        add("s = n, invalid", key, digest, good.r, math.n, false)
        add("r = n - 1, invalid", key, digest, math.subMod(math.n, math.number("1")), good.s, false)
        add("s = n - 1, invalid", key, digest, good.r, math.subMod(math.n, math.number("1")), false)
        add("r + n (same x mod n, out of range), invalid", key, digest, math.add(good.r, math.n), good.s, false)
        // x(R) ≥ n: R chosen first (x in [n, p)), the key solved for: Q = u2⁻¹·(R − u1·G). Valid only with r = x − n.
        let bigX = try #require(math.pointWithXAtLeastN())
        let xr = math.x(bigX)
        let rSmall = math.sub(xr, math.n)
        let sChosen = math.number("ABCDEF0123456789ABCDEF")
        let eChosen = Array(repeating: UInt8(0x42), count: 32)
        let w = math.inverse(sChosen)
        let u1 = math.mulMod(math.digestNumber(eChosen), w)
        let u2 = math.mulMod(rSmall, w)
        let q = math.multiply(math.addPoints(bigX, math.negate(math.multiplyG(u1))), math.inverse(u2))
        let keyBig = math.publicKeyDER(q)
        add("x(R) ≥ n, r = x(R) − n, valid", keyBig, eChosen, rSmall, sChosen, true)
        add("x(R) ≥ n, r = x(R) (≥ n), invalid", keyBig, eChosen, xr, sChosen, false)
        return cases
    }
}

/// Just enough P-192 arithmetic for building edge cases; frees every number and point it made when released.
final class P192Math {
    let group: OpaquePointer
    let context: OpaquePointer
    let n: OpaquePointer
    let p: OpaquePointer
    private var numbers: [OpaquePointer] = []
    private var points: [OpaquePointer] = []

    deinit {
        (numbers + [n, p]).forEach { BN_free($0) }
        points.forEach { EC_POINT_free($0) }
        BN_CTX_free(context)
        EC_GROUP_free(group)
    }

    /// A new number, freed with this object.
    private func newNumber() -> OpaquePointer {
        let value = BN_new()!
        numbers.append(value)
        return value
    }

    /// A new point, freed with this object.
    private func keep(_ point: OpaquePointer) -> OpaquePointer {
        points.append(point)
        return point
    }

    init?() {
        guard let group = EC_GROUP_new_by_curve_name(NID_X9_62_prime192v1), let context = BN_CTX_new(),
              let n = BN_dup(EC_GROUP_get0_order(group)), let p = BN_new(),
              EC_GROUP_get_curve(group, p, nil, nil, context) == 1 else { return nil }
        (self.group, self.context, self.n, self.p) = (group, context, n, p)
    }

    func number(_ hex: String) -> OpaquePointer {
        var value: OpaquePointer? = nil
        _ = BN_hex2bn(&value, hex)
        numbers.append(value!)
        return value!
    }

    func bytes(_ value: OpaquePointer) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 24)
        _ = BN_bn2binpad(value, &out, 24)
        return out
    }

    /// e: the first 24 bytes of a 32-byte digest.
    func digestNumber(_ digest: [UInt8]) -> OpaquePointer { BN_bin2bn(digest, 24, newNumber())! }

    func mod(_ a: OpaquePointer, _ m: OpaquePointer) -> OpaquePointer {
        let out = newNumber()
        _ = BN_nnmod(out, a, m, context)
        return out
    }

    func mulMod(_ a: OpaquePointer, _ b: OpaquePointer) -> OpaquePointer {
        let out = newNumber()
        _ = BN_mod_mul(out, a, b, n, context)
        return out
    }

    func addMod(_ a: OpaquePointer, _ b: OpaquePointer) -> OpaquePointer {
        let out = newNumber()
        _ = BN_mod_add(out, a, b, n, context)
        return out
    }

    func subMod(_ a: OpaquePointer, _ b: OpaquePointer) -> OpaquePointer {
        let out = newNumber()
        _ = BN_mod_sub(out, a, b, n, context)
        return out
    }

    func add(_ a: OpaquePointer, _ b: OpaquePointer) -> OpaquePointer {
        let out = newNumber()
        _ = BN_add(out, a, b)
        return out
    }

    func sub(_ a: OpaquePointer, _ b: OpaquePointer) -> OpaquePointer {
        let out = newNumber()
        _ = BN_sub(out, a, b)
        return out
    }

    func inverse(_ a: OpaquePointer) -> OpaquePointer {
        let out = newNumber()
        _ = BN_mod_inverse(out, a, n, context)
        return out
    }

    func multiplyG(_ k: OpaquePointer) -> OpaquePointer {
        let point = keep(EC_POINT_new(group)!)
        _ = EC_POINT_mul(group, point, k, nil, nil, context)
        return point
    }

    func multiply(_ point: OpaquePointer, _ k: OpaquePointer) -> OpaquePointer {
        let out = keep(EC_POINT_new(group)!)
        _ = EC_POINT_mul(group, out, nil, point, k, context)
        return out
    }

    func addPoints(_ a: OpaquePointer, _ b: OpaquePointer) -> OpaquePointer {
        let out = keep(EC_POINT_new(group)!)
        _ = EC_POINT_add(group, out, a, b, context)
        return out
    }

    func negate(_ a: OpaquePointer) -> OpaquePointer {
        let out = keep(EC_POINT_dup(a, group)!)
        _ = EC_POINT_invert(group, out, context)
        return out
    }

    func x(_ point: OpaquePointer) -> OpaquePointer {
        let x = newNumber()
        _ = EC_POINT_get_affine_coordinates(group, point, x, nil, context)
        return x
    }

    /// The point's affine y.
    func y(_ point: OpaquePointer) -> OpaquePointer {
        let y = newNumber()
        _ = EC_POINT_get_affine_coordinates(group, point, nil, y, context)
        return y
    }

    /// A curve point whose x is more than n (x = n + 1, n + 2, ... until one is on the curve; x = n would make
    /// r = 0).
    func pointWithXAtLeastN() -> OpaquePointer? {
        let x = BN_dup(n)!
        numbers.append(x)
        _ = BN_add_word(x, 1)
        let point = keep(EC_POINT_new(group)!)
        for _ in 0..<1000 {
            if EC_POINT_set_compressed_coordinates(group, point, x, 0, context) == 1 { return point }
            ERR_clear_error()
            _ = BN_add_word(x, 1)
        }
        return nil
    }

    func publicKeyDER(_ point: OpaquePointer) -> [UInt8] {
        var encoded = [UInt8](repeating: 0, count: 49)
        _ = EC_POINT_point2oct(group, point, POINT_CONVERSION_UNCOMPRESSED, &encoded, 49, context)
        return ECPublicKey.Curve.p192.subjectPublicKeyInfoPrefix + encoded
    }
}
