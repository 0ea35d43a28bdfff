/// Arithmetic modulo P-256's group order n in four 64-bit limbs (least significant first), for the scalar steps
/// of ECDSA verification when R comes from tables (``P256BatchVerifier``): r and s read and range-checked, s⁻¹ for
/// a chunk with one inversion, u1 = e·s⁻¹ and u2 = r·s⁻¹. The limb-level half of ``ModularScalar`` (which holds
/// the range check, the reduction, the Montgomery form and the inverse for both curves): Montgomery multiplication
/// (a·b·2⁻²⁵⁶ mod n, word by word with −n⁻¹ mod 2⁶⁴) and comparisons with n. Public values only, so nothing here
/// is constant-time.
///
/// libcrypto's `BIGNUM` calls did these steps before, about a dozen per signature at several hundred
/// instructions each (allocation checks, lengths, dispatch); these are a few dozen instructions a step.
/// `ScalarTests` holds every operation to libcrypto's on random and edge values.
enum P256Scalar: ModularScalar {
    typealias Element = P256Field.Element
    private typealias F = P256Field

    /// n, limbs least significant first.
    static let order: Element = (0xF3B9_CAC2_FC63_2551, 0xBCE6_FAAD_A717_9E84, 0xFFFF_FFFF_FFFF_FFFF,
                                 0xFFFF_FFFF_0000_0000)
    /// −n⁻¹ mod 2⁶⁴: a reduction step's multiplier is the low limb times it.
    private static let orderInverseNegated: UInt64 = 0xCCD1_C8AA_EE00_BC4F
    /// 2²⁵⁶ mod n: 1 in Montgomery form.
    static let one: Element = (0x0C46_353D_039C_DAAF, 0x4319_0552_58E8_617B, 0, 0x0000_0000_FFFF_FFFF)
    /// 2⁵¹² mod n: a Montgomery product with it puts a plain number into Montgomery form.
    static let montgomerySquare: Element = (0x8324_4C95_BE79_EEA2, 0x4699_799C_49BD_6FA6,
                                            0x2845_B239_2B6B_EC59, 0x66E1_2D94_F3D9_5620)

    /// Limbs in an element.
    static let limbCount = 4

    /// Limb `index` of `a`, 0 the least significant.
    @inline(__always)
    static func limb(_ a: Element, _ index: Int) -> UInt64 {
        switch index {
        case 0: a.0
        case 1: a.1
        case 2: a.2
        default: a.3
        }
    }

    /// Whether a = 0.
    @inline(__always)
    static func isZero(_ a: Element) -> Bool { F.isZero(a) }

    /// a + n as a number below 2²⁵⁷: its limbs and the carry out of the top one.
    static func addingOrder(_ a: Element) -> (sum: Element, carry: UInt64) {
        var carry: UInt64 = 0
        let sum: Element = (F.adc(a.0, order.0, &carry), F.adc(a.1, order.1, &carry), F.adc(a.2, order.2, &carry),
                            F.adc(a.3, order.3, &carry))
        return (sum, carry)
    }

    /// a − b mod n, for a and b below n.
    static func subtract(_ a: Element, _ b: Element) -> Element {
        var borrow: UInt64 = 0
        let difference: Element = (F.sbb(a.0, b.0, &borrow), F.sbb(a.1, b.1, &borrow), F.sbb(a.2, b.2, &borrow),
                                   F.sbb(a.3, b.3, &borrow))
        guard borrow != 0 else { return difference }
        return addingOrder(difference).sum
    }

    /// The Montgomery product a·b·2⁻²⁵⁶ mod n, for a, b < n: with b in Montgomery form and a plain, the plain
    /// product a·b mod n.
    static func multiply(_ a: Element, _ b: Element) -> Element {
        var t: (UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0)
        /// t += a·word, then t = (t + m·n) / 2⁶⁴ with m making the low limb vanish; t stays below 2n.
        @inline(__always)
        func step(_ word: UInt64) {
            var carry: UInt64 = 0
            var top: UInt64 = 0
            (t.0, carry) = F.multiplyAdd(a.0, word, t.0, 0)
            (t.1, carry) = F.multiplyAdd(a.1, word, t.1, carry)
            (t.2, carry) = F.multiplyAdd(a.2, word, t.2, carry)
            (t.3, carry) = F.multiplyAdd(a.3, word, t.3, carry)
            t.4 = F.adc(t.4, carry, &top)
            let m = t.0 &* orderInverseNegated
            (_, carry) = F.multiplyAdd(m, order.0, t.0, 0)
            (t.0, carry) = F.multiplyAdd(m, order.1, t.1, carry)
            (t.1, carry) = F.multiplyAdd(m, order.2, t.2, carry)
            (t.2, carry) = F.multiplyAdd(m, order.3, t.3, carry)
            var carryOut: UInt64 = 0
            t.3 = F.adc(t.4, carry, &carryOut)
            t.4 = top &+ carryOut
        }
        step(b.0)
        step(b.1)
        step(b.2)
        step(b.3)
        let result: Element = (t.0, t.1, t.2, t.3)
        return t.4 != 0 || !isLessThanOrder(result) ? subtractOrder(result) : result
    }

    /// a < n.
    static func isLessThanOrder(_ a: Element) -> Bool {
        var borrow: UInt64 = 0
        _ = F.sbb(a.0, order.0, &borrow)
        _ = F.sbb(a.1, order.1, &borrow)
        _ = F.sbb(a.2, order.2, &borrow)
        _ = F.sbb(a.3, order.3, &borrow)
        return borrow != 0
    }

    /// a − n (mod 2²⁵⁶).
    static func subtractOrder(_ a: Element) -> Element {
        var borrow: UInt64 = 0
        return (F.sbb(a.0, order.0, &borrow), F.sbb(a.1, order.1, &borrow), F.sbb(a.2, order.2, &borrow),
                F.sbb(a.3, order.3, &borrow))
    }
}
