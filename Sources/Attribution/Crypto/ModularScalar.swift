/// Arithmetic modulo a curve's group order n on fixed-size limbs (least significant first), for the scalar steps of
/// ECDSA verification from tables: r and s read and range-checked, s⁻¹, u1 = e·s⁻¹ and u2 = r·s⁻¹. The one
/// protocol both curves' scalars conform to (``P256Scalar``, ``P192Scalar``): a conformance supplies the constants
/// and the limb-level steps (the Montgomery product, comparisons with n), which differ by limb count; the range
/// check, the reduction of a digest, the Montgomery form and the inverse are written once here. Release builds
/// optimise the whole module, which specialises them for each curve. Public values only, so nothing here is
/// constant-time; `ScalarTests` holds every operation to libcrypto's on random and edge values.
protocol ModularScalar {
    /// A number as a tuple of limbs, least significant first.
    associatedtype Element

    /// n.
    static var order: Element { get }
    /// 2^(64·``limbCount``) mod n: 1 in Montgomery form.
    static var one: Element { get }
    /// 2^(128·``limbCount``) mod n: a Montgomery product with it puts a plain number into Montgomery form.
    static var montgomerySquare: Element { get }
    /// Limbs in an ``Element``.
    static var limbCount: Int { get }

    /// Limb `index` (0 the least significant) of `a`.
    static func limb(_ a: Element, _ index: Int) -> UInt64
    /// Whether a = 0.
    static func isZero(_ a: Element) -> Bool
    /// a < n, for any a of ``limbCount`` limbs.
    static func isLessThanOrder(_ a: Element) -> Bool
    /// a − n (mod 2^(64·``limbCount``)).
    static func subtractOrder(_ a: Element) -> Element
    /// a + n as a number one bit longer: its limbs and the carry out of the top one.
    static func addingOrder(_ a: Element) -> (sum: Element, carry: UInt64)
    /// The Montgomery product a·b·2^(−64·``limbCount``) mod n, for a, b < n: with b in Montgomery form and a
    /// plain, the plain product a·b mod n.
    static func multiply(_ a: Element, _ b: Element) -> Element
}

extension ModularScalar {
    /// 1 ≤ a ≤ n − 1: a valid r or s.
    @inline(__always)
    static func isInRange(_ a: Element) -> Bool {
        !isZero(a) && isLessThanOrder(a)
    }

    /// a mod n for any a of ``limbCount`` limbs (less than 2n: one subtraction at most), e.g. a digest's leftmost
    /// bits as an integer.
    @inline(__always)
    static func reduced(_ a: Element) -> Element {
        isLessThanOrder(a) ? a : subtractOrder(a)
    }

    /// a in Montgomery form (a·2^(64·``limbCount``) mod n), for a < n.
    @inline(__always)
    static func montgomery(_ a: Element) -> Element {
        multiply(a, montgomerySquare)
    }

    /// a⁻¹ in Montgomery form for a ≠ 0 in Montgomery form: a^(n − 2) (Fermat), by 4-bit windows of n − 2 from the
    /// top (a table of a¹ … a¹⁵, on the stack): 4·(16·``limbCount`` − 1) squarings and at most 16·``limbCount``
    /// multiplications.
    static func inverse(_ a: Element) -> Element {
        withUnsafeTemporaryAllocation(of: Element.self, capacity: 16) { powers in
            powers.initialize(repeating: one)
            for k in 1..<16 { powers[k] = multiply(powers[k - 1], a) }
            var result = one
            var squares = false
            for index in (0..<limbCount).reversed() {
                // n − 2: n is odd and above 2, so only its lowest limb changes.
                let limb = index == 0 ? limb(order, 0) &- 2 : limb(order, index)
                for window in (0..<16).reversed() {
                    if squares {
                        for _ in 0..<4 { result = multiply(result, result) }
                    }
                    squares = true
                    let digit = Int(limb >> UInt64(4 * window) & 0xF)
                    if digit != 0 { result = multiply(result, powers[digit]) }
                }
            }
            return result
        }
    }
}
