import CAttributionOpenSSL
import Testing

@testable import Attribution

/// A curve's scalars as fixed limbs (``P256Scalar``, ``P192Scalar``): what ``ScalarReference`` needs to hand them to
/// libcrypto and back.
protocol ScalarLimbs {
    associatedtype Element
    /// libcrypto's curve, whose order n the reference reduces by.
    static var curve: Int32 { get }
    /// Bytes in a scalar.
    static var byteCount: Int { get }
    /// The big-endian bytes of a number (``byteCount`` of them).
    static func bytes(_ value: Element) -> [UInt8]
    /// The number of ``byteCount`` big-endian bytes.
    static func limbs(_ bytes: [UInt8]) -> Element
}

enum P256Limbs: ScalarLimbs {
    static let curve = NID_X9_62_prime256v1
    static let byteCount = 32
    static func bytes(_ value: P256Scalar.Element) -> [UInt8] {
        [value.3, value.2, value.1, value.0].flatMap { limb in
            (0..<8).reversed().map { UInt8(truncatingIfNeeded: limb >> (8 * $0)) }
        }
    }
    static func limbs(_ bytes: [UInt8]) -> P256Scalar.Element {
        bytes.withUnsafeBufferPointer { P256Field.number(bigEndian: $0, at: 0) }
    }
}

enum P192Limbs: ScalarLimbs {
    static let curve = NID_X9_62_prime192v1
    static let byteCount = 24
    static func bytes(_ value: P192Scalar.Element) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: 24) { buffer, count in
            P192Scalar.write(value, bigEndianInto: buffer)
            count = 24
        }
    }
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
