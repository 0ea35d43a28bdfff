import CAttributionOpenSSL
import Foundation
import Testing

@testable import Attribution

/// Arithmetic modulo P-256's order n on fixed limbs (``P256Scalar``), held to libcrypto's `BIGNUM` arithmetic on
/// edge values (0, 1, n − 1, n, n + 1, 2²⁵⁶ − 1, values with one word set) and on random ones. Every expected value
/// comes from libcrypto.
@Suite("P-256 scalars modulo n")
struct P256ScalarTests {
    typealias Reference = ScalarReference<P256Limbs>

    static let n = P256Scalar.order
    /// Edge values: 0, 1, 2, n − 1, n, n + 1, 2²⁵⁶ − 1, one word set, and n's words with the top one's half.
    static let edges: [P256Scalar.Element] = [
        (0, 0, 0, 0), (1, 0, 0, 0), (2, 0, 0, 0), (n.0 - 1, n.1, n.2, n.3), n, (n.0 + 1, n.1, n.2, n.3),
        (.max, .max, .max, .max), (0, 1, 0, 0), (0, 0, 1, 0), (0, 0, 0, 1), (.max, 0, 0, 0), (0, 0, 0, .max),
        (n.0, n.1, n.2, 0), (0, 0, 0, n.3 >> 1),
    ]

    /// A random number below 2²⁵⁶.
    static func random(using generator: inout some RandomNumberGenerator) -> P256Scalar.Element {
        (.random(in: 0 ... .max, using: &generator), .random(in: 0 ... .max, using: &generator),
         .random(in: 0 ... .max, using: &generator), .random(in: 0 ... .max, using: &generator))
    }

    /// A random number below n (reduced once: 2²⁵⁶ < 2n).
    static func randomBelowOrder(using generator: inout some RandomNumberGenerator) -> P256Scalar.Element {
        P256Scalar.reduced(random(using: &generator))
    }

    static func equal(_ a: P256Scalar.Element?, _ b: P256Scalar.Element?) -> Bool {
        guard let a, let b else { return false }
        return P256Field.equal(a, b)
    }

    /// The plain value of a number in Montgomery form.
    static func plain(_ a: P256Scalar.Element) -> P256Scalar.Element {
        P256Scalar.multiply(a, (1, 0, 0, 0))
    }

    @Test("Reduction, range and r + n of edge and random values agree with libcrypto")
    func reductionAndRange() throws {
        let reference = try Reference()
        var generator = SystemRandomNumberGenerator()
        for value in Self.edges + (0..<2000).map({ _ in Self.random(using: &generator) }) {
            #expect(Self.equal(P256Scalar.reduced(value), reference.mod(value)), "\(value)")
            let inRange = !P256Field.isZero(value) && reference.mod(value).map { P256Field.equal($0, value) } == true
            #expect(P256Scalar.isInRange(value) == inRange, "\(value)")
            // r + n: the same 257-bit number libcrypto adds up (its low 256 bits, and whether it has a 257th).
            let sum = P256Scalar.addingOrder(value)
            var overflows = false
            let expected = reference.compute([value, Self.n]) { numbers, result in
                guard BN_add(result, numbers[0], numbers[1]) == 1 else { return 0 }
                overflows = BN_num_bits(result) > 256
                return overflows ? BN_mask_bits(result, 256) : 1
            }
            #expect(sum.carry == (overflows ? 1 : 0), "\(value)")
            #expect(Self.equal(sum.sum, expected), "\(value)")
        }
    }

    @Test("Montgomery products and forms: a·b mod n as libcrypto computes it, for edge and random a, b below n")
    func products() throws {
        let reference = try Reference()
        var generator = SystemRandomNumberGenerator()
        let below = Self.edges.map(P256Scalar.reduced)
        let values = below + (0..<300).map { _ in Self.randomBelowOrder(using: &generator) }
        for a in values {
            #expect(Self.equal(Self.plain(P256Scalar.montgomery(a)), a), "\(a)")
            for b in values.prefix(40) {
                let product = Self.plain(P256Scalar.multiply(P256Scalar.montgomery(a), P256Scalar.montgomery(b)))
                #expect(Self.equal(product, reference.modMul(a, b)), "\(a) \(b)")
                // A plain number times one in Montgomery form: the plain product (how u1 and u2 are made).
                #expect(Self.equal(P256Scalar.multiply(a, P256Scalar.montgomery(b)), reference.modMul(a, b)))
            }
        }
    }

    @Test("Inverses: s⁻¹ mod n as libcrypto's BN_mod_inverse computes it, for edge and random s in 1 … n − 1")
    func inverses() throws {
        let reference = try Reference()
        var generator = SystemRandomNumberGenerator()
        let values = Self.edges.map(P256Scalar.reduced).filter { !P256Field.isZero($0) }
            + (0..<200).map { _ in Self.randomBelowOrder(using: &generator) }
        for s in values where !P256Field.isZero(s) {
            let inverse = Self.plain(P256Scalar.inverse(P256Scalar.montgomery(s)))
            #expect(Self.equal(inverse, reference.modInverse(s)), "\(s)")
        }
    }
}
