/// Arithmetic modulo P-192's group order n in three 64-bit limbs (least significant first), for the scalar steps of
/// a P-192 verification from tables (``P192KeyTable``): r and s read and range-checked, s⁻¹, u1 = e·s⁻¹ and
/// u2 = r·s⁻¹. Montgomery multiplication (a·b·2⁻¹⁹² mod n, word by word with −n⁻¹ mod 2⁶⁴), inversion by
/// Fermat's little theorem. The limb-level half of ``ModularScalar`` (which holds the range check, the reduction, the
/// Montgomery form and the inverse for both curves): the Montgomery product is written out apart from
/// ``P256Scalar``'s on purpose, as fixed tuples of three and four limbs keep every step in registers, which a loop
/// over a limb count shared by both would not. Public values only, so nothing here is constant-time.
///
/// libcrypto's `BIGNUM` calls did these steps before: a `BN_CTX` per signature, `BN_mod_exp_mont` for s⁻¹ (~40k
/// instructions) and two `BN_mod_mul`s; a forged SKAdNetwork 1.0 or 2.0 postback, which anyone can send, paid them
/// all. `ScalarTests` holds every operation to libcrypto's on random and edge values.
enum P192Scalar: ModularScalar {
    typealias Element = P192Field.Element
    private typealias F = P256Field

    /// n, limbs least significant first.
    static let order: Element = (0x146B_C9B1_B4D2_2831, 0xFFFF_FFFF_99DE_F836, 0xFFFF_FFFF_FFFF_FFFF)
    /// −n⁻¹ mod 2⁶⁴: a reduction step's multiplier is the low limb times it.
    private static let orderInverseNegated: UInt64 = 0x8826_7207_0DDB_CF2F
    /// 2¹⁹² mod n: 1 in Montgomery form.
    static let one: Element = (0xEB94_364E_4B2D_D7CF, 0x0000_0000_6621_07C9, 0)
    /// 2³⁸⁴ mod n: a Montgomery product with it puts a plain number into Montgomery form.
    static let montgomerySquare: Element = (0xCE66_BACC_DEB3_5961, 0x4696_EA5B_BB3A_6BEE,
                                            0x28BE_5677_EA05_81A2)

    /// The number (below 2¹⁹²) of the 24 big-endian bytes from `offset` of `bytes`; the bounds are checked in every
    /// build.
    static func number(bigEndian bytes: UnsafeBufferPointer<UInt8>, at offset: Int) -> Element {
        precondition(offset >= 0 && offset <= bytes.count - 24, "P192Scalar: 24 bytes out of bounds")
        func limb(_ start: Int) -> UInt64 {
            (0..<8).reduce(UInt64(0)) { $0 << 8 | UInt64(bytes[start + $1]) }
        }
        return (limb(offset + 16), limb(offset + 8), limb(offset))
    }

    /// Limbs in an element.
    static let limbCount = 3

    /// Limb `index` of `a`, 0 the least significant.
    @inline(__always)
    static func limb(_ a: Element, _ index: Int) -> UInt64 {
        switch index {
        case 0: a.0
        case 1: a.1
        default: a.2
        }
    }

    /// Whether a = 0.
    @inline(__always)
    static func isZero(_ a: Element) -> Bool { a.0 | a.1 | a.2 == 0 }

    /// a + n as a number below 2¹⁹³: its limbs and the carry out of the top one.
    static func addingOrder(_ a: Element) -> (sum: Element, carry: UInt64) {
        var carry: UInt64 = 0
        let sum: Element = (F.adc(a.0, order.0, &carry), F.adc(a.1, order.1, &carry), F.adc(a.2, order.2, &carry))
        return (sum, carry)
    }

    /// The Montgomery product a·b·2⁻¹⁹² mod n, for a, b < n: with b in Montgomery form and a plain, the plain
    /// product a·b mod n.
    static func multiply(_ a: Element, _ b: Element) -> Element {
        var t: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        /// t += a·word, then t = (t + m·n) / 2⁶⁴ with m making the low limb vanish; t stays below 2n.
        @inline(__always)
        func step(_ word: UInt64) {
            var carry: UInt64 = 0
            var top: UInt64 = 0
            (t.0, carry) = F.multiplyAdd(a.0, word, t.0, 0)
            (t.1, carry) = F.multiplyAdd(a.1, word, t.1, carry)
            (t.2, carry) = F.multiplyAdd(a.2, word, t.2, carry)
            t.3 = F.adc(t.3, carry, &top)
            let m = t.0 &* orderInverseNegated
            (_, carry) = F.multiplyAdd(m, order.0, t.0, 0)
            (t.0, carry) = F.multiplyAdd(m, order.1, t.1, carry)
            (t.1, carry) = F.multiplyAdd(m, order.2, t.2, carry)
            var carryOut: UInt64 = 0
            t.2 = F.adc(t.3, carry, &carryOut)
            t.3 = top &+ carryOut
        }
        step(b.0)
        step(b.1)
        step(b.2)
        let result: Element = (t.0, t.1, t.2)
        return t.3 != 0 || !isLessThanOrder(result) ? subtractOrder(result) : result
    }

    /// a < n.
    static func isLessThanOrder(_ a: Element) -> Bool {
        var borrow: UInt64 = 0
        _ = F.sbb(a.0, order.0, &borrow)
        _ = F.sbb(a.1, order.1, &borrow)
        _ = F.sbb(a.2, order.2, &borrow)
        return borrow != 0
    }

    /// a − n (mod 2¹⁹²).
    static func subtractOrder(_ a: Element) -> Element {
        var borrow: UInt64 = 0
        return (F.sbb(a.0, order.0, &borrow), F.sbb(a.1, order.1, &borrow), F.sbb(a.2, order.2, &borrow))
    }
}
