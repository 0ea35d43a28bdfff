/// A point of a NIST curve y² = x³ − 3x + b in Jacobian coordinates (x = X/Z², y = Y/Z³) over a ``CurveField``;
/// Z = 0 is the point at infinity. The point formulas of both curves, written once (``P256JacobianPoint``,
/// ``P192JacobianPoint``): a Jacobian point plus an affine point (8M + 3S), a Jacobian doubling with a = −3
/// (3M + 5S), a full addition through an inversion, and the curve check every R passes before it can accept.
///
/// Nothing here is constant-time: verification handles public values only (signatures, digests, public keys).
/// The results are held to `EVP_PKEY_verify` by `P256KeyTableTests` and `P192KeyTableTests` (Wycheproof's vectors,
/// random, bit-flipped and constructed edge-case signatures, among them the doubling and point-at-infinity cases
/// of the addition).
struct JacobianPoint<Field: CurveField> {
    /// X.
    var x: Field.Element
    /// Y.
    var y: Field.Element
    /// Z; 0 for the point at infinity.
    var z: Field.Element

    /// The point at infinity (1, 1, 0).
    static var infinity: Self {
        @inline(__always) get { Self(x: Field.one, y: Field.one, z: Field.zero) }
    }

    /// Whether this is the point at infinity.
    var isInfinity: Bool {
        @inline(__always) get { Field.isZero(z) }
    }

    /// True when the point (not infinity) satisfies the curve's equation in Jacobian form,
    /// Y² = X³ − 3·X·Z⁴ + b·Z⁶: 5M + 4S. A point the arithmetic got wrong leaves the curve (all but certainly), so
    /// the verifiers ask this of every R before it can accept a signature with it (``P256BatchVerifier``,
    /// ``P192KeyTable/accepts(r:_:)``): a fault in the formulas is then a rejection, never an acceptance.
    var isOnCurve: Bool {
        typealias F = Field
        guard !isInfinity else { return false }
        let zz = F.square(z)
        let z4 = F.square(zz)
        let z6 = F.multiply(z4, zz)
        let right = F.add(F.subtract(F.multiply(F.square(x), x), F.triple(F.multiply(x, z4))),
                          F.multiply(F.b, z6))
        return F.equal(F.square(y), right)
    }

    /// The affine coordinates (x, y) = (X/Z², Y/Z³), one inversion; nil for the point at infinity.
    var affine: (x: Field.Element, y: Field.Element)? {
        typealias F = Field
        guard !isInfinity else { return nil }
        let zInverse = F.inverse(z)
        let zz = F.square(zInverse)
        return (F.multiply(x, zz), F.multiply(y, F.multiply(zz, zInverse)))
    }

    /// self + (x2, y2), an affine point (never infinity): 8M + 3S; the doubling and the opposite cases handled.
    @inline(__always)
    mutating func add(affineX x2: Field.Element, y y2: Field.Element) {
        typealias F = Field
        guard !isInfinity else {
            self = Self(x: x2, y: y2, z: F.one)
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
        self = Self(x: x3, y: y3, z: z3)
    }

    /// self + other, both Jacobian (either may be infinity), by ``add(affineX:y:)`` once `other` is affine: free
    /// when its Z is already 1, else one inversion (a sum of ``P256KeyTable/sums(digits:keyTables:generator:)`` whose
    /// two halves both started has Z ≠ 1).
    mutating func add(_ other: Self) {
        typealias F = Field
        guard !F.equal(other.z, F.one) else {
            add(affineX: other.x, y: other.y)
            return
        }
        guard let (x2, y2) = other.affine else { return }
        add(affineX: x2, y: y2)
    }

    /// 2·self, with a = −3 (dbl-2001-b): 3M + 5S.
    mutating func double() {
        typealias F = Field
        guard !isInfinity, !F.isZero(y) else {
            self = .infinity
            return
        }
        let delta = F.square(z)
        let gamma = F.square(y)
        let beta = F.multiply(x, gamma)
        let alpha = F.triple(F.multiply(F.subtract(x, delta), F.add(x, delta)))
        let beta4 = F.add(F.add(beta, beta), F.add(beta, beta))
        let x3 = F.subtract(F.square(alpha), F.add(beta4, beta4))
        let z3 = F.subtract(F.subtract(F.square(F.add(y, z)), gamma), delta)
        let gamma2 = F.square(gamma)
        let twoGamma2 = F.add(gamma2, gamma2)
        let gamma8 = F.add(F.add(twoGamma2, twoGamma2), F.add(twoGamma2, twoGamma2))
        let y3 = F.subtract(F.multiply(alpha, F.subtract(beta4, x3)), gamma8)
        self = Self(x: x3, y: y3, z: z3)
    }
}

/// A P-256 point in Jacobian coordinates, in Montgomery form (``P256Field``).
typealias P256JacobianPoint = JacobianPoint<P256Field>

/// A P-192 point in Jacobian coordinates (``P192Field``).
typealias P192JacobianPoint = JacobianPoint<P192Field>
