/// The field of NIST P-192 (y² = x³ − 3x + b over p = 2¹⁹² − 2⁶⁴ − 1) in three 64-bit limbs, the limb-level half
/// of ``P192KeyTable``'s sums of precomputed points (the point formulas are ``JacobianPoint``'s, shared with
/// P-256): field addition, subtraction, multiplication with the prime's fast reduction (FIPS 186-4 §D.2.1;
/// Hankerson, Menezes and Vanstone, "Guide to Elliptic Curve Cryptography", algorithm 2.27), inversion by
/// Fermat's little theorem.
///
/// libcrypto treats P-192 as a generic curve: each `EC_POINT_add` goes through `BIGNUM`s, a `BN_CTX` and
/// several checks, about ten times the work of the same formulas on fixed-size limbs. Only public values go
/// through here (signatures, digests, public keys), so nothing needs to be constant-time. The results are held to
/// `EVP_PKEY_verify` by `P192KeyTableTests` (random, bit-flipped and constructed edge-case signatures, among them
/// the doubling and point-at-infinity cases of the addition).
enum P192Field: CurveField {
    /// A field element, fully reduced (less than p), limbs least significant first.
    typealias Element = (UInt64, UInt64, UInt64)

    static let zero: Element = (0, 0, 0)
    static let one: Element = (1, 0, 0)
    /// The curve's b (FIPS 186-4 §D.1.2.1), a plain element: this field has no Montgomery form.
    static let b: Element = (0xFEB8_DEEC_C146_B9B1, 0x0FA7_E9AB_7224_3049, 0x6421_0519_E59C_80E7)
    /// Limbs in an element.
    static let limbCount = 3

    /// The element from 24 big-endian bytes (a value below p). The length is checked in every build: a buffer
    /// pointer's subscript is checked in debug builds only.
    static func element(bigEndian bytes: UnsafeBufferPointer<UInt8>) -> Element {
        precondition(bytes.count == 24, "P192Field element of other than 24 bytes")
        return P192Scalar.number(bigEndian: bytes, at: 0)
    }

    /// The element held in `limbs[0 ..< 3]`, least significant first.
    @inline(__always)
    static func element(limbs: UnsafePointer<UInt64>) -> Element { (limbs[0], limbs[1], limbs[2]) }

    @inline(__always)
    static func isZero(_ a: Element) -> Bool { a.0 | a.1 | a.2 == 0 }

    @inline(__always)
    static func equal(_ a: Element, _ b: Element) -> Bool { a.0 == b.0 && a.1 == b.1 && a.2 == b.2 }

    /// x + y + carry, the carry out in `carry`.
    @inline(__always)
    private static func adc(_ x: UInt64, _ y: UInt64, _ carry: inout UInt64) -> UInt64 {
        LimbArithmetic.addWithCarry(x, y, &carry)
    }

    /// x − y − borrow, the borrow out in `borrow`.
    @inline(__always)
    private static func sbb(_ x: UInt64, _ y: UInt64, _ borrow: inout UInt64) -> UInt64 {
        LimbArithmetic.subtractWithBorrow(x, y, &borrow)
    }

    /// True when a (less than 2¹⁹²) is at least p.
    @inline(__always)
    private static func isAtLeastP(_ a: Element) -> Bool {
        a.2 == .max && (a.1 == .max || (a.1 == .max - 1 && a.0 == .max))
    }

    /// True when a (less than 2¹⁹²) is a field element: less than p.
    static func isLessThanP(_ a: Element) -> Bool { !isAtLeastP(a) }

    /// a + 2⁶⁴ + 1 (mod 2¹⁹²): a − p when a ≥ p, or a + 2¹⁹² − p when 2¹⁹² was carried out of a sum.
    @inline(__always)
    private static func addComplement(_ a: Element) -> Element {
        var carry: UInt64 = 0
        let r0 = adc(a.0, 1, &carry)
        let r1 = adc(a.1, 1, &carry)
        let r2 = adc(a.2, 0, &carry)
        return (r0, r1, r2)
    }

    @inline(__always)
    static func add(_ a: Element, _ b: Element) -> Element {
        var carry: UInt64 = 0
        let s: Element = (adc(a.0, b.0, &carry), adc(a.1, b.1, &carry), adc(a.2, b.2, &carry))
        return carry != 0 || isAtLeastP(s) ? addComplement(s) : s
    }

    @inline(__always)
    static func subtract(_ a: Element, _ b: Element) -> Element {
        var borrow: UInt64 = 0
        let d: Element = (sbb(a.0, b.0, &borrow), sbb(a.1, b.1, &borrow), sbb(a.2, b.2, &borrow))
        guard borrow != 0 else { return d }
        // d + p (mod 2¹⁹²) = d − 2⁶⁴ − 1.
        var back: UInt64 = 0
        return (sbb(d.0, 1, &back), sbb(d.1, 1, &back), sbb(d.2, 0, &back))
    }

    /// x·y as two limbs. `UInt128` where the standard library has it on every OS version (Linux): there it
    /// compiles to one `mul`, while `multipliedFullWidth(by:)` is an out-of-line call.
    @inline(__always)
    private static func wideProduct(_ x: UInt64, _ y: UInt64) -> (high: UInt64, low: UInt64) {
        LimbArithmetic.wideProduct(x, y)
    }

    /// lo:mid:hi += x·y (a three-limb column accumulator).
    @inline(__always)
    private static func multiplyAdd(_ x: UInt64, _ y: UInt64, _ lo: inout UInt64, _ mid: inout UInt64,
                                    _ hi: inout UInt64) {
        let (high, low) = wideProduct(x, y)
        var carry: UInt64 = 0
        lo = adc(lo, low, &carry)
        mid = adc(mid, high, &carry)
        hi &+= carry
    }

    @inline(__always)
    static func multiply(_ a: Element, _ b: Element) -> Element {
        var lo: UInt64 = 0, mid: UInt64 = 0, hi: UInt64 = 0
        multiplyAdd(a.0, b.0, &lo, &mid, &hi)
        let c0 = lo
        (lo, mid, hi) = (mid, hi, 0)
        multiplyAdd(a.0, b.1, &lo, &mid, &hi)
        multiplyAdd(a.1, b.0, &lo, &mid, &hi)
        let c1 = lo
        (lo, mid, hi) = (mid, hi, 0)
        multiplyAdd(a.0, b.2, &lo, &mid, &hi)
        multiplyAdd(a.1, b.1, &lo, &mid, &hi)
        multiplyAdd(a.2, b.0, &lo, &mid, &hi)
        let c2 = lo
        (lo, mid, hi) = (mid, hi, 0)
        multiplyAdd(a.1, b.2, &lo, &mid, &hi)
        multiplyAdd(a.2, b.1, &lo, &mid, &hi)
        let c3 = lo
        (lo, mid, hi) = (mid, hi, 0)
        multiplyAdd(a.2, b.2, &lo, &mid, &hi)
        return reduce(c0, c1, c2, c3, lo, mid)
    }

    @inline(__always)
    static func square(_ a: Element) -> Element { multiply(a, a) }

    /// c mod p for c = c5·2³²⁰ + … + c0 (less than p²): with 2¹⁹² ≡ 2⁶⁴ + 1, c ≡ (c2, c1, c0) + (0, c3, c3) +
    /// (c4, c4, 0) + (c5, c5, c5), each written (high, middle, low).
    @inline(__always)
    private static func reduce(_ c0: UInt64, _ c1: UInt64, _ c2: UInt64, _ c3: UInt64, _ c4: UInt64,
                               _ c5: UInt64) -> Element {
        var top: UInt64 = 0
        var carry: UInt64 = 0
        var r0 = adc(c0, c3, &carry)
        var r1 = adc(c1, c3, &carry)
        var r2 = adc(c2, 0, &carry)
        top &+= carry
        carry = 0
        r1 = adc(r1, c4, &carry)
        r2 = adc(r2, c4, &carry)
        top &+= carry
        carry = 0
        r0 = adc(r0, c5, &carry)
        r1 = adc(r1, c5, &carry)
        r2 = adc(r2, c5, &carry)
        top &+= carry
        // top·2¹⁹² ≡ top·(2⁶⁴ + 1): fold until nothing is carried out (twice at most).
        while top != 0 {
            carry = 0
            r0 = adc(r0, top, &carry)
            r1 = adc(r1, top, &carry)
            r2 = adc(r2, 0, &carry)
            top = carry
        }
        let r: Element = (r0, r1, r2)
        return isAtLeastP(r) ? addComplement(r) : r
    }

    /// a⁻¹ = a^(p − 2) (Fermat), for a ≠ 0; 0 for 0. An addition chain over p − 2's runs of ones (from the top:
    /// 127 ones, a zero, 62 ones, a zero, a one): 221 squarings, 18 multiplications.
    static func inverse(_ a: Element) -> Element {
        /// x^(2^k)·y (``CurveField/squarings(_:_:times:)``).
        func shift(_ x: Element, _ k: Int, _ y: Element) -> Element { squarings(x, k, times: y) }
        // ones(k) = a^(2^k − 1).
        let (ones2, ones4, ones8, ones16, ones32) = runsOfOnes(a)
        let ones64 = shift(ones32, 32, ones32)
        let ones62 = shift(shift(shift(shift(ones32, 16, ones16), 8, ones8), 4, ones4), 2, ones2)
        let ones126 = shift(shift(shift(shift(shift(ones64, 32, ones32), 16, ones16), 8, ones8), 4, ones4), 2, ones2)
        let ones127 = shift(ones126, 1, a)
        // 127 ones, a zero, then 62 ones: shift by 63 (the zero and the 62 places), times ones(62).
        let ones62Tail = shift(ones127, 63, ones62)
        // Then a zero and a one.
        return shift(ones62Tail, 2, a)
    }
}
