/// The 64-bit limb steps of the fixed-limb field and scalar arithmetic (``P256Field``, ``P192Field``, and the
/// scalars over them): add with carry, subtract with borrow, the full product, and their sums.
///
/// Each step has two implementations. The wide one computes in `UInt128`, which compiles to one `adc`, `sbb` or
/// `mul` (where `multipliedFullWidth(by:)` is an out-of-line call); the standard library has `UInt128` on Linux in
/// every version and on Apple's systems only from their 2024 releases. The portable one uses the overflow-reporting
/// operations every platform has. Both are compiled on every platform, and the tests compare them on Linux
/// (`LimbArithmeticTests`), so the variant other platforms run is checked where CI runs; `#if os(Linux)` only
/// chooses which one the arithmetic calls.
enum LimbArithmetic {
    /// x + y + carry, the carry out (0 or 1, for a carry in of 0 or 1) in `carry`.
    ///
    /// - Parameters:
    ///   - x: a limb.
    ///   - y: a limb.
    ///   - carry: the carry in; the carry out on return.
    /// - Returns: the sum's low 64 bits.
    @inline(__always)
    static func addWithCarry(_ x: UInt64, _ y: UInt64, _ carry: inout UInt64) -> UInt64 {
        #if os(Linux)
        return addWithCarryWide(x, y, &carry)
        #else
        return addWithCarryPortable(x, y, &carry)
        #endif
    }

    /// ``addWithCarry(_:_:_:)`` in `UInt128`.
    ///
    /// - Parameters:
    ///   - x: a limb.
    ///   - y: a limb.
    ///   - carry: the carry in; the carry out on return.
    /// - Returns: the sum's low 64 bits.
    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    @inline(__always)
    static func addWithCarryWide(_ x: UInt64, _ y: UInt64, _ carry: inout UInt64) -> UInt64 {
        let sum = UInt128(_low: x, _high: 0) &+ UInt128(_low: y, _high: 0) &+ UInt128(_low: carry, _high: 0)
        carry = sum._high
        return sum._low
    }

    /// ``addWithCarry(_:_:_:)`` with overflow-reporting additions.
    ///
    /// - Parameters:
    ///   - x: a limb.
    ///   - y: a limb.
    ///   - carry: the carry in; the carry out on return.
    /// - Returns: the sum's low 64 bits.
    @inline(__always)
    static func addWithCarryPortable(_ x: UInt64, _ y: UInt64, _ carry: inout UInt64) -> UInt64 {
        let (s1, o1) = x.addingReportingOverflow(y)
        let (s2, o2) = s1.addingReportingOverflow(carry)
        carry = (o1 ? 1 : 0) &+ (o2 ? 1 : 0)
        return s2
    }

    /// x − y − borrow, the borrow out (0 or 1, for a borrow in of 0 or 1) in `borrow`.
    ///
    /// - Parameters:
    ///   - x: a limb.
    ///   - y: a limb.
    ///   - borrow: the borrow in; the borrow out on return.
    /// - Returns: the difference modulo 2⁶⁴.
    @inline(__always)
    static func subtractWithBorrow(_ x: UInt64, _ y: UInt64, _ borrow: inout UInt64) -> UInt64 {
        #if os(Linux)
        return subtractWithBorrowWide(x, y, &borrow)
        #else
        return subtractWithBorrowPortable(x, y, &borrow)
        #endif
    }

    /// ``subtractWithBorrow(_:_:_:)`` in `UInt128`.
    ///
    /// - Parameters:
    ///   - x: a limb.
    ///   - y: a limb.
    ///   - borrow: the borrow in; the borrow out on return.
    /// - Returns: the difference modulo 2⁶⁴.
    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    @inline(__always)
    static func subtractWithBorrowWide(_ x: UInt64, _ y: UInt64, _ borrow: inout UInt64) -> UInt64 {
        let difference = UInt128(_low: x, _high: 0) &- UInt128(_low: y, _high: 0) &- UInt128(_low: borrow, _high: 0)
        borrow = difference._high & 1
        return difference._low
    }

    /// ``subtractWithBorrow(_:_:_:)`` with overflow-reporting subtractions.
    ///
    /// - Parameters:
    ///   - x: a limb.
    ///   - y: a limb.
    ///   - borrow: the borrow in; the borrow out on return.
    /// - Returns: the difference modulo 2⁶⁴.
    @inline(__always)
    static func subtractWithBorrowPortable(_ x: UInt64, _ y: UInt64, _ borrow: inout UInt64) -> UInt64 {
        let (d1, o1) = x.subtractingReportingOverflow(y)
        let (d2, o2) = d1.subtractingReportingOverflow(borrow)
        borrow = (o1 ? 1 : 0) &+ (o2 ? 1 : 0)
        return d2
    }

    /// x·y as two limbs.
    ///
    /// - Parameters:
    ///   - x: a limb.
    ///   - y: a limb.
    /// - Returns: the product's high and low 64 bits.
    @inline(__always)
    static func wideProduct(_ x: UInt64, _ y: UInt64) -> (high: UInt64, low: UInt64) {
        #if os(Linux)
        return wideProductWide(x, y)
        #else
        return x.multipliedFullWidth(by: y)
        #endif
    }

    /// ``wideProduct(_:_:)`` in `UInt128` (the portable one is the standard library's `multipliedFullWidth(by:)`).
    ///
    /// - Parameters:
    ///   - x: a limb.
    ///   - y: a limb.
    /// - Returns: the product's high and low 64 bits.
    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    @inline(__always)
    static func wideProductWide(_ x: UInt64, _ y: UInt64) -> (high: UInt64, low: UInt64) {
        let product = UInt128(_low: x, _high: 0) &* UInt128(_low: y, _high: 0)
        return (product._high, product._low)
    }

    /// x·y + c + d as a limb and its carry limb (never more than 2¹²⁸ − 1, so no carry is lost).
    ///
    /// - Parameters:
    ///   - x: a limb.
    ///   - y: a limb.
    ///   - c: a limb added to the product.
    ///   - d: another limb added to the product.
    /// - Returns: the low 64 bits, then the high 64 bits.
    @inline(__always)
    static func multiplyAdd(_ x: UInt64, _ y: UInt64, _ c: UInt64, _ d: UInt64) -> (UInt64, UInt64) {
        #if os(Linux)
        return multiplyAddWide(x, y, c, d)
        #else
        return multiplyAddPortable(x, y, c, d)
        #endif
    }

    /// ``multiplyAdd(_:_:_:_:)`` in `UInt128`.
    ///
    /// - Parameters:
    ///   - x: a limb.
    ///   - y: a limb.
    ///   - c: a limb added to the product.
    ///   - d: another limb added to the product.
    /// - Returns: the low 64 bits, then the high 64 bits.
    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    @inline(__always)
    static func multiplyAddWide(_ x: UInt64, _ y: UInt64, _ c: UInt64, _ d: UInt64) -> (UInt64, UInt64) {
        let total = UInt128(_low: x, _high: 0) &* UInt128(_low: y, _high: 0) &+ UInt128(_low: c, _high: 0)
            &+ UInt128(_low: d, _high: 0)
        return (total._low, total._high)
    }

    /// ``multiplyAdd(_:_:_:_:)`` with `multipliedFullWidth(by:)` and overflow-reporting additions.
    ///
    /// - Parameters:
    ///   - x: a limb.
    ///   - y: a limb.
    ///   - c: a limb added to the product.
    ///   - d: another limb added to the product.
    /// - Returns: the low 64 bits, then the high 64 bits.
    @inline(__always)
    static func multiplyAddPortable(_ x: UInt64, _ y: UInt64, _ c: UInt64, _ d: UInt64) -> (UInt64, UInt64) {
        let (high, low) = x.multipliedFullWidth(by: y)
        let (s1, o1) = low.addingReportingOverflow(c)
        let (s2, o2) = s1.addingReportingOverflow(d)
        return (s2, high &+ (o1 ? 1 : 0) &+ (o2 ? 1 : 0))
    }

    /// x + y + z as a limb and its carry (0, 1 or 2).
    ///
    /// - Parameters:
    ///   - x: a limb.
    ///   - y: a limb.
    ///   - z: a limb.
    /// - Returns: the sum's low 64 bits, then its carry.
    @inline(__always)
    static func sum(_ x: UInt64, _ y: UInt64, _ z: UInt64) -> (UInt64, UInt64) {
        #if os(Linux)
        return sumWide(x, y, z)
        #else
        return sumPortable(x, y, z)
        #endif
    }

    /// ``sum(_:_:_:)`` in `UInt128`.
    ///
    /// - Parameters:
    ///   - x: a limb.
    ///   - y: a limb.
    ///   - z: a limb.
    /// - Returns: the sum's low 64 bits, then its carry.
    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    @inline(__always)
    static func sumWide(_ x: UInt64, _ y: UInt64, _ z: UInt64) -> (UInt64, UInt64) {
        let total = UInt128(_low: x, _high: 0) &+ UInt128(_low: y, _high: 0) &+ UInt128(_low: z, _high: 0)
        return (total._low, total._high)
    }

    /// ``sum(_:_:_:)`` with overflow-reporting additions.
    ///
    /// - Parameters:
    ///   - x: a limb.
    ///   - y: a limb.
    ///   - z: a limb.
    /// - Returns: the sum's low 64 bits, then its carry.
    @inline(__always)
    static func sumPortable(_ x: UInt64, _ y: UInt64, _ z: UInt64) -> (UInt64, UInt64) {
        let (s1, o1) = x.addingReportingOverflow(y)
        let (s2, o2) = s1.addingReportingOverflow(z)
        return (s2, (o1 ? 1 : 0) &+ (o2 ? 1 : 0))
    }
}
