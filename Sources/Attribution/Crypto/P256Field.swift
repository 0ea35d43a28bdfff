/// The field of NIST P-256 (y² = x³ − 3x + b over p = 2²⁵⁶ − 2²²⁴ + 2¹⁹² + 2⁹⁶ − 1) in four 64-bit limbs, the
/// limb-level half of ``P256KeyTable``'s sums of precomputed points (the point formulas are ``JacobianPoint``'s,
/// shared with P-192): field addition, subtraction and Montgomery multiplication (elements held as a·2²⁵⁶ mod p;
/// p ≡ −1 mod 2⁶⁴, so each reduction step's multiplier is the low limb itself), inversion by Fermat's little
/// theorem.
///
/// libcrypto's P-256 code is constant-time: each multiple of a point from a table reads the whole window of the
/// table and does at least one addition per 7 bits of the scalar even when the digit is zero. Verification works
/// on public values only (signatures, digests, public keys), so nothing here needs to be constant-time. The results
/// are held to `EVP_PKEY_verify` by `P256KeyTableTests` (Wycheproof's vectors, random, bit-flipped and constructed
/// edge-case signatures, among them the doubling and point-at-infinity cases of the addition) and the tables to
/// libcrypto's own multiples.
enum P256Field: CurveField {
    /// A field element in Montgomery form, fully reduced (less than p), limbs least significant first.
    typealias Element = (UInt64, UInt64, UInt64, UInt64)

    static let zero: Element = (0, 0, 0, 0)
    /// 1 in Montgomery form (2²⁵⁶ mod p).
    static let one: Element = (0x0000_0000_0000_0001, 0xFFFF_FFFF_0000_0000, 0xFFFF_FFFF_FFFF_FFFF,
                               0x0000_0000_FFFF_FFFE)
    /// 2⁵¹² mod p: a Montgomery product with it puts a plain number into Montgomery form.
    private static let montgomerySquare: Element = (0x0000_0000_0000_0003, 0xFFFF_FFFB_FFFF_FFFF,
                                                    0xFFFF_FFFF_FFFF_FFFE, 0x0000_0004_FFFF_FFFD)
    /// b·2²⁵⁶ mod p, the curve's b in Montgomery form.
    static let b: Element = (0xD89C_DF62_29C4_BDDF, 0xACF0_05CD_7884_3090, 0xE5A2_20AB_F721_2ED6,
                             0xDC30_061D_0487_4834)
    /// Limbs in an element.
    static let limbCount = 4
    private static let p: Element = (0xFFFF_FFFF_FFFF_FFFF, 0x0000_0000_FFFF_FFFF, 0, 0xFFFF_FFFF_0000_0001)

    /// The element (in Montgomery form) of 32 big-endian bytes, or nil when they are not less than p. The length is
    /// checked in every build: a buffer pointer's subscript is checked in debug builds only.
    static func element(bigEndian bytes: UnsafeBufferPointer<UInt8>) -> Element? {
        precondition(bytes.count == 32, "P256Field element of other than 32 bytes")
        return element(plain: number(bigEndian: bytes, at: 0))
    }

    /// The number (any value below 2²⁵⁶, limbs least significant first) of the 32 big-endian bytes from `offset`
    /// of `bytes`. The bounds are checked in every build.
    static func number(bigEndian bytes: UnsafeBufferPointer<UInt8>, at offset: Int) -> Element {
        precondition(offset >= 0 && offset <= bytes.count - 32, "P256Field: 32 bytes out of bounds")
        func limb(_ start: Int) -> UInt64 {
            (0..<8).reduce(UInt64(0)) { $0 << 8 | UInt64(bytes[start + $1]) }
        }
        return (limb(offset + 24), limb(offset + 16), limb(offset + 8), limb(offset))
    }

    /// The element (in Montgomery form) of a plain number, or nil when it is not less than p.
    static func element(plain: Element) -> Element? {
        isLessThanP(plain) ? multiply(plain, montgomerySquare) : nil
    }

    /// The element held in `limbs[0 ..< 4]`, least significant first.
    @inline(__always)
    static func element(limbs: UnsafePointer<UInt64>) -> Element { (limbs[0], limbs[1], limbs[2], limbs[3]) }

    @inline(__always)
    static func isZero(_ a: Element) -> Bool { a.0 | a.1 | a.2 | a.3 == 0 }

    @inline(__always)
    static func equal(_ a: Element, _ b: Element) -> Bool { a.0 == b.0 && a.1 == b.1 && a.2 == b.2 && a.3 == b.3 }

    /// x + y + carry, the carry out in `carry`.
    @inline(__always)
    static func adc(_ x: UInt64, _ y: UInt64, _ carry: inout UInt64) -> UInt64 {
        LimbArithmetic.addWithCarry(x, y, &carry)
    }

    /// x − y − borrow, the borrow out in `borrow`.
    @inline(__always)
    static func sbb(_ x: UInt64, _ y: UInt64, _ borrow: inout UInt64) -> UInt64 {
        LimbArithmetic.subtractWithBorrow(x, y, &borrow)
    }

    /// a < p, for a less than 2²⁵⁶.
    @inline(__always)
    private static func isLessThanP(_ a: Element) -> Bool {
        var borrow: UInt64 = 0
        _ = sbb(a.0, p.0, &borrow)
        _ = sbb(a.1, p.1, &borrow)
        _ = sbb(a.2, p.2, &borrow)
        _ = sbb(a.3, p.3, &borrow)
        return borrow != 0
    }

    /// a + carry·2²⁵⁶ reduced below p, for a value less than 2p.
    @inline(__always)
    private static func reduceOnce(_ a: Element, carry: UInt64) -> Element {
        var borrow: UInt64 = 0
        let d: Element = (sbb(a.0, p.0, &borrow), sbb(a.1, p.1, &borrow), sbb(a.2, p.2, &borrow),
                          sbb(a.3, p.3, &borrow))
        return carry != 0 || borrow == 0 ? d : a
    }

    @inline(__always)
    static func add(_ a: Element, _ b: Element) -> Element {
        var carry: UInt64 = 0
        let s: Element = (adc(a.0, b.0, &carry), adc(a.1, b.1, &carry), adc(a.2, b.2, &carry),
                          adc(a.3, b.3, &carry))
        return reduceOnce(s, carry: carry)
    }

    @inline(__always)
    static func subtract(_ a: Element, _ b: Element) -> Element {
        var borrow: UInt64 = 0
        let d: Element = (sbb(a.0, b.0, &borrow), sbb(a.1, b.1, &borrow), sbb(a.2, b.2, &borrow),
                          sbb(a.3, b.3, &borrow))
        guard borrow != 0 else { return d }
        var carry: UInt64 = 0
        return (adc(d.0, p.0, &carry), adc(d.1, p.1, &carry), adc(d.2, p.2, &carry), adc(d.3, p.3, &carry))
    }

    /// x·y as two limbs. `UInt128` where the standard library has it on every OS version (Linux): there it
    /// compiles to one `mul`, while `multipliedFullWidth(by:)` is an out-of-line call.
    @inline(__always)
    private static func wideProduct(_ x: UInt64, _ y: UInt64) -> (high: UInt64, low: UInt64) {
        LimbArithmetic.wideProduct(x, y)
    }

    /// x·y + c + d as a limb and its carry limb (never more than 2¹²⁸ − 1, so no carry is lost).
    @inline(__always)
    static func multiplyAdd(_ x: UInt64, _ y: UInt64, _ c: UInt64, _ d: UInt64) -> (UInt64, UInt64) {
        LimbArithmetic.multiplyAdd(x, y, c, d)
    }

    /// The Montgomery product a·b·2⁻²⁵⁶ mod p: the 512-bit product row by row, then four reduction steps.
    @inline(__always)
    static func multiply(_ a: Element, _ b: Element) -> Element {
        var carry: UInt64 = 0
        var t0: UInt64 = 0, t1: UInt64 = 0, t2: UInt64 = 0, t3: UInt64 = 0
        var t4: UInt64 = 0, t5: UInt64 = 0, t6: UInt64 = 0, t7: UInt64 = 0
        (t0, carry) = multiplyAdd(a.0, b.0, 0, 0)
        (t1, carry) = multiplyAdd(a.0, b.1, 0, carry)
        (t2, carry) = multiplyAdd(a.0, b.2, 0, carry)
        (t3, t4) = multiplyAdd(a.0, b.3, 0, carry)
        (t1, carry) = multiplyAdd(a.1, b.0, t1, 0)
        (t2, carry) = multiplyAdd(a.1, b.1, t2, carry)
        (t3, carry) = multiplyAdd(a.1, b.2, t3, carry)
        (t4, t5) = multiplyAdd(a.1, b.3, t4, carry)
        (t2, carry) = multiplyAdd(a.2, b.0, t2, 0)
        (t3, carry) = multiplyAdd(a.2, b.1, t3, carry)
        (t4, carry) = multiplyAdd(a.2, b.2, t4, carry)
        (t5, t6) = multiplyAdd(a.2, b.3, t5, carry)
        (t3, carry) = multiplyAdd(a.3, b.0, t3, 0)
        (t4, carry) = multiplyAdd(a.3, b.1, t4, carry)
        (t5, carry) = multiplyAdd(a.3, b.2, t5, carry)
        (t6, t7) = multiplyAdd(a.3, b.3, t6, carry)
        return reduce(t0, t1, t2, t3, t4, t5, t6, t7)
    }

    /// a·a·2⁻²⁵⁶ mod p: the six cross products once, doubled, plus the four squares.
    @inline(__always)
    static func square(_ a: Element) -> Element {
        var carry: UInt64 = 0
        var t1: UInt64 = 0, t2: UInt64 = 0, t3: UInt64 = 0, t4: UInt64 = 0, t5: UInt64 = 0, t6: UInt64 = 0
        (t1, carry) = multiplyAdd(a.0, a.1, 0, 0)
        (t2, carry) = multiplyAdd(a.0, a.2, 0, carry)
        (t3, t4) = multiplyAdd(a.0, a.3, 0, carry)
        (t3, carry) = multiplyAdd(a.1, a.2, t3, 0)
        (t4, t5) = multiplyAdd(a.1, a.3, t4, carry)
        (t5, t6) = multiplyAdd(a.2, a.3, t5, 0)
        var t7 = t6 >> 63
        t6 = t6 << 1 | t5 >> 63
        t5 = t5 << 1 | t4 >> 63
        t4 = t4 << 1 | t3 >> 63
        t3 = t3 << 1 | t2 >> 63
        t2 = t2 << 1 | t1 >> 63
        t1 <<= 1
        let (l0, h0) = multiplyAdd(a.0, a.0, 0, 0)
        let (l1, h1) = multiplyAdd(a.1, a.1, 0, 0)
        let (l2, h2) = multiplyAdd(a.2, a.2, 0, 0)
        let (l3, h3) = multiplyAdd(a.3, a.3, 0, 0)
        (t1, carry) = sum(t1, h0, 0)
        (t2, carry) = sum(t2, l1, carry)
        (t3, carry) = sum(t3, h1, carry)
        (t4, carry) = sum(t4, l2, carry)
        (t5, carry) = sum(t5, h2, carry)
        (t6, carry) = sum(t6, l3, carry)
        (t7, _) = sum(t7, h3, carry)
        return reduce(l0, t1, t2, t3, t4, t5, t6, t7)
    }

    /// t·2⁻²⁵⁶ mod p for t = t7·2⁴⁴⁸ + … + t0 (less than p·2²⁵⁶). Each step adds m·p with m the lowest limb
    /// left (−p⁻¹ ≡ 1 mod 2⁶⁴), which clears that limb; p's limbs are (2⁶⁴ − 1, 2³² − 1, 0, 2⁶⁴ − 2³² + 1), so
    /// the step is two products by shifts and two carries.
    @inline(__always)
    private static func reduce(_ t0: UInt64, _ t1: UInt64, _ t2: UInt64, _ t3: UInt64, _ t4: UInt64,
                               _ t5: UInt64, _ t6: UInt64, _ t7: UInt64) -> Element {
        var (t1, t2, t3, t4, t5, t6, t7) = (t1, t2, t3, t4, t5, t6, t7)
        var carry: UInt64 = 0
        var pending: UInt64 = 0
        var top: UInt64 = 0
        // t0 + t0·(2⁶⁴ − 1) = t0·2⁶⁴: the limb clears and t0 is carried; the carry out of t4 waits for step 2.
        (t1, carry) = reductionProduct(t0, p.1, t1, t0)
        (t2, carry) = sum(t2, carry, 0)
        (t3, carry) = reductionProduct(t0, p.3, t3, carry)
        (t4, pending) = sum(t4, carry, 0)
        (t2, carry) = reductionProduct(t1, p.1, t2, t1)
        (t3, carry) = sum(t3, carry, 0)
        (t4, carry) = reductionProduct(t1, p.3, t4, carry)
        (t5, pending) = sum(t5, carry, pending)
        (t3, carry) = reductionProduct(t2, p.1, t3, t2)
        (t4, carry) = sum(t4, carry, 0)
        (t5, carry) = reductionProduct(t2, p.3, t5, carry)
        (t6, pending) = sum(t6, carry, pending)
        (t4, carry) = reductionProduct(t3, p.1, t4, t3)
        (t5, carry) = sum(t5, carry, 0)
        (t6, carry) = reductionProduct(t3, p.3, t6, carry)
        (t7, top) = sum(t7, carry, pending)
        return reduceOnce((t4, t5, t6, t7), carry: top)
    }

    /// m·limb + c + d for limb p₁ = 2³² − 1 or p₃ = 2⁶⁴ − 2³² + 1 of p, by shifts instead of a multiplication.
    @inline(__always)
    static func reductionProduct(_ m: UInt64, _ limb: UInt64, _ c: UInt64, _ d: UInt64) -> (UInt64, UInt64) {
        #if os(Linux)
        let wide = UInt128(_low: m, _high: 0)
        let product = limb == p.1 ? (wide &<< 32) &- wide : (wide &<< 64) &- (wide &<< 32) &+ wide
        let total = product &+ UInt128(_low: c, _high: 0) &+ UInt128(_low: d, _high: 0)
        return (total._low, total._high)
        #else
        return multiplyAdd(m, limb, c, d)
        #endif
    }

    /// x + y + z as a limb and its carry (0, 1 or 2).
    @inline(__always)
    private static func sum(_ x: UInt64, _ y: UInt64, _ z: UInt64) -> (UInt64, UInt64) {
        LimbArithmetic.sum(x, y, z)
    }

    /// The plain (not Montgomery) value of `a`: its Montgomery product with 1.
    static func plain(_ a: Element) -> Element { reduce(a.0, a.1, a.2, a.3, 0, 0, 0, 0) }

    /// a⁻¹ = a^(p − 2) (Fermat), for a ≠ 0; 0 for 0. An addition chain over p − 2's runs of ones (from the top:
    /// 32 ones, 31 zeros, a one, 96 zeros, 94 ones, a zero, a one): 255 squarings, 13 multiplications.
    static func inverse(_ a: Element) -> Element {
        /// x^(2^k)·y (``CurveField/squarings(_:_:times:)``).
        func shift(_ x: Element, _ k: Int, _ y: Element) -> Element { squarings(x, k, times: y) }
        // ones(k) = a^(2^k − 1).
        let (ones2, ones4, ones8, ones16, ones32) = runsOfOnes(a)
        var result = shift(ones32, 32, a)
        result = shift(result, 128, ones32)
        result = shift(result, 32, ones32)
        result = shift(result, 16, ones16)
        result = shift(result, 8, ones8)
        result = shift(result, 4, ones4)
        result = shift(result, 2, ones2)
        return shift(result, 2, a)
    }

    /// The point of an uncompressed SEC 1 encoding `04 || x || y` (65 bytes) in Montgomery form, or nil unless it is
    /// one: the marker, both coordinates below p, and y² = x³ − 3x + b. What libcrypto's decoding accepts of a P-256
    /// point (held to it by `ECPublicKeyTests`); the one parser of a key's point (``P256KeyTable``, ``ECPublicKey``).
    static func affinePoint(uncompressed point: some Collection<UInt8>) -> (x: Element, y: Element)? {
        let bytes = Array(point)
        guard bytes.count == 65, bytes[0] == 0x04 else { return nil }
        return bytes.withUnsafeBufferPointer { buffer in
            guard let x = element(bigEndian: UnsafeBufferPointer(rebasing: buffer[1..<33])),
                  let y = element(bigEndian: UnsafeBufferPointer(rebasing: buffer[33..<65])),
                  isOnCurve(x: x, y: y) else { return nil }
            return (x, y)
        }
    }
}
