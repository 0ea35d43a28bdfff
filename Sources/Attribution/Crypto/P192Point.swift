/// Arithmetic on NIST P-192 (y² = x³ − 3x + b over p = 2¹⁹² − 2⁶⁴ − 1) in three 64-bit limbs, just enough for
/// ``P192KeyTable``'s sums of precomputed points: field addition, subtraction, multiplication with the prime's
/// fast reduction (FIPS 186-4 §D.2.1; Hankerson, Menezes and Vanstone, "Guide to Elliptic Curve Cryptography",
/// algorithm 2.27), a Jacobian point plus an affine point (8M + 3S) and a Jacobian doubling (a = −3).
///
/// libcrypto treats P-192 as a generic curve: each `EC_POINT_add` goes through `BIGNUM`s, a `BN_CTX` and
/// several checks, about ten times the work of the same formulas on fixed-size limbs. Only public values go
/// through here (signatures, digests, public keys), so nothing needs to be constant-time. The results are held to
/// `EVP_PKEY_verify` by `P192KeyTableTests` (random, bit-flipped and constructed edge-case signatures, among them
/// the doubling and point-at-infinity cases of the addition).
enum P192Field {
    /// A field element, fully reduced (less than p), limbs least significant first.
    typealias Element = (UInt64, UInt64, UInt64)

    static let zero: Element = (0, 0, 0)
    static let one: Element = (1, 0, 0)
    /// The curve's b (FIPS 186-4 §D.1.2.1), a plain element: this field has no Montgomery form.
    static let b: Element = (0xFEB8_DEEC_C146_B9B1, 0x0FA7_E9AB_7224_3049, 0x6421_0519_E59C_80E7)

    /// The element from 24 big-endian bytes (a value below p). The length is checked in every build: a buffer
    /// pointer's subscript is checked in debug builds only.
    static func element(bigEndian bytes: UnsafeBufferPointer<UInt8>) -> Element {
        precondition(bytes.count == 24, "P192Field element of other than 24 bytes")
        func limb(_ offset: Int) -> UInt64 {
            (0..<8).reduce(UInt64(0)) { $0 << 8 | UInt64(bytes[offset + $1]) }
        }
        return (limb(16), limb(8), limb(0))
    }

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
}

/// A P-192 point in Jacobian coordinates (x = X/Z², y = Y/Z³); Z = 0 is the point at infinity.
struct P192JacobianPoint {
    var x: P192Field.Element
    var y: P192Field.Element
    var z: P192Field.Element

    static let infinity = P192JacobianPoint(x: P192Field.one, y: P192Field.one, z: P192Field.zero)

    var isInfinity: Bool { P192Field.isZero(z) }

    /// True when the point (not infinity) satisfies the curve's equation in Jacobian form,
    /// Y² = X³ − 3·X·Z⁴ + b·Z⁶: 5M + 4S. A point the arithmetic got wrong leaves the curve (all but certainly), so
    /// ``P192KeyTable`` asks this of every R before it can accept a signature with it, as ``P256JacobianPoint``'s
    /// callers do: a fault in this file's code is then a rejection, never an acceptance.
    var isOnCurve: Bool {
        typealias F = P192Field
        guard !isInfinity else { return false }
        let zz = F.square(z)
        let z4 = F.square(zz)
        let z6 = F.multiply(z4, zz)
        let xz4 = F.multiply(x, z4)
        let right = F.add(F.subtract(F.multiply(F.square(x), x), F.add(F.add(xz4, xz4), xz4)),
                          F.multiply(F.b, z6))
        return F.equal(F.square(y), right)
    }

    /// self + (x2, y2), an affine point (never infinity): 8M + 3S; the doubling and the opposite cases handled.
    mutating func add(affineX x2: P192Field.Element, y y2: P192Field.Element) {
        typealias F = P192Field
        guard !isInfinity else {
            self = P192JacobianPoint(x: x2, y: y2, z: F.one)
            return
        }
        let z1z1 = F.square(z)
        let u2 = F.multiply(x2, z1z1)
        let s2 = F.multiply(y2, F.multiply(z, z1z1))
        let h = F.subtract(u2, x)
        let r = F.subtract(s2, y)
        if F.isZero(h) {
            if F.isZero(r) {
                double()
            } else {
                self = .infinity
            }
            return
        }
        let hh = F.square(h)
        let hhh = F.multiply(h, hh)
        let v = F.multiply(x, hh)
        let x3 = F.subtract(F.subtract(F.square(r), hhh), F.add(v, v))
        let y3 = F.subtract(F.multiply(r, F.subtract(v, x3)), F.multiply(y, hhh))
        let z3 = F.multiply(z, h)
        self = P192JacobianPoint(x: x3, y: y3, z: z3)
    }

    /// 2·self, with a = −3 (dbl-2001-b): 3M + 5S.
    mutating func double() {
        typealias F = P192Field
        guard !isInfinity, !F.isZero(y) else {
            self = .infinity
            return
        }
        let delta = F.square(z)
        let gamma = F.square(y)
        let beta = F.multiply(x, gamma)
        let t = F.multiply(F.subtract(x, delta), F.add(x, delta))
        let alpha = F.add(F.add(t, t), t)
        let beta4 = F.add(F.add(beta, beta), F.add(beta, beta))
        let x3 = F.subtract(F.square(alpha), F.add(beta4, beta4))
        let z3 = F.subtract(F.subtract(F.square(F.add(y, z)), gamma), delta)
        let gamma2 = F.square(gamma)
        let gamma8 = F.add(F.add(F.add(gamma2, gamma2), F.add(gamma2, gamma2)),
                           F.add(F.add(gamma2, gamma2), F.add(gamma2, gamma2)))
        let y3 = F.subtract(F.multiply(alpha, F.subtract(beta4, x3)), gamma8)
        self = P192JacobianPoint(x: x3, y: y3, z: z3)
    }
}
