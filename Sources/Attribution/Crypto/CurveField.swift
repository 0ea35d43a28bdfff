/// The prime field of a NIST curve y² = x³ − 3x + b on fixed-size limbs, as ``JacobianPoint``'s formulas and the
/// tables' sums use it: the one protocol both curves' fields conform to (``P256Field``, four limbs in Montgomery
/// form; ``P192Field``, three limbs with the prime's fast reduction), so that the point formulas are written once.
///
/// A conformance supplies only the limb-level arithmetic, which legitimately differs between the curves (limb
/// count, reduction); everything above it is generic. Release builds optimise the whole module, which specialises
/// the generic code for each field: no witness-table call is left on a hot path (Benchmarks/results/curve-core.md
/// has the callgrind check). Elements are always fully reduced (less than p), so ``equal(_:_:)`` compares limbs.
protocol CurveField {
    /// A field element as a tuple of limbs, least significant first, fully reduced.
    associatedtype Element

    /// 0.
    static var zero: Element { get }
    /// 1 (in the field's representation: 2²⁵⁶ mod p for P-256's Montgomery form).
    static var one: Element { get }
    /// The curve's b, in the field's representation.
    static var b: Element { get }
    /// Limbs in an ``Element``.
    static var limbCount: Int { get }

    /// The element stored at `limbs` (``limbCount`` of them, least significant first), as a table of multiples
    /// holds it (``MultiplesLayout``).
    static func element(limbs: UnsafePointer<UInt64>) -> Element

    /// Whether `a` is 0.
    static func isZero(_ a: Element) -> Bool
    /// Whether `a` and `b` are the same element.
    static func equal(_ a: Element, _ b: Element) -> Bool
    /// a + b mod p.
    static func add(_ a: Element, _ b: Element) -> Element
    /// a − b mod p.
    static func subtract(_ a: Element, _ b: Element) -> Element
    /// a·b mod p (in the field's representation).
    static func multiply(_ a: Element, _ b: Element) -> Element
    /// a·a mod p.
    static func square(_ a: Element) -> Element
    /// a⁻¹ for a ≠ 0 (Fermat's little theorem); 0 for 0. Once per step of the batched sums, shared by every
    /// signature of the batch (``MultiplesLayout``), and otherwise for a full addition or a table's building: a plain
    /// addition chain is enough.
    static func inverse(_ a: Element) -> Element
}

extension CurveField {
    /// −a mod p.
    @inline(__always)
    static func negate(_ a: Element) -> Element { subtract(zero, a) }

    /// 3·a mod p: the `3` of a = −3 in the curve's equation and doubling.
    @inline(__always)
    static func triple(_ a: Element) -> Element { add(add(a, a), a) }

    /// (x₁, y₁) + (x₂, y₂) for two affine points (x₁ ≠ x₂, or a doubling) given the slope λ between them
    /// ((y₂ − y₁)/(x₂ − x₁), or (3x₁² − 3)/(2y₁) for a doubling): x₃ = λ² − x₁ − x₂, y₃ = λ·(x₁ − x₃) − y₁. The
    /// affine formula of a table's building, whose divisions share one inversion. The batched sums
    /// (``MultiplesLayout/pairedSums(digits:tables:count:)``) write the same two lines out in place: there, storing
    /// the returned pair into their scratch arrays compiled to more instructions per addition.
    @inline(__always)
    static func affineSum(x1: Element, y1: Element, x2: Element, slope lambda: Element) -> (x: Element, y: Element) {
        let x3 = subtract(subtract(square(lambda), x1), x2)
        return (x3, subtract(multiply(lambda, subtract(x1, x3)), y1))
    }

    /// x^(2^k)·y: `k` squarings of `x`, then a multiplication by `y`; the step of both fields' inversion chains.
    ///
    /// - Parameters:
    ///   - x: the element squared.
    ///   - k: how many squarings.
    ///   - y: the element multiplied in last.
    /// - Returns: x^(2^k)·y.
    static func squarings(_ x: Element, _ k: Int, times y: Element) -> Element {
        var x = x
        for _ in 0..<k { x = square(x) }
        return multiply(x, y)
    }

    /// a^(2^k − 1) for k = 2, 4, 8, 16, 32 (runs of k ones in the exponent): where both fields' inversion chains
    /// start, p − 2 beginning with a run of at least 32 ones on both curves.
    ///
    /// - Parameter a: the element inverted.
    /// - Returns: the five powers, named by their runs of ones.
    static func runsOfOnes(_ a: Element) -> (ones2: Element, ones4: Element, ones8: Element, ones16: Element,
                                             ones32: Element) {
        let ones2 = squarings(a, 1, times: a)
        let ones4 = squarings(ones2, 2, times: ones2)
        let ones8 = squarings(ones4, 4, times: ones4)
        let ones16 = squarings(ones8, 8, times: ones8)
        return (ones2, ones4, ones8, ones16, squarings(ones16, 16, times: ones16))
    }

    /// Whether the affine point (x, y) satisfies y² = x³ − 3x + b.
    static func isOnCurve(x: Element, y: Element) -> Bool {
        equal(square(y), add(subtract(multiply(square(x), x), triple(x)), b))
    }
}
