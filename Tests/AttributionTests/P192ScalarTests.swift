import CAttributionOpenSSL
import Foundation
import Testing

@testable import Attribution

/// Arithmetic modulo P-192's order n on fixed limbs (``P192Scalar``), held to libcrypto's `BIGNUM` arithmetic on
/// edge values (0, 1, n − 1, n, n + 1, 2¹⁹² − 1, values with one word set) and on random ones. Every expected value
/// comes from libcrypto, n from libcrypto's own curve.
@Suite("P-192 scalars modulo n")
struct P192ScalarTests {
    typealias Reference = ScalarReference<P192Limbs>

    static let n = P192Scalar.order
    /// Edge values: 0, 1, 2, n − 1, n, n + 1, 2¹⁹² − 1, one word set, and n's words with the top one's half.
    static let edges: [P192Scalar.Element] = [
        (0, 0, 0), (1, 0, 0), (2, 0, 0), (n.0 - 1, n.1, n.2), n, (n.0 + 1, n.1, n.2), (.max, .max, .max),
        (0, 1, 0), (0, 0, 1), (.max, 0, 0), (0, 0, .max), (n.0, n.1, 0), (0, 0, n.2 >> 1),
    ]

    static func random(using generator: inout some RandomNumberGenerator) -> P192Scalar.Element {
        (.random(in: 0 ... .max, using: &generator), .random(in: 0 ... .max, using: &generator),
         .random(in: 0 ... .max, using: &generator))
    }

    static func equal(_ a: P192Scalar.Element?, _ b: P192Scalar.Element?) -> Bool {
        guard let a, let b else { return false }
        return P192Field.equal(a, b)
    }

    /// The plain value of a number in Montgomery form.
    static func plain(_ a: P192Scalar.Element) -> P192Scalar.Element {
        P192Scalar.multiply(a, (1, 0, 0))
    }

    @Test("Reading and writing 24 big-endian bytes round-trip, and libcrypto reads the same number")
    func bytesRoundTrip() throws {
        let reference = try Reference()
        var generator = SystemRandomNumberGenerator()
        for value in Self.edges + (0..<200).map({ _ in Self.random(using: &generator) }) {
            #expect(Self.equal(P192Limbs.limbs(P192Limbs.bytes(value)), value))
            // libcrypto's number of those bytes, written back, is the same value: the byte order is big-endian.
            #expect(Self.equal(reference.compute([value]) { numbers, result in
                BN_copy(result, numbers[0]) != nil ? 1 : 0
            }, value))
        }
        #expect(P192Limbs.bytes((0x0102, 0, 0x0A0B_0C0D_0E0F_1011)).prefix(8) == [0x0A, 0x0B, 0x0C, 0x0D, 0x0E,
                                                                                0x0F, 0x10, 0x11])
    }

    @Test("Reduction, range and r + n of edge and random values agree with libcrypto")
    func reductionAndRange() throws {
        let reference = try Reference()
        var generator = SystemRandomNumberGenerator()
        for value in Self.edges + (0..<2000).map({ _ in Self.random(using: &generator) }) {
            #expect(Self.equal(P192Scalar.reduced(value), reference.mod(value)), "\(value)")
            let isZero = value.0 | value.1 | value.2 == 0
            let inRange = !isZero && reference.mod(value).map { P192Field.equal($0, value) } == true
            #expect(P192Scalar.isInRange(value) == inRange, "\(value)")
            let sum = P192Scalar.addingOrder(value)
            var overflows = false
            let expected = reference.compute([value, Self.n]) { numbers, result in
                guard BN_add(result, numbers[0], numbers[1]) == 1 else { return 0 }
                overflows = BN_num_bits(result) > 192
                return overflows ? BN_mask_bits(result, 192) : 1
            }
            #expect(sum.carry == (overflows ? 1 : 0), "\(value)")
            #expect(Self.equal(sum.sum, expected), "\(value)")
        }
    }

    @Test("Montgomery products and forms: a·b mod n as libcrypto computes it, for edge and random a, b below n")
    func products() throws {
        let reference = try Reference()
        var generator = SystemRandomNumberGenerator()
        let values = Self.edges.map(P192Scalar.reduced)
            + (0..<300).map { _ in P192Scalar.reduced(Self.random(using: &generator)) }
        for a in values {
            #expect(Self.equal(Self.plain(P192Scalar.montgomery(a)), a), "\(a)")
            for b in values.prefix(40) {
                let product = Self.plain(P192Scalar.multiply(P192Scalar.montgomery(a), P192Scalar.montgomery(b)))
                #expect(Self.equal(product, reference.modMul(a, b)), "\(a) \(b)")
                #expect(Self.equal(P192Scalar.multiply(a, P192Scalar.montgomery(b)), reference.modMul(a, b)))
            }
        }
    }

    @Test("Inverses: s⁻¹ mod n as libcrypto's BN_mod_inverse computes it, for edge and random s in 1 … n − 1")
    func inverses() throws {
        let reference = try Reference()
        var generator = SystemRandomNumberGenerator()
        let values = Self.edges.map(P192Scalar.reduced) + (0..<200).map { _ in
            P192Scalar.reduced(Self.random(using: &generator))
        }
        for s in values where s.0 | s.1 | s.2 != 0 {
            let inverse = Self.plain(P192Scalar.inverse(P192Scalar.montgomery(s)))
            #expect(Self.equal(inverse, reference.modInverse(s)), "\(s)")
        }
    }
}
