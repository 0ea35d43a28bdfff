@_spi(CommandLine) @_spi(Servers) @_spi(Stores) @testable import Attribution
import CAttributionOpenSSL
import Foundation

// libFuzzer target `fuzz-ecdsa-differential`: the fixed-limb table paths against libcrypto's EVP_PKEY_verify.
//
// Every input is read as one ECDSA check (`Check.decode`): a curve, a key, a digest, r and s, and a mutation. The
// keys are Apple's three AdAttributionKit P-256 keys (production, development 0 and 1; the production key is also
// SKAdNetwork's P-256 key), Apple's SKAdNetwork P-192 key, and one P-256 and one P-192 key whose private scalar is
// fixed here, so the target signs digests itself (a deterministic nonce from the input) and mutates valid
// signatures; or, when the input asks for it, a key derived from a private scalar d, one of the edge scalars below
// or read from the input (mod n, 1 for 0; its public point d·G from libcrypto), which the target signs with in the
// same way. A derived key's table of multiples costs milliseconds, so the 16 derived keys of each curve used last
// are kept with their tables, and inputs with a scalar of their own are not kept in the corpus. The mutations:
// high S (n − s), a one-bit change of r, s or the digest, r or s replaced by an edge scalar (0, 1, 2, n − 2,
// n − 1, n, n + 1, (n ± 1)/2, p − 1, p, 2^(8·size−1), 2^(8·size) − 1), r + n, r and s swapped, or another key
// (from a derived key, any fixed one). The answers must agree:
// - P-256: `P256BatchVerifier` with every key's table of multiples (``P256KeyTable``), the check alone and in a
//   batch beside a valid check, against `isValidES256Signature(_:digest:)` (EVP_PKEY_verify); for a derived key,
//   also a `P256BatchVerifier` without any table (libcrypto's `EC_POINT_mul`), alone and in the same batch;
// - P-192: ``P192KeyTable/isValidSignature(r:s:digest:)`` against `EVP_PKEY_verify` on the DER of the same r‖s.
// A signature the target made and did not break (no mutation, or high S) must also be valid to EVP_PKEY_verify,
// so the signer cannot silently stop producing valid cases. Any disagreement traps with the check in hex.

/// A curve the target checks, with what signing and edge scalars need: libcrypto's group, n and p.
final class Curve {
    /// Which curve.
    let curve: ECPublicKey.Curve
    /// libcrypto's group (kept for the process's life).
    let group: OpaquePointer
    /// n, big-endian, `size` bytes.
    let order: [UInt8]
    /// p, big-endian, `size` bytes.
    let prime: [UInt8]
    /// Bytes in r, s and a coordinate: 32 for P-256, 24 for P-192.
    let size: Int
    /// The keys a check may name: the signing key first, then Apple's.
    let keys: [ECPublicKey]
    /// The signing key's private scalar (big-endian, `size` bytes).
    let privateScalar: [UInt8]
    /// Edge scalars, big-endian, `size` bytes each.
    let edges: [[UInt8]]

    /// The curve libcrypto names `nid`, its signing key of private scalar `hex`, and Apple's keys on it.
    init(_ curve: ECPublicKey.Curve, nid: Int32, privateScalar hex: String, apple: [ECPublicKey]) {
        guard let group = EC_GROUP_new_by_curve_name(nid), let context = BN_CTX_new() else {
            fatalError("libcrypto has no group \(curve)")
        }
        defer { BN_CTX_free(context) }
        let size = curve.coordinateByteCount
        let prime = BN_new()!
        defer { BN_free(prime) }
        guard EC_GROUP_get_curve(group, prime, nil, nil, context) == 1 else { fatalError("no p for \(curve)") }
        self.curve = curve
        self.group = group
        self.size = size
        order = Self.bytes(EC_GROUP_get0_order(group)!, size)
        self.prime = Self.bytes(prime, size)
        privateScalar = Self.bytes(hex: hex, size)
        guard let signingKey = Self.publicKey(curve, group: group, privateScalar: privateScalar) else {
            fatalError("the \(curve) signing key did not load")
        }
        keys = [signingKey] + apple
        // n ± small, (n ± 1)/2, p − 1, p, the top bit alone, all ones (2^256 − 1 for P-256).
        let n = order
        func plus(_ value: [UInt8], _ delta: Int) -> [UInt8] { Self.add(value, delta) }
        var half = [UInt8](repeating: 0, count: size)
        half[0] = 0x80
        edges = [plus([UInt8](repeating: 0, count: size), 0), plus([UInt8](repeating: 0, count: size), 1),
                 plus([UInt8](repeating: 0, count: size), 2), plus(n, -2), plus(n, -1), n, plus(n, 1),
                 Self.halve(plus(n, -1)), Self.halve(plus(n, 1)), plus(self.prime, -1), self.prime, half,
                 [UInt8](repeating: 0xFF, count: size)]
    }

    /// The public key d·G of private scalar d = `privateScalar` (big-endian, 1 ≤ d < n), loaded as the verifier
    /// loads keys (DER SubjectPublicKeyInfo); nil if libcrypto fails.
    static func publicKey(_ curve: ECPublicKey.Curve, group: OpaquePointer, privateScalar: [UInt8]) -> ECPublicKey? {
        guard let context = BN_CTX_new(), let point = EC_POINT_new(group) else { fatalError("out of memory") }
        let d = number(privateScalar)
        defer {
            BN_free(d)
            EC_POINT_free(point)
            BN_CTX_free(context)
        }
        var encoded = [UInt8](repeating: 0, count: 1 + 2 * curve.coordinateByteCount)
        guard EC_POINT_mul(group, point, d, nil, nil, context) == 1,
              EC_POINT_point2oct(group, point, POINT_CONVERSION_UNCOMPRESSED, &encoded, encoded.count, context)
              == encoded.count else { return nil }
        return try? ECPublicKey(derRepresentation: curve.subjectPublicKeyInfoPrefix + encoded, curve: curve)
    }

    /// Derived keys kept (``DerivedKey``): a table of multiples costs milliseconds, a check microseconds.
    static let derivedKeyLimit = 16
    /// The derived keys kept, at most ``derivedKeyLimit``, least recently used first.
    private(set) var derivedKeys: [DerivedKey] = []
    /// Derived keys built (each with its tables) since the process started.
    private(set) var derivedKeysBuilt = 0

    /// The key of private scalar `bytes` (big-endian, `size` bytes) mod n, 1 when that is 0: a kept one, or built
    /// now with its tables (evicting the least recently used when ``derivedKeyLimit`` are kept).
    func derivedKey(_ bytes: [UInt8]) -> DerivedKey {
        let d = reduced(bytes)
        if let index = derivedKeys.firstIndex(where: { $0.privateScalar == d }) {
            let kept = derivedKeys.remove(at: index)
            derivedKeys.append(kept)
            return kept
        }
        let built = DerivedKey(self, privateScalar: d)
        if derivedKeys.count >= Self.derivedKeyLimit { derivedKeys.removeFirst() }
        derivedKeys.append(built)
        derivedKeysBuilt += 1
        return built
    }

    /// `bytes` (big-endian) mod n as `size` bytes, 1 when that is 0: a valid private scalar.
    func reduced(_ bytes: [UInt8]) -> [UInt8] {
        guard let context = BN_CTX_new() else { fatalError("out of memory") }
        let (value, n) = (Self.number(bytes), Self.number(order))
        defer {
            BN_free(value)
            BN_free(n)
            BN_CTX_free(context)
        }
        guard BN_nnmod(value, value, n, context) == 1, BN_is_zero(value) == 0 || BN_set_word(value, 1) == 1 else {
            fatalError("libcrypto failed to reduce a private scalar")
        }
        return Self.bytes(value, size)
    }

    /// `value + delta` (|delta| small) on `value.count` big-endian bytes, wrapping.
    static func add(_ value: [UInt8], _ delta: Int) -> [UInt8] {
        var out = value
        var carry = delta
        for index in out.indices.reversed() where carry != 0 {
            let sum = Int(out[index]) + carry
            out[index] = UInt8(truncatingIfNeeded: sum)
            carry = sum >> 8
        }
        return out
    }

    /// `value / 2` on big-endian bytes.
    static func halve(_ value: [UInt8]) -> [UInt8] {
        var out = value
        var carry: UInt8 = 0
        for index in out.indices {
            let byte = out[index]
            out[index] = byte >> 1 | carry << 7
            carry = byte & 1
        }
        return out
    }

    /// A new BIGNUM of big-endian bytes (the caller frees it).
    static func number(_ bytes: [UInt8]) -> OpaquePointer {
        bytes.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress, Int32($0.count), nil)! }
    }

    /// `size` big-endian bytes of a number below 2^(8·size).
    static func bytes(_ number: OpaquePointer, _ size: Int) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: size)
        precondition(BN_bn2binpad(number, &out, Int32(size)) == Int32(size), "a number of more than \(size) bytes")
        return out
    }

    /// `size` big-endian bytes of a hexadecimal constant.
    static func bytes(hex: String, _ size: Int) -> [UInt8] {
        var number: OpaquePointer?
        guard BN_hex2bn(&number, hex) > 0, let number else { fatalError("bad hex \(hex)") }
        defer { BN_free(number) }
        return bytes(number, size)
    }

    /// ECDSA (SEC 1 §4.1.3) of `digest` with private scalar d = `privateScalar` (big-endian, `size` bytes; the
    /// signing key's by default) and nonce k = `nonce` mod n (1 when that is 0): r = x(k·G) mod n,
    /// s = k⁻¹·(e + r·d) mod n with e the digest's leftmost 8·size bits. Nil when r or s is 0.
    func sign(_ digest: [UInt8], nonce: [UInt8], privateScalar: [UInt8]? = nil) -> (r: [UInt8], s: [UInt8])? {
        let privateScalar = privateScalar ?? self.privateScalar
        guard let context = BN_CTX_new(), let point = EC_POINT_new(group) else { fatalError("out of memory") }
        BN_CTX_start(context)
        defer {
            BN_CTX_end(context)
            BN_CTX_free(context)
            EC_POINT_free(point)
        }
        guard let n = BN_CTX_get(context), let k = BN_CTX_get(context), let x = BN_CTX_get(context),
              let r = BN_CTX_get(context), let s = BN_CTX_get(context), let e = BN_CTX_get(context),
              let d = BN_CTX_get(context), let kInverse = BN_CTX_get(context) else { fatalError("out of memory") }
        let ok = order.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress, Int32(size), n) } != nil
            && nonce.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress, Int32($0.count), k) } != nil
            && BN_nnmod(k, k, n, context) == 1
            && (BN_is_zero(k) == 0 || BN_set_word(k, 1) == 1)
            && EC_POINT_mul(group, point, k, nil, nil, context) == 1
            && EC_POINT_get_affine_coordinates(group, point, x, nil, context) == 1
            && BN_nnmod(r, x, n, context) == 1
            && digest.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress, Int32(size), e) } != nil
            && privateScalar.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress, Int32(size), d) } != nil
            && BN_mod_mul(s, r, d, n, context) == 1
            && BN_mod_add(s, s, e, n, context) == 1
            && BN_mod_inverse(kInverse, k, n, context) != nil
            && BN_mod_mul(s, s, kInverse, n, context) == 1
        precondition(ok, "libcrypto failed to sign")
        guard BN_is_zero(r) == 0, BN_is_zero(s) == 0 else { return nil }
        return (Self.bytes(r, size), Self.bytes(s, size))
    }
}

/// A key whose private scalar d the input chooses, an edge scalar or its own bytes (``Curve/derivedKey(_:)``), with
/// its table of multiples.
final class DerivedKey {
    /// d, big-endian, the curve's `size` bytes, 1 ≤ d < n.
    let privateScalar: [UInt8]
    /// d·G, as the verifier loads keys.
    let key: ECPublicKey
    /// P-256: a batch verifier whose one table is this key's (built here), so the check alone takes the fixed-limb
    /// table path and the batch beside ``validP256Check`` (whose key has no table here) the mixed one. Nil on P-192.
    let p256Verifier: P256BatchVerifier?
    /// P-192: the key's tables. Nil on P-256.
    let p192Table: P192KeyTable?

    /// d·G on `curve` with its table, for d = `privateScalar` (already reduced: 1 ≤ d < n).
    init(_ curve: Curve, privateScalar: [UInt8]) {
        guard let key = Curve.publicKey(curve.curve, group: curve.group, privateScalar: privateScalar) else {
            fatalError("a derived \(curve.curve) key did not load")
        }
        self.privateScalar = privateScalar
        self.key = key
        if curve.curve == .p256 {
            // Threshold 0 and one table at most: the first key counted (this one, by `hasTable`) gets it.
            guard let verifier = P256BatchVerifier(tables: P256KeyTables(threshold: 0, maximumTables: 1)),
                  verifier.hasTable(for: key) else { fatalError("no table for a derived P-256 key") }
            (p256Verifier, p192Table) = (verifier, nil)
        } else {
            guard let table = P192KeyTable(uncompressedPoint: key.uncompressedPoint) else {
                fatalError("no table for a derived P-192 key")
            }
            (p256Verifier, p192Table) = (nil, table)
        }
    }
}

/// P-256: a signing key, then Apple's AdAttributionKit keys (production = SKAdNetwork's P-256 key, development).
let p256 = Curve(.p256, nid: NID_X9_62_prime256v1,
                 privateScalar: "C9AFA9D845BA75166B5C215767B1D6934E50C3DB36E89B127B8A622B120F6721",
                 apple: ApplePublishedKey.all.map(\.publicKey))
/// P-192: a signing key, then Apple's SKAdNetwork 1.0 and 2.0 key.
let p192 = Curve(.p192, nid: NID_X9_62_prime192v1,
                 privateScalar: "6FAB034934E4C0FC9AE67F5B5659A9D7D1FEFD187EE09FD4",
                 apple: [SKAdNetworkKeys.apple.p192.key])

/// A batch verifier whose every key gets its table of multiples on its first signature.
let tableVerifier: P256BatchVerifier = {
    guard let verifier = P256BatchVerifier(tables: P256KeyTables(threshold: 0)) else {
        fatalError("libcrypto could not make a batch verifier")
    }
    return verifier
}()

/// A batch verifier that never has a table (none may be built): every check through libcrypto's `EC_POINT_mul`,
/// the path a derived key's signatures take before its table is built.
let plainVerifier: P256BatchVerifier = {
    guard let verifier = P256BatchVerifier(tables: P256KeyTables(threshold: .max, maximumTables: 0)) else {
        fatalError("libcrypto could not make a batch verifier")
    }
    return verifier
}()

/// One table per P-192 key, built at start-up.
let p192Tables: [P192KeyTable] = p192.keys.map { key in
    guard let table = P192KeyTable(uncompressedPoint: key.uncompressedPoint) else {
        fatalError("no table for a P-192 key")
    }
    return table
}

/// A valid P-256 check, set beside the fuzzed one in a batch (its answer must stay true).
let validP256Check: ES256SignatureCheck = {
    let digest = [UInt8](repeating: 0x5A, count: 32)
    guard let signature = p256.sign(digest, nonce: [UInt8](repeating: 0x33, count: 32)),
          let sha = SHA256Digest(digestBytes: digest) else { fatalError("could not sign the batch's valid check") }
    return ES256SignatureCheck(key: p256.keys[0], signature: signature.r + signature.s, digest: sha)
}()

/// What the input asks for: how r and s are made, and how they are then changed.
/// (Input byte 2, modulo the count of cases.)
enum Mutation: Int, CaseIterable {
    case none, highS, flipR, flipS, flipDigest, edgeR, edgeS, edgeBoth, rPlusN, swap, otherKey
}

/// The fuzz input read as one check.
struct Check {
    /// The curve, and so the size of r and s.
    let curve: Curve
    /// Which of the curve's keys: 0 is the signing key (not used while `derived` is set).
    var keyIndex: Int
    /// The key derived from a private scalar, when the input asks for one: then it is the key checked.
    var derived: DerivedKey?
    /// Whether that private scalar was read from the input's bytes (not one of the curve's edge scalars).
    let scalarFromInput: Bool
    /// The SHA-256 digest checked (32 bytes).
    var digest: [UInt8]
    /// r and s, big-endian, `curve.size` bytes each.
    var r: [UInt8]
    var s: [UInt8]
    /// Whether the target signed (r, s) over the digest with the key checked (the signing key or the derived one)
    /// and no mutation broke it: then it must be valid.
    var mustBeValid: Bool

    /// Layout: curve and mode (byte 0), key (1: with its top bit clear, Apple's or the signing key by the low seven
    /// bits; set, a key derived from a private scalar: by the low four bits one of the edge scalars, or from 13 on
    /// the scalar at bytes 101 ..< 101 + `size`; mod n, 1 for 0), mutation (2), two mutation arguments (3, 4), the
    /// digest (32 bytes), then either r and s (`size` bytes each, mode 0) or a nonce (modes 1 to 3: the target
    /// signs, with the derived key's scalar or the signing key's). Missing bytes are zero.
    static func decode(_ input: UnsafeBufferPointer<UInt8>) -> Check {
        func byte(_ index: Int) -> UInt8 { index < input.count ? input[index] : 0 }
        func bytes(_ start: Int, _ count: Int) -> [UInt8] { (start..<start + count).map(byte) }
        let curve = byte(0) & 1 == 0 ? p256 : p192
        let signs = (byte(0) >> 1) & 3 != 0
        let mutation = Mutation(rawValue: Int(byte(2)) % Mutation.allCases.count)!
        let (argument, second) = (Int(byte(3)), Int(byte(4)))
        let scalarChoice = Int(byte(1) & 0x0F)
        let scalarFromInput = byte(1) & 0x80 != 0 && scalarChoice >= curve.edges.count
        let derived = byte(1) & 0x80 == 0 ? nil
            : curve.derivedKey(scalarFromInput ? bytes(101, curve.size) : curve.edges[scalarChoice])
        var check = Check(curve: curve, keyIndex: Int(byte(1) & 0x7F) % curve.keys.count, derived: derived,
                          scalarFromInput: scalarFromInput, digest: bytes(5, 32), r: bytes(37, curve.size),
                          s: bytes(37 + curve.size, curve.size), mustBeValid: false)
        if signs,
           let signature = curve.sign(check.digest, nonce: bytes(37, 32), privateScalar: derived?.privateScalar) {
            if derived == nil { check.keyIndex = 0 }
            (check.r, check.s, check.mustBeValid) = (signature.r, signature.s, true)
        }
        let n = curve.order
        switch mutation {
        case .none:
            break
        case .highS:
            check.s = subtract(n, check.s)
        case .flipR:
            check.r[argument % curve.size] ^= 1 << (second % 8)
            check.mustBeValid = false
        case .flipS:
            check.s[argument % curve.size] ^= 1 << (second % 8)
            check.mustBeValid = false
        case .flipDigest:
            check.digest[argument % 32] ^= 1 << (second % 8)
            check.mustBeValid = false
        case .edgeR:
            check.r = curve.edges[argument % curve.edges.count]
            check.mustBeValid = false
        case .edgeS:
            check.s = curve.edges[argument % curve.edges.count]
            check.mustBeValid = false
        case .edgeBoth:
            check.r = curve.edges[argument % curve.edges.count]
            check.s = curve.edges[second % curve.edges.count]
            check.mustBeValid = false
        case .rPlusN:
            check.r = addWrapping(check.r, n)
            check.mustBeValid = false
        case .swap:
            (check.r, check.s) = (check.s, check.r)
            check.mustBeValid = false
        case .otherKey:
            if check.derived != nil {
                // From the derived key to any fixed one.
                check.derived = nil
                check.keyIndex = argument % curve.keys.count
            } else {
                check.keyIndex = 1 + argument % (curve.keys.count - 1)
            }
            check.mustBeValid = false
        }
        return check
    }

    /// a − b mod 2^(8·count) on big-endian bytes of one length (n − s for s below n).
    static func subtract(_ a: [UInt8], _ b: [UInt8]) -> [UInt8] {
        var out = a
        var borrow = 0
        for index in out.indices.reversed() {
            let difference = Int(a[index]) - Int(b[index]) - borrow
            out[index] = UInt8(truncatingIfNeeded: difference)
            borrow = difference < 0 ? 1 : 0
        }
        return out
    }

    /// a + b mod 2^(8·count) on big-endian bytes of one length (r + n, which wraps when r + n ≥ 2^(8·size)).
    static func addWrapping(_ a: [UInt8], _ b: [UInt8]) -> [UInt8] {
        var out = a
        var carry = 0
        for index in out.indices.reversed() {
            let sum = Int(a[index]) + Int(b[index]) + carry
            out[index] = UInt8(truncatingIfNeeded: sum)
            carry = sum >> 8
        }
        return out
    }

    /// The key checked: the derived one, or the curve's key at `keyIndex`.
    var key: ECPublicKey { derived?.key ?? curve.keys[keyIndex] }

    /// The check in hex, for a disagreement's message.
    var hex: String {
        func text(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }
        let key = derived.map { "derived from d \(text($0.privateScalar))" } ?? "\(keyIndex)"
        return "\(curve.curve) key \(key) digest \(text(digest)) r \(text(r)) s \(text(s))"
    }
}

/// Inputs run, how many of them were valid, reached R through P-256 tables, or used a derived key (printed every
/// 2^18 inputs).
nonisolated(unsafe) var statistics = (inputs: 0, valid: 0, p256TableChecks: 0, derived: 0)

/// The statistics as one line.
func statisticsLine() -> String {
    "fuzz-ecdsa-differential: \(statistics.inputs) inputs, \(statistics.valid) valid signatures, "
        + "\(statistics.p256TableChecks) P-256 checks reached R through tables, \(statistics.derived) under derived "
        + "keys (\(p256.derivedKeysBuilt) P-256 and \(p192.derivedKeysBuilt) P-192 keys derived)"
}

/// Called by libFuzzer once per input. Returns -1 (checked, but not kept in the corpus) for an input whose private
/// scalar is read from its bytes (``Check/scalarFromInput``): kept, it and its offspring would build a table for
/// nearly every mutation of those bytes (milliseconds each). The corpus keeps the fixed and edge-scalar keys, and
/// their mutants reach input scalars now and then, each a fresh key with its table.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzECDSADifferential(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let check = Check.decode(UnsafeBufferPointer(start: data, count: size))
    guard let digest = SHA256Digest(digestBytes: check.digest) else { fatalError("a digest of 32 bytes refused") }
    let key = check.key
    let raw = check.r + check.s
    let evp: Bool
    if check.curve === p256 {
        evp = key.isValidES256Signature(raw, digest: digest)
        let es256 = ES256SignatureCheck(key: key, signature: raw, digest: digest)
        // A derived key's table is in a verifier of its own; every fixed key's is in `tableVerifier`.
        let verifier = check.derived?.p256Verifier ?? tableVerifier
        let before = verifier.tableChecks
        let alone = verifier.verify([es256])
        statistics.p256TableChecks += verifier.tableChecks - before
        let batch = verifier.verify([es256, validP256Check, es256])
        if alone != [evp] || batch != [evp, true, evp] {
            fatalError("P-256 tables \(alone) (batch \(batch)), EVP_PKEY_verify \(evp): \(check.hex)")
        }
        if check.derived != nil {
            let plainAlone = plainVerifier.verify([es256])
            let plainBatch = plainVerifier.verify([es256, validP256Check, es256])
            if plainAlone != [evp] || plainBatch != [evp, true, evp] {
                fatalError("P-256 without tables \(plainAlone) (batch \(plainBatch)), EVP_PKEY_verify \(evp): "
                           + check.hex)
            }
        }
    } else {
        evp = raw.withUnsafeBytes { raw in
            P1363Signature.withDEREncoding(of: raw) { der in
                digest.withUnsafeBytes { key.evpKey.isValidSignature(der: der, overSHA256Digest: $0) }
            }
        }
        let table = (check.derived?.p192Table ?? p192Tables[check.keyIndex])
            .isValidSignature(r: raw[..<24], s: raw[24...], digest: digest)
        if table != evp {
            fatalError("P-192 table \(table), EVP_PKEY_verify \(evp): \(check.hex)")
        }
    }
    if check.mustBeValid && !evp {
        fatalError("a signature the target made is invalid to EVP_PKEY_verify: \(check.hex)")
    }
    statistics.inputs += 1
    if evp { statistics.valid += 1 }
    if check.derived != nil { statistics.derived += 1 }
    if statistics.inputs & 0x3FFFF == 0 { print(statisticsLine()) }
    return check.scalarFromInput ? -1 : 0
}

/// Builds the keys and tables before the first input, so libFuzzer's timing starts with them ready.
@_cdecl("LLVMFuzzerInitialize")
public func fuzzInitialize(
    _ argc: UnsafeMutablePointer<CInt>?, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
) -> CInt {
    _ = p256.keys
    _ = p192.keys
    _ = p192Tables
    _ = validP256Check
    _ = plainVerifier
    // Every P-256 key gets its table now (threshold 0), and a valid signature goes through it.
    for key in p256.keys {
        precondition(tableVerifier.hasTable(for: key), "no table for a P-256 key")
    }
    precondition(tableVerifier.verify([validP256Check]) == [true], "the tables reject a valid signature")
    atexit { print(statisticsLine() + "; no disagreement") }
    return 0
}
