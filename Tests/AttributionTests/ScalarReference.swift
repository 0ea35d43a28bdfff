import CAttributionOpenSSL
import Testing

@_spi(CommandLine) @_spi(Servers) @_spi(Stores) @testable import Attribution

/// A curve's scalar arithmetic (``Scalar``) as ``ScalarChecks`` holds it to libcrypto: its edge values, and how to
/// hand a number to libcrypto and back.
protocol ScalarLimbs {
    associatedtype Scalar: ModularScalar
    typealias Element = Scalar.Element
    /// libcrypto's curve, whose order n the reference reduces by.
    static var curve: Int32 { get }
    /// Bytes in a scalar.
    static var byteCount: Int { get }
    /// Edge values: 0, 1, 2, n − 1, n, n + 1, all ones, one word set, and n's words with the top one's half.
    static var edges: [Element] { get }
    /// 1 as a plain number: a Montgomery product with it gives a Montgomery form's plain value.
    static var plainOne: Element { get }
    /// The big-endian bytes of a number (``byteCount`` of them).
    static func bytes(_ value: Element) -> [UInt8]
    /// The number of ``byteCount`` big-endian bytes.
    static func limbs(_ bytes: [UInt8]) -> Element
}

extension ScalarLimbs {
    static var bitCount: Int32 { Int32(8 * byteCount) }
    static var order: Element { Scalar.order }
    /// The big-endian bytes of limbs given most significant first.
    static func bigEndian(_ limbs: [UInt64]) -> [UInt8] {
        limbs.flatMap { limb in (0..<8).reversed().map { UInt8(truncatingIfNeeded: limb >> (8 * $0)) } }
    }
    static func equal(_ a: Element, _ b: Element) -> Bool { bytes(a) == bytes(b) }
    static func isZero(_ a: Element) -> Bool { bytes(a).allSatisfy { $0 == 0 } }
    /// A number of ``byteCount`` random bytes (any value below 2^(8·byteCount), n and above included).
    static func random(using generator: inout some RandomNumberGenerator) -> Element {
        limbs((0..<byteCount).map { _ in UInt8.random(in: 0...255, using: &generator) })
    }

    static func reduced(_ a: Element) -> Element { Scalar.reduced(a) }
    static func isInRange(_ a: Element) -> Bool { Scalar.isInRange(a) }
    static func addingOrder(_ a: Element) -> (sum: Element, carry: UInt64) { Scalar.addingOrder(a) }
    static func montgomery(_ a: Element) -> Element { Scalar.montgomery(a) }
    static func multiply(_ a: Element, _ b: Element) -> Element { Scalar.multiply(a, b) }
    static func inverse(_ a: Element) -> Element { Scalar.inverse(a) }
}

enum P256Limbs: ScalarLimbs {
    typealias Scalar = P256Scalar
    static let curve = NID_X9_62_prime256v1
    static let byteCount = 32
    static let edges: [P256Scalar.Element] = {
        let n = P256Scalar.order
        return [(0, 0, 0, 0), (1, 0, 0, 0), (2, 0, 0, 0), (n.0 - 1, n.1, n.2, n.3), n, (n.0 + 1, n.1, n.2, n.3),
                (.max, .max, .max, .max), (0, 1, 0, 0), (0, 0, 1, 0), (0, 0, 0, 1), (.max, 0, 0, 0), (0, 0, 0, .max),
                (n.0, n.1, n.2, 0), (0, 0, 0, n.3 >> 1)]
    }()
    static let plainOne: P256Scalar.Element = (1, 0, 0, 0)
    static func bytes(_ value: P256Scalar.Element) -> [UInt8] { bigEndian([value.3, value.2, value.1, value.0]) }
    static func limbs(_ bytes: [UInt8]) -> P256Scalar.Element {
        bytes.withUnsafeBufferPointer { P256Field.number(bigEndian: $0, at: 0) }
    }
}

enum P192Limbs: ScalarLimbs {
    typealias Scalar = P192Scalar
    static let curve = NID_X9_62_prime192v1
    static let byteCount = 24
    static let edges: [P192Scalar.Element] = {
        let n = P192Scalar.order
        return [(0, 0, 0), (1, 0, 0), (2, 0, 0), (n.0 - 1, n.1, n.2), n, (n.0 + 1, n.1, n.2), (.max, .max, .max),
                (0, 1, 0), (0, 0, 1), (.max, 0, 0), (0, 0, .max), (n.0, n.1, 0), (0, 0, n.2 >> 1)]
    }()
    static let plainOne: P192Scalar.Element = (1, 0, 0)
    static func bytes(_ value: P192Scalar.Element) -> [UInt8] { bigEndian([value.2, value.1, value.0]) }
    static func limbs(_ bytes: [UInt8]) -> P192Scalar.Element {
        bytes.withUnsafeBufferPointer { P192Scalar.number(bigEndian: $0, at: 0) }
    }
}

/// libcrypto's `BIGNUM` arithmetic modulo a curve's order n (n from libcrypto's own curve), on fixed limbs: every
/// expected value of the scalar suites comes from here.
final class ScalarReference<Limbs: ScalarLimbs> {
    let context = BN_CTX_new()!
    let order = BN_new()!

    init() throws {
        let group = try #require(EC_GROUP_new_by_curve_name(Limbs.curve))
        defer { EC_GROUP_free(group) }
        #expect(BN_copy(order, EC_GROUP_get0_order(group)) != nil)
    }

    deinit {
        BN_free(order)
        BN_CTX_free(context)
    }

    /// `body` over libcrypto numbers of `values`, its result number back as limbs.
    func compute(_ values: [Limbs.Element], _ body: ([OpaquePointer], OpaquePointer) -> Int32) -> Limbs.Element? {
        let width = Int32(Limbs.byteCount)
        let numbers = values.map { value in
            Limbs.bytes(value).withUnsafeBufferPointer { BN_bin2bn($0.baseAddress, width, nil)! }
        }
        let result = BN_new()!
        defer { (numbers + [result]).forEach { BN_free($0) } }
        guard body(numbers, result) == 1 else { return nil }
        var out = [UInt8](repeating: 0, count: Limbs.byteCount)
        guard BN_bn2binpad(result, &out, width) == width else { return nil }
        return Limbs.limbs(out)
    }

    func modMul(_ a: Limbs.Element, _ b: Limbs.Element) -> Limbs.Element? {
        compute([a, b]) { numbers, result in BN_mod_mul(result, numbers[0], numbers[1], order, context) }
    }

    func modInverse(_ a: Limbs.Element) -> Limbs.Element? {
        compute([a]) { numbers, result in BN_mod_inverse(result, numbers[0], order, context) != nil ? 1 : 0 }
    }

    func mod(_ a: Limbs.Element) -> Limbs.Element? {
        compute([a]) { numbers, result in BN_nnmod(result, numbers[0], order, context) }
    }
}

/// The checks `ScalarTests` makes of each curve's scalars, over its edge values and random ones, every expected value
/// from ``ScalarReference``.
enum ScalarChecks<Limbs: ScalarLimbs> {
    static func equal(_ a: Limbs.Element?, _ b: Limbs.Element?) -> Bool {
        guard let a, let b else { return false }
        return Limbs.equal(a, b)
    }

    /// The plain value of a number in Montgomery form.
    static func plain(_ a: Limbs.Element) -> Limbs.Element { Limbs.multiply(a, Limbs.plainOne) }

    /// Reduction, the range of r and s, and r + n (the number libcrypto adds up: its low bits and whether it has one
    /// more).
    static func reductionAndRange(edges: [Limbs.Element]) throws {
        let reference = try ScalarReference<Limbs>()
        var generator = TestSeed.generator(for: "ScalarChecks<\(Limbs.self)>.reductionAndRange")
        for value in edges + (0..<2000).map({ _ in Limbs.random(using: &generator) }) {
            #expect(equal(Limbs.reduced(value), reference.mod(value)), "\(value)")
            let inRange = !Limbs.isZero(value) && reference.mod(value).map { Limbs.equal($0, value) } == true
            #expect(Limbs.isInRange(value) == inRange, "\(value)")
            let sum = Limbs.addingOrder(value)
            var overflows = false
            let expected = reference.compute([value, Limbs.order]) { numbers, result in
                guard BN_add(result, numbers[0], numbers[1]) == 1 else { return 0 }
                overflows = BN_num_bits(result) > Limbs.bitCount
                return overflows ? BN_mask_bits(result, Limbs.bitCount) : 1
            }
            #expect(sum.carry == (overflows ? 1 : 0), "\(value)")
            #expect(equal(sum.sum, expected), "\(value)")
        }
    }

    /// Montgomery forms and products: a·b mod n for edge and random a, b below n; a plain number times one in
    /// Montgomery form is the plain product (how u1 and u2 are made).
    static func products(edges: [Limbs.Element]) throws {
        let reference = try ScalarReference<Limbs>()
        var generator = TestSeed.generator(for: "ScalarChecks<\(Limbs.self)>.products")
        let values = edges.map(Limbs.reduced) + (0..<300).map { _ in Limbs.reduced(Limbs.random(using: &generator)) }
        for a in values {
            #expect(equal(plain(Limbs.montgomery(a)), a), "\(a)")
            for b in values.prefix(40) {
                let product = plain(Limbs.multiply(Limbs.montgomery(a), Limbs.montgomery(b)))
                #expect(equal(product, reference.modMul(a, b)), "\(a) \(b)")
                #expect(equal(Limbs.multiply(a, Limbs.montgomery(b)), reference.modMul(a, b)))
            }
        }
    }

    /// s⁻¹ mod n as libcrypto's `BN_mod_inverse` computes it, for edge and random s in 1 … n − 1.
    static func inverses(edges: [Limbs.Element]) throws {
        let reference = try ScalarReference<Limbs>()
        var generator = TestSeed.generator(for: "ScalarChecks<\(Limbs.self)>.inverses")
        let values = edges.map(Limbs.reduced) + (0..<200).map { _ in Limbs.reduced(Limbs.random(using: &generator)) }
        for s in values where !Limbs.isZero(s) {
            #expect(equal(plain(Limbs.inverse(Limbs.montgomery(s))), reference.modInverse(s)), "\(s)")
        }
    }
}

/// One of ``ScalarChecks``' checks, for a curve chosen at run time (``run(_:on:)``).
enum ScalarCheck {
    case reductionAndRange, products, inverses
}

/// Runs `check` on the scalars of `limbs` (passed as `any ScalarLimbs.Type`, it is opened here).
func run<Limbs: ScalarLimbs>(_ check: ScalarCheck, on _: Limbs.Type) throws {
    switch check {
    case .reductionAndRange: try ScalarChecks<Limbs>.reductionAndRange(edges: Limbs.edges)
    case .products: try ScalarChecks<Limbs>.products(edges: Limbs.edges)
    case .inverses: try ScalarChecks<Limbs>.inverses(edges: Limbs.edges)
    }
}
