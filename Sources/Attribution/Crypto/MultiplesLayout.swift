/// Where a table of precomputed multiples keeps its points, and the table sum written once for both curves
/// (``P256KeyTable``, ``P192KeyTable``): j·Bᵢ for each position i (Bᵢ = 2^(w·i)·P) and j in 1 … ``perPosition``,
/// affine, x then y (``CurveField/limbCount`` limbs each), from limb 2·limbCount·(perPosition·i + j − 1). A
/// negative digit reads its magnitude's point and negates y (−(x, y) = (x, −y)).
struct MultiplesLayout<Field: CurveField> {
    /// Digit positions of a scalar.
    let positions: Int
    /// Points per position: the largest digit magnitude.
    let perPosition: Int

    /// The limbs a table holds.
    var limbCount: Int {
        @inline(__always) get { 2 * Field.limbCount * positions * perPosition }
    }

    /// digit·B_position, affine, from `table`, for a digit in −``perPosition`` … ``perPosition`` other than 0. The
    /// position and digit are checked in every build, so a slip can only stop the process, never read outside the
    /// table (of ``limbCount`` limbs).
    @inline(__always)
    func point(_ table: UnsafePointer<UInt64>, position: Int, digit: Int) -> (x: Field.Element, y: Field.Element) {
        let magnitude = abs(digit)
        precondition(UInt(bitPattern: magnitude &- 1) < UInt(perPosition)
                         && UInt(bitPattern: position) < UInt(positions),
                     "MultiplesLayout: a digit or position outside the table")
        let at = table + 2 * Field.limbCount * (perPosition * position + magnitude - 1)
        let y = Field.element(limbs: at + Field.limbCount)
        return (Field.element(limbs: at), digit < 0 ? Field.negate(y) : y)
    }

    /// point += Σ dᵢ·Bᵢ over the positions, dᵢ = `digit(i)`: one mixed addition (``JacobianPoint/add(affineX:y:)``)
    /// per non-zero digit, read from `table`.
    @inline(__always)
    func add(digits digit: (Int) -> Int, from table: UnsafePointer<UInt64>, to point: inout JacobianPoint<Field>) {
        for position in 0..<positions {
            let value = digit(position)
            guard value != 0 else { continue }
            let multiple = self.point(table, position: position, digit: value)
            point.add(affineX: multiple.x, y: multiple.y)
        }
    }
}
