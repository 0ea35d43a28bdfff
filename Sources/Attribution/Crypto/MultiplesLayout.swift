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

extension MultiplesLayout {
    /// Σ u1ᵢ-digit multiples from `tables[2k]` plus Σ u2ᵢ-digit multiples from `tables[2k + 1]` for `count` pairs of
    /// running sums at once (u1·G + u2·Q per signature, ``P256KeyTable/sums(digits:keyTables:generator:)``):
    /// `digits` holds 2·``positions`` digits per pair (u1's, then u2's, least significant first).
    ///
    /// All running sums advance in step, one digit position at a time, on affine points: adding two affine points
    /// takes one division, and the divisions of a step share one field inversion (Montgomery's trick: three
    /// multiplications each), so an addition costs 5M + 1S and a share of the inversion instead of a mixed
    /// addition's 8M + 3S, and ``positions`` steps need that many inversions for both halves. The two halves are
    /// then added (one mixed addition, which handles equal and opposite points). A pair whose addition would divide
    /// by zero (the two points equal or opposite, which honest signatures never meet) leaves the steps and is
    /// computed alone (``pairedSum(digits:tables:)``), whose ``JacobianPoint`` handles both cases. Results are
    /// Jacobian, or the point at infinity.
    ///
    /// The hottest loop of a run: its working state lives in one scratch allocation read through pointers, every
    /// index below the counts bounded by its loop (the caller checks that `digits` holds 2·``positions``·`count`),
    /// and table reads go through ``point(_:position:digit:)``'s check.
    @inline(__always)
    func pairedSums(digits digit: UnsafePointer<Int16>, tables: UnsafePointer<UnsafePointer<UInt64>>, count: Int)
        -> [JacobianPoint<Field>] {
        typealias F = Field
        let positions = self.positions
        let stride = 2 * positions
        // Running sum h of signature h / 2: u1·G's for even h, u2·Q's for odd h.
        let halves = 2 * count
        // Per running sum: x, y. Per step: the points read for it; per slot (the running sums that add, in order):
        // its denominator and the prefix products.
        let elements = UnsafeMutablePointer<F.Element>.allocate(capacity: 6 * halves)
        elements.initialize(repeating: F.zero, count: 6 * halves)
        defer { elements.deallocate() }
        let x = elements, y = elements + halves
        let addedX = elements + 2 * halves, addedY = elements + 3 * halves
        let denominators = elements + 4 * halves, prefixes = elements + 5 * halves
        // Per running sum: whether it holds a point yet; per signature: whether it is summed alone.
        let flags = UnsafeMutablePointer<Bool>.allocate(capacity: halves + count)
        flags.initialize(repeating: false, count: halves + count)
        defer { flags.deallocate() }
        let started = flags, alone = flags + halves
        // Per step: the running sums that add this step (`sums`) with their points read from the tables (into
        // `addedX`, `addedY`), then, per slot, which of those points it adds (`active`).
        let indices = UnsafeMutablePointer<Int>.allocate(capacity: 2 * halves)
        indices.initialize(repeating: 0, count: 2 * halves)
        defer { indices.deallocate() }
        let sums = indices, active = indices + halves
        for step in 0..<positions {
            // The table reads first, in a pass of their own: independent loads the processor keeps in
            // flight together, where inside the chain of products below each waited for its cache miss.
            var reads = 0
            for h in 0..<halves where !alone[h >> 1] {
                let value = Int(digit[stride * (h >> 1) + (h & 1) * positions + step])
                guard value != 0 else { continue }
                (addedX[reads], addedY[reads]) = point(tables[h], position: step, digit: value)
                sums[reads] = h
                reads += 1
            }
            var slots = 0
            var product = F.one
            for read in 0..<reads {
                let h = sums[read]
                guard started[h] else {
                    (x[h], y[h]) = (addedX[read], addedY[read])
                    started[h] = true
                    continue
                }
                let denominator = F.subtract(addedX[read], x[h])
                guard !F.isZero(denominator) else {
                    alone[h >> 1] = true
                    continue
                }
                product = F.multiply(product, denominator)
                active[slots] = read
                denominators[slots] = denominator
                prefixes[slots] = product
                slots += 1
            }
            guard slots > 0 else { continue }
            var inverse = F.inverse(product)
            for slot in (0..<slots).reversed() {
                let read = active[slot]
                let h = sums[read]
                let quotient: F.Element
                if slot > 0 {
                    quotient = F.multiply(inverse, prefixes[slot - 1])
                    inverse = F.multiply(inverse, denominators[slot])
                } else {
                    quotient = inverse
                }
                // λ = (y₂ − y₁)/(x₂ − x₁), x₃ = λ² − x₁ − x₂, y₃ = λ·(x₁ − x₃) − y₁.
                let x1 = x[h], y1 = y[h]
                let lambda = F.multiply(F.subtract(addedY[read], y1), quotient)
                let x3 = F.subtract(F.subtract(F.square(lambda), x1), addedX[read])
                y[h] = F.subtract(F.multiply(lambda, F.subtract(x1, x3)), y1)
                x[h] = x3
            }
        }
        return (0..<count).map { k in
            guard !alone[k] else { return pairedSum(digits: digit + stride * k, tables: tables + 2 * k) }
            var point = started[2 * k] ? JacobianPoint<Field>(x: x[2 * k], y: y[2 * k], z: F.one) : .infinity
            if started[2 * k + 1] { point.add(affineX: x[2 * k + 1], y: y[2 * k + 1]) }
            return point
        }
    }

    /// u1·G + u2·Q for one pair alone, by mixed additions (``add(digits:from:to:)``): `digits` holds u1's then u2's
    /// ``positions`` digits, `tables` G's then Q's table. Kept out of line: ``pairedSums(digits:tables:count:)``
    /// calls it only for a pair that met an equal or opposite point, and inlining its additions there would push
    /// the common path's one addition out of line.
    @inline(never)
    func pairedSum(digits digit: UnsafePointer<Int16>, tables: UnsafePointer<UnsafePointer<UInt64>>)
        -> JacobianPoint<Field> {
        var point = JacobianPoint<Field>.infinity
        add(digits: { Int(digit[$0]) }, from: tables[0], to: &point)
        add(digits: { Int(digit[positions + $0]) }, from: tables[1], to: &point)
        return point
    }
}
