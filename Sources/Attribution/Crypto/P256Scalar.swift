/// Arithmetic modulo P-256's group order n in four 64-bit limbs (least significant first), for the scalar steps
/// of ECDSA verification when R comes from tables (``P256BatchVerifier``): r and s read and range-checked, s⁻¹ for
/// a chunk with one inversion, u1 = e·s⁻¹ and u2 = r·s⁻¹. Montgomery multiplication (a·b·2⁻²⁵⁶ mod n, word by word
/// with −n⁻¹ mod 2⁶⁴), inversion by Fermat's little theorem. Public values only, so nothing here is constant-time.
///
/// libcrypto's `BIGNUM` calls did these steps before, about a dozen per signature at several hundred
/// instructions each (allocation checks, lengths, dispatch); these are a few dozen instructions a step.
/// `ScalarTests` holds every operation to libcrypto's on random and edge values.
enum P256Scalar {
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
    private static let montgomerySquare: Element = (0x8324_4C95_BE79_EEA2, 0x4699_799C_49BD_6FA6,
                                                    0x2845_B239_2B6B_EC59, 0x66E1_2D94_F3D9_5620)

    /// 1 ≤ a ≤ n − 1: a valid r or s.
    static func isInRange(_ a: Element) -> Bool {
        !F.isZero(a) && isLessThanOrder(a)
    }

    /// a mod n for any a below 2²⁵⁶ (less than 2n: one subtraction at most), e.g. a digest as an integer.
    static func reduced(_ a: Element) -> Element {
        isLessThanOrder(a) ? a : subtractOrder(a)
    }

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

    /// a in Montgomery form (a·2²⁵⁶ mod n), for a < n.
    static func montgomery(_ a: Element) -> Element {
        multiply(a, montgomerySquare)
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

    /// a⁻¹ in Montgomery form for a ≠ 0 in Montgomery form: a^(n − 2) (Fermat), by 4-bit windows of n − 2 from the
    /// top (a table of a¹ … a¹⁵): 252 squarings and at most 64 multiplications.
    static func inverse(_ a: Element) -> Element {
        var powers = [Element](repeating: one, count: 16)
        for k in 1..<16 { powers[k] = multiply(powers[k - 1], a) }
        let exponent: Element = (order.0 &- 2, order.1, order.2, order.3)
        let limbs = [exponent.0, exponent.1, exponent.2, exponent.3]
        var result = one
        for window in (0..<64).reversed() {
            if window != 63 {
                for _ in 0..<4 { result = multiply(result, result) }
            }
            let digit = Int(limbs[window / 16] >> UInt64(4 * (window % 16)) & 0xF)
            if digit != 0 { result = multiply(result, powers[digit]) }
        }
        return result
    }

    /// a < n.
    private static func isLessThanOrder(_ a: Element) -> Bool {
        var borrow: UInt64 = 0
        _ = F.sbb(a.0, order.0, &borrow)
        _ = F.sbb(a.1, order.1, &borrow)
        _ = F.sbb(a.2, order.2, &borrow)
        _ = F.sbb(a.3, order.3, &borrow)
        return borrow != 0
    }

    /// a − n (mod 2²⁵⁶).
    private static func subtractOrder(_ a: Element) -> Element {
        var borrow: UInt64 = 0
        return (F.sbb(a.0, order.0, &borrow), F.sbb(a.1, order.1, &borrow), F.sbb(a.2, order.2, &borrow),
                F.sbb(a.3, order.3, &borrow))
    }
}
