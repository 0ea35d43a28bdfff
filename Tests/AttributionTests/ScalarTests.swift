import CAttributionOpenSSL
import Testing

@_spi(CommandLine) @_spi(Servers) @_spi(Stores) @testable import Attribution

/// Arithmetic modulo the group order n of P-256 (``P256Scalar``) and of P-192 (``P192Scalar``) on fixed limbs, held to
/// libcrypto's `BIGNUM` arithmetic on edge values (0, 1, 2, n − 1, n, n + 1, all ones, values with one word set) and
/// on random ones (``ScalarChecks``). Every expected value comes from libcrypto, n from libcrypto's own curve. The
/// random values are new on every run, from a printed seed (``TestSeed``): `POSTBACK_VERIFY_TEST_SEED` replays one.
@Suite("Scalars modulo n (P-256, P-192)")
struct ScalarTests {
    enum Curve: String, CaseIterable, CustomTestStringConvertible {
        case p256 = "P-256"
        case p192 = "P-192"

        var limbs: any ScalarLimbs.Type {
            switch self {
            case .p256: P256Limbs.self
            case .p192: P192Limbs.self
            }
        }

        var testDescription: String { rawValue }
    }

    @Test("Reduction, range and r + n of edge and random values agree with libcrypto", arguments: Curve.allCases)
    func reductionAndRange(_ curve: Curve) throws {
        try run(.reductionAndRange, on: curve.limbs)
    }

    @Test("Montgomery products and forms: a·b mod n as libcrypto computes it, for edge and random a, b below n",
          arguments: Curve.allCases)
    func products(_ curve: Curve) throws {
        try run(.products, on: curve.limbs)
    }

    @Test("Inverses: s⁻¹ mod n as libcrypto's BN_mod_inverse computes it, for edge and random s in 1 … n − 1",
          arguments: Curve.allCases)
    func inverses(_ curve: Curve) throws {
        try run(.inverses, on: curve.limbs)
    }

    @Test("P-192's 24 big-endian bytes round-trip, and libcrypto reads the same number")
    func p192BytesRoundTrip() throws {
        let reference = try ScalarReference<P192Limbs>()
        var generator = TestSeed.generator(for: "ScalarTests.p192BytesRoundTrip")
        for value in P192Limbs.edges + (0..<200).map({ _ in P192Limbs.random(using: &generator) }) {
            #expect(P192Limbs.equal(P192Limbs.limbs(P192Limbs.bytes(value)), value))
            // libcrypto's number of those bytes, written back, is the same value: the byte order is big-endian.
            #expect(ScalarChecks<P192Limbs>.equal(reference.compute([value]) { numbers, result in
                BN_copy(result, numbers[0]) != nil ? 1 : 0
            }, value))
        }
        #expect(P192Limbs.bytes((0x0102, 0, 0x0A0B_0C0D_0E0F_1011)).prefix(8) == [0x0A, 0x0B, 0x0C, 0x0D, 0x0E, 0x0F,
                                                                                0x10, 0x11])
    }
}
