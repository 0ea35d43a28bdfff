import Testing

@testable import Attribution

// Linux only: the `UInt128` variants need macOS 15 elsewhere, and Linux, where CI runs, is where both are compiled.
#if os(Linux)
/// Both implementations of each limb step (``LimbArithmetic``), the `UInt128` one Linux runs and the portable one
/// other platforms run, give the same limbs and carries: over every combination of edge values, and over seeded
/// random values. Also P-256's reduction step by shifts, against the multiplication it replaces.
@Suite("Limb arithmetic: the wide and portable variants agree")
struct LimbArithmeticTests {
    /// Limbs at the edges of carries and borrows.
    static let edges: [UInt64] = [0, 1, 2, 0x7FFF_FFFF_FFFF_FFFF, 0x8000_0000_0000_0000, 0xFFFF_FFFF, 0x1_0000_0000,
                                  .max - 1, .max]

    /// One case: three limbs and a carry in (0 or 1).
    struct Case: CustomTestStringConvertible, Sendable {
        let x: UInt64
        let y: UInt64
        let z: UInt64
        let carry: UInt64

        var testDescription: String {
            "x 0x\(String(x, radix: 16)), y 0x\(String(y, radix: 16)), z 0x\(String(z, radix: 16)), carry \(carry)"
        }
    }

    /// Every pair of edge values with each carry in, z the edge value at (x mod 7 + y mod 5).
    static let edgeCases: [Case] = edges.flatMap { x in
        edges.flatMap { y in
            [0, 1].map { carry in Case(x: x, y: y, z: edges[(Int(x % 7) + Int(y % 5)) % edges.count], carry: carry) }
        }
    }

    /// Asserts that every step's two variants agree on `value`.
    static func expectAgreement(_ value: Case) {
        var wideCarry = value.carry, portableCarry = value.carry
        #expect(LimbArithmetic.addWithCarryWide(value.x, value.y, &wideCarry)
                    == LimbArithmetic.addWithCarryPortable(value.x, value.y, &portableCarry))
        #expect(wideCarry == portableCarry && wideCarry <= 1)
        var wideBorrow = value.carry, portableBorrow = value.carry
        #expect(LimbArithmetic.subtractWithBorrowWide(value.x, value.y, &wideBorrow)
                    == LimbArithmetic.subtractWithBorrowPortable(value.x, value.y, &portableBorrow))
        #expect(wideBorrow == portableBorrow && wideBorrow <= 1)
        #expect(LimbArithmetic.wideProductWide(value.x, value.y) == value.x.multipliedFullWidth(by: value.y))
        #expect(LimbArithmetic.multiplyAddWide(value.x, value.y, value.z, value.carry)
                    == LimbArithmetic.multiplyAddPortable(value.x, value.y, value.z, value.carry))
        #expect(LimbArithmetic.sumWide(value.x, value.y, value.z)
                    == LimbArithmetic.sumPortable(value.x, value.y, value.z))
        // p₁ and p₃, the limbs of P-256's p that the reduction multiplies by shifts.
        for limb: UInt64 in [0x0000_0000_FFFF_FFFF, 0xFFFF_FFFF_0000_0001] {
            #expect(P256Field.reductionProduct(value.x, limb, value.y, value.z)
                        == LimbArithmetic.multiplyAddPortable(value.x, limb, value.y, value.z))
        }
    }

    @Test("Edge values: both variants of every step agree", arguments: edgeCases)
    func edgeValues(_ value: Case) {
        Self.expectAgreement(value)
    }

    @Test("Known answers at the edges, so that two variants wrong alike would fail")
    func knownAnswers() {
        var carry: UInt64 = 1
        #expect(LimbArithmetic.addWithCarryPortable(.max, .max, &carry) == .max && carry == 1)
        carry = 1
        #expect(LimbArithmetic.addWithCarryWide(.max, 0, &carry) == 0 && carry == 1)
        var borrow: UInt64 = 1
        #expect(LimbArithmetic.subtractWithBorrowPortable(0, .max, &borrow) == 0 && borrow == 1)
        borrow = 1
        #expect(LimbArithmetic.subtractWithBorrowWide(1, 0, &borrow) == 0 && borrow == 0)
        #expect(LimbArithmetic.wideProductWide(.max, .max) == (.max - 1, 1))
        // (2⁶⁴ − 1)² + 2·(2⁶⁴ − 1) = 2¹²⁸ − 1: the largest multiply-add, no carry lost.
        #expect(LimbArithmetic.multiplyAddPortable(.max, .max, .max, .max) == (.max, .max))
        #expect(LimbArithmetic.multiplyAddWide(.max, .max, .max, .max) == (.max, .max))
        #expect(LimbArithmetic.sumPortable(.max, .max, .max) == (.max - 2, 2))
        #expect(LimbArithmetic.sumWide(.max, .max, .max) == (.max - 2, 2))
    }

    @Test("Seeded random values: both variants of every step agree")
    func random() {
        var generator = TestSeed.generator(for: "LimbArithmeticTests.random")
        for _ in 0..<20_000 {
            // Half the limbs near an edge, so carries and borrows happen often.
            func limb() -> UInt64 {
                let value = generator.next()
                return value & 1 == 0 ? value : (value >> 60 == 0 ? UInt64.max - (value >> 58) : value >> 58)
            }
            Self.expectAgreement(Case(x: limb(), y: limb(), z: limb(), carry: generator.next() & 1))
        }
    }
}
#endif
