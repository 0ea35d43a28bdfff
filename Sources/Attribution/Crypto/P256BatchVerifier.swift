internal import CAttributionOpenSSL

/// One thread's ES256 checks of many signatures at once: ECDSA verification (SEC 1 v2 §4.1.4) written out over
/// libcrypto's P-256 arithmetic, with fewer instructions per signature than `EVP_PKEY_verify`.
///
/// The point multiplication u1·G + u2·Q is nearly all of the cost. For a key that has a table of multiples
/// (``P256KeyTable``, built once a key has verified enough signatures, ``P256KeyTables``) it is a sum of points
/// from G's table and the key's, computed for a chunk's signatures together with shared field inversions
/// (``P256KeyTable/sums(digits:keyTables:generator:)``; one by one when the chunk has few); otherwise it is
/// libcrypto's `EC_POINT_mul` (its constant-time P-256 code), which computes u2·Q's multiples afresh. The other
/// steps are the ones where `EVP_PKEY_verify` spends the rest on work a batch shares or a check can skip:
/// - s⁻¹ mod n: one inversion per batch (Montgomery's trick: prefix products, one inversion, three Montgomery
///   multiplications per signature), instead of one inversion per signature; for a chunk whose keys all have
///   tables (the usual one), these scalar steps run on fixed limbs (``P256Scalar``) without a libcrypto call;
/// - x(R) mod n = r: checked as X = r·Z² (mod p) on R's Jacobian coordinates (or, when r + n < p, X = (r + n)·Z²,
///   the only other x with x mod n = r), instead of converting R to affine coordinates with a field inversion;
/// - no DER encoding and decoding of (r, s), no provider dispatch, no `BN_CTX` or point allocated per signature
///   (libcrypto's `malloc` calls fall from 43 to ~11 per signature, those of `EC_POINT_mul` itself).
///
/// Every step is the standard's: r and s in [1, n − 1], e = the digest as an integer (P-256's n has 256 bits, so
/// nothing is truncated) reduced mod n, u1 = e·s⁻¹ and u2 = r·s⁻¹ mod n, R = u1·G + u2·Q, R not the point at
/// infinity, x(R) ≡ r (mod n). The Wycheproof vectors (edge cases of u1, u2, r + n, points at infinity, high s)
/// and a comparison with `EVP_PKEY_verify` on the same signatures check it. A signature it rejects is rejected:
/// the general path words the fast path's rejection without checking it again (a forgery costs one check). R
/// from the tables must be on the curve before it can accept (``P256JacobianPoint/isOnCurve``), so a fault of
/// that arithmetic can only reject.
///
/// Not shared between threads: ``ThreadVerificationContexts`` holds one per thread. Every libcrypto failure
/// counts as an invalid signature.
final class P256BatchVerifier {
    /// Signatures per inversion; longer batches are split (bounds the per-thread numbers kept).
    static let chunkSize = 256
    /// While checking signatures under a key without a table, how often (in signatures) to look whether another
    /// thread has finished building it: a lock and a lookup every 16 checks of ~50 µs each.
    static let tablePollInterval = 16

    private let group: OpaquePointer
    private let context: OpaquePointer
    private let orderMontgomery: OpaquePointer
    private let primeMontgomery: OpaquePointer
    /// n and p of P-256.
    private let order: OpaquePointer
    private let prime: OpaquePointer
    /// Scratch numbers: r, e, u1, u2, X, Z, a product, r + n, the running inverse, s⁻¹.
    private let r, e, u1, u2, x, z, product, rPlusN, inverse, sInverse: OpaquePointer
    /// R, and u1·G and u2·Q when they are computed apart (from tables).
    private let result, generatorMultiple, keyMultiple: OpaquePointer
    /// s of each signature of a chunk in Montgomery form, and the prefix products of those.
    private var sValues: [OpaquePointer] = []
    private var prefixes: [OpaquePointer] = []
    /// Each key used on this thread: its public point Q, its table once it has one, and the key kept alive so its
    /// address is not reused.
    private var keys: [ObjectIdentifier: KnownKey] = [:]
    private static let maximumKeys = 64
    /// Where keys' tables come from (shared by all threads).
    private let tables: P256KeyTables
    /// Signatures checked with tables on this thread (tests check that the table path ran).
    private(set) var tableChecks = 0
    /// Whether the last ``isValid(_:_:_:)`` got as far as R (in `result`, or in ``tableResult``).
    private var multiplied = false
    /// R of the last ``multiply(_:)``, when it came from tables.
    private var tableResult: P256JacobianPoint?
    /// A chunk's signatures under keys with tables, set aside to be summed together
    /// (``answerDeferred(_:into:alternative:)``): u1's and u2's digits, their indices and their keys' tables.
    private var deferredDigits: [Int16] = []
    private var deferredIndices: [Int] = []
    private var deferredTables: [P256KeyTable] = []
    private var deferredGenerator: P256KeyTable?
    /// G's table (``P256KeyTable/generator``), looked up once: reading a global that is initialised lazily costs a
    /// call each time. Only read once a key has a table, so a run without one never builds it.
    private lazy var generatorTable = P256KeyTable.generator
    /// Signatures summed together below which each is summed alone: a signature's 52 shared additions save 5 of
    /// a mixed addition's 11 multiplications each, less the one mixed addition that joins its two halves (~250
    /// in all), and the 26 digit positions' inversions cost ~270 each, so sharing them pays from ~28 signatures
    /// on.
    static let minimumSharedInversions = 32

    private struct KnownKey {
        let owner: EVPPublicKey
        let point: OpaquePointer
        let encodedPoint: [UInt8]
        var table: P256KeyTable?
    }

    init?(tables: P256KeyTables = .shared) {
        OpenSSLLibrary.setUp()
        self.tables = tables
        let numbers = (0..<12).map { _ in BN_new() }
        let (group, context, montgomery, primeMontgomery) = (
            EC_GROUP_new_by_curve_name(NID_X9_62_prime256v1), BN_CTX_new(), BN_MONT_CTX_new(), BN_MONT_CTX_new())
        let result = group.flatMap { EC_POINT_new($0) }
        let generatorMultiple = group.flatMap { EC_POINT_new($0) }
        let keyMultiple = group.flatMap { EC_POINT_new($0) }
        guard let group, let context, let montgomery, let primeMontgomery, let result, let generatorMultiple,
              let keyMultiple,
              numbers.allSatisfy({ $0 != nil }),
              BN_copy(numbers[0], EC_GROUP_get0_order(group)) != nil,
              BN_MONT_CTX_set(montgomery, numbers[0], context) == 1,
              EC_GROUP_get_curve(group, numbers[1], nil, nil, context) == 1,
              BN_MONT_CTX_set(primeMontgomery, numbers[1], context) == 1 else {
            numbers.forEach { BN_free($0) }
            [result, generatorMultiple, keyMultiple].forEach { EC_POINT_free($0) }
            BN_MONT_CTX_free(montgomery)
            BN_MONT_CTX_free(primeMontgomery)
            BN_CTX_free(context)
            EC_GROUP_free(group)
            OpenSSLErrorQueue.clear()
            return nil
        }
        (self.group, self.context, orderMontgomery, self.primeMontgomery) = (
            group, context, montgomery, primeMontgomery)
        (self.result, self.generatorMultiple, self.keyMultiple) = (result, generatorMultiple, keyMultiple)
        (order, prime, r, e, u1, u2) = (numbers[0]!, numbers[1]!, numbers[2]!, numbers[3]!, numbers[4]!, numbers[5]!)
        (x, z, product, rPlusN, inverse, sInverse) = (
            numbers[6]!, numbers[7]!, numbers[8]!, numbers[9]!, numbers[10]!, numbers[11]!)
    }

    deinit {
        (sValues + prefixes + [r, e, u1, u2, x, z, product, rPlusN, inverse, sInverse, order, prime])
            .forEach { BN_free($0) }
        keys.values.forEach { EC_POINT_free($0.point) }
        [result, generatorMultiple, keyMultiple].forEach { EC_POINT_free($0) }
        BN_MONT_CTX_free(orderMontgomery)
        BN_MONT_CTX_free(primeMontgomery)
        BN_CTX_free(context)
        EC_GROUP_free(group)
    }

    /// Whether each signature (64 bytes r‖s) is a valid ECDSA P-256 signature of its SHA-256 digest under its
    /// key (an uncompressed SEC 1 point, 65 bytes): one answer per check, in order.
    func verify(_ checks: [ES256SignatureCheck]) -> [Bool] {
        verify(checks, orElse: []).map(\.first)
    }

    /// As ``verify(_:)``, and for each check whose signature fails and that has an alternative digest
    /// (`alternatives[i]`, nil or absent: none), whether the same signature verifies over that digest instead (an
    /// SKAdNetwork 2.2 postback over its 2.0/2.1 order). The alternative costs a fraction of a verification: with
    /// the same r, s and key only u1 changes, so R' = u1'·G + u2·Q = R + (u1' − u1)·G, one multiple of G (from
    /// libcrypto's built-in table) and one addition.
    func verify(_ checks: [ES256SignatureCheck], orElse alternatives: [SHA256Digest?])
        -> [(first: Bool, alternative: Bool?)] {
        var answers = [(first: Bool, alternative: Bool?)](repeating: (false, nil), count: checks.count)
        for index in alternatives.indices where index < checks.count && alternatives[index] != nil {
            answers[index].alternative = false
        }
        var start = 0
        while start < checks.count {
            let end = min(start + Self.chunkSize, checks.count)
            verifyChunk(checks, start..<end, alternatives: alternatives, into: &answers)
            start = end
        }
        OpenSSLErrorQueue.clear()
        return answers
    }

    private func verifyChunk(
        _ checks: [ES256SignatureCheck], _ range: Range<Int>, alternatives: [SHA256Digest?],
        into answers: inout [(first: Bool, alternative: Bool?)]
    ) {
        if verifyChunkWithTables(checks, range, alternatives: alternatives, into: &answers) { return }
        while sValues.count < range.count {
            guard let value = BN_new(), let prefix = BN_new() else { return }
            sValues.append(value)
            prefixes.append(prefix)
        }
        // The signatures whose r and s are in range, with s in Montgomery form, and their prefix products. Only
        // 64-byte signatures are read (the loop's `where`), 32 bytes of r then 32 of s.
        var candidates: [Int] = []
        candidates.reserveCapacity(range.count)
        for index in range where checks[index].key.curve == .p256 && checks[index].signature.count == 64 {
            let slot = candidates.count
            let inRange = checks[index].signature.withUnsafeBufferPointer { bytes in
                BN_bin2bn(bytes.baseAddress, 32, r) != nil && isInOrderRange(r)
                    && BN_bin2bn(bytes.baseAddress! + 32, 32, sValues[slot]) != nil && isInOrderRange(sValues[slot])
            }
            guard inRange, BN_to_montgomery(sValues[slot], sValues[slot], orderMontgomery, context) == 1 else {
                continue
            }
            let multiplied = slot == 0
                ? BN_copy(prefixes[0], sValues[0]) != nil
                : BN_mod_mul_montgomery(prefixes[slot], prefixes[slot - 1], sValues[slot], orderMontgomery,
                                        context) == 1
            guard multiplied else { continue }
            candidates.append(index)
        }
        let signers = Self.signers(of: checks, candidates)
        // Busy without a table: other threads' counts take this thread's rent into account (P256KeyTables).
        var withoutTable = anyWithoutTable(signers)
        if withoutTable { tables.beginCheckingWithoutTable() }
        defer { if withoutTable { tables.endCheckingWithoutTable() } }
        noteSignatures(of: signers)
        if withoutTable, !anyWithoutTable(signers) {
            tables.endCheckingWithoutTable()
            withoutTable = false
        }
        guard let last = candidates.indices.last,
              BN_from_montgomery(inverse, prefixes[last], orderMontgomery, context) == 1,
              BN_mod_inverse(inverse, inverse, order, context) != nil,
              BN_to_montgomery(inverse, inverse, orderMontgomery, context) == 1 else { return }
        // inverse = (s0·…·sk)⁻¹ in Montgomery form; peel one s off per step, from the last.
        var key: KnownKey?
        var keyID: ObjectIdentifier?
        for slot in candidates.indices.reversed() {
            if slot > 0 {
                guard BN_mod_mul_montgomery(sInverse, inverse, prefixes[slot - 1], orderMontgomery, context) == 1,
                      BN_mod_mul_montgomery(inverse, inverse, sValues[slot], orderMontgomery, context) == 1 else {
                    return
                }
            } else if BN_copy(sInverse, inverse) == nil {
                return
            }
            let index = candidates[slot]
            // The key is looked up when it changes (batches hold one key or a few: no copy per signature), and a
            // table another thread finished building during this chunk is used from here on.
            let id = ObjectIdentifier(checks[index].key.evpKey)
            if id != keyID {
                key = known(checks[index].key)
                keyID = id
            } else if withoutTable, key?.table == nil, slot % Self.tablePollInterval == 0 {
                key = pickUpTable(for: checks[index].key)
            }
            let hasAlternative = index < alternatives.count && alternatives[index] != nil
            if !hasAlternative, let table = key?.table, let generatorTable {
                // Summed with the chunk's other table sums below; answered there.
                if scalars(checks[index].signature, checks[index].digest),
                   let u1 = number(u1), let u2 = number(u2) {
                    setAside(index, table, generatorTable, u1: u1, u2: u2)
                }
                continue
            }
            answers[index].first = isValid(checks[index].signature, checks[index].digest, key)
            if !answers[index].first, index < alternatives.count, let alternative = alternatives[index] {
                answers[index].alternative = multiplied
                    ? isValidAlternative(alternative) : isValid(checks[index].signature, alternative, key)
            }
        }
        answerDeferred(checks, into: &answers)
    }

    /// The usual chunk once a key has its table, on fixed limbs: every signature 64 bytes under a P-256 key with a
    /// table on this thread. r and s are read and range-checked, s⁻¹ for the whole chunk comes from one inversion
    /// (prefix products, as the general steps do with libcrypto's numbers), u1 and u2 are recoded for the tables,
    /// and R is summed and checked by ``answerDeferred(_:into:alternative:)``. A signature that fails and has an
    /// alternative digest (an SKAdNetwork 2.2 postback) is then checked over it, all of the chunk's together: u1' =
    /// e'·s⁻¹ with the same u2, so R' = u1'·G + u2·Q = R + (u1' − u1)·G, half a sum (G's table alone) added to the R
    /// already computed. Every step is the general path's (``P256Scalar``, the standard's
    /// order of checks), without a libcrypto call. False, having answered and counted nothing, for any other
    /// chunk.
    private func verifyChunkWithTables(
        _ checks: [ES256SignatureCheck], _ range: Range<Int>, alternatives: [SHA256Digest?],
        into answers: inout [(first: Bool, alternative: Bool?)]
    ) -> Bool {
        for index in range {
            guard checks[index].key.curve == .p256, checks[index].signature.count == 64 else { return false }
        }
        let signers = Self.signers(of: checks, Array(range))
        var tablesByKey: [ObjectIdentifier: P256KeyTable] = [:]
        for signer in signers {
            guard let table = pickUpTable(for: signer.key)?.table else { return false }
            tablesByKey[signer.id] = table
        }
        guard let generatorTable else { return false }
        noteSignatures(of: signers)
        // The signatures whose r and s are in range, their r, s in Montgomery form, and the prefix products of s.
        var candidates: [Int] = []
        var rValues: [P256Scalar.Element] = []
        var sMontgomery: [P256Scalar.Element] = []
        var sPrefixes: [P256Scalar.Element] = []
        candidates.reserveCapacity(range.count)
        rValues.reserveCapacity(range.count)
        sMontgomery.reserveCapacity(range.count)
        sPrefixes.reserveCapacity(range.count)
        for index in range {
            let r = Self.r(of: checks[index].signature)
            let s = checks[index].signature.withUnsafeBufferPointer { P256Field.number(bigEndian: $0, at: 32) }
            guard P256Scalar.isInRange(r), P256Scalar.isInRange(s) else { continue }
            let montgomery = P256Scalar.montgomery(s)
            sPrefixes.append(sPrefixes.last.map { P256Scalar.multiply($0, montgomery) } ?? montgomery)
            sMontgomery.append(montgomery)
            rValues.append(r)
            candidates.append(index)
        }
        guard let chunkProduct = sPrefixes.last else { return true }
        // running = (s0·…·sk)⁻¹ in Montgomery form; peel one s off per step, from the last.
        var running = P256Scalar.inverse(chunkProduct)
        // The signatures with an alternative digest, with their s⁻¹ and u1, for a second pass if the first fails.
        var withAlternatives: [(index: Int, sInverse: P256Scalar.Element, u1: P256Scalar.Element)] = []
        for slot in candidates.indices.reversed() {
            let sInverse: P256Scalar.Element
            if slot > 0 {
                sInverse = P256Scalar.multiply(running, sPrefixes[slot - 1])
                running = P256Scalar.multiply(running, sMontgomery[slot])
            } else {
                sInverse = running
            }
            let index = candidates[slot]
            // A plain number times one in Montgomery form is the plain product mod n. e < 2²⁵⁶ < 2n.
            let e = P256Scalar.reduced(checks[index].digest.number)
            let u1 = P256Scalar.multiply(e, sInverse)
            let u2 = P256Scalar.multiply(rValues[slot], sInverse)
            setAside(index, tablesByKey[ObjectIdentifier(checks[index].key.evpKey)]!, generatorTable, u1: u1, u2: u2)
            if index < alternatives.count, alternatives[index] != nil {
                withAlternatives.append((index, sInverse, u1))
            }
        }
        let firstPoints = answerDeferred(checks, into: &answers, keepingPoints: !withAlternatives.isEmpty)
        for (index, sInverse, u1) in withAlternatives {
            guard !answers[index].first, let alternative = alternatives[index] else { continue }
            let alternativeU1 = P256Scalar.multiply(P256Scalar.reduced(alternative.number), sInverse)
            // (u1' − u1)·G, with no multiple of Q: added to R below.
            setAside(index, tablesByKey[ObjectIdentifier(checks[index].key.evpKey)]!, generatorTable,
                     u1: P256Scalar.subtract(alternativeU1, u1), u2: P256Field.zero)
        }
        answerDeferred(checks, into: &answers, alternative: true, adding: firstPoints)
        return true
    }

    /// Sets aside the signature at `index`, with its u1 and u2, for ``answerDeferred(_:into:alternative:)``.
    private func setAside(_ index: Int, _ table: P256KeyTable, _ generatorTable: P256KeyTable,
                          u1: P256Scalar.Element, u2: P256Scalar.Element) {
        let start = deferredDigits.count
        deferredDigits.append(contentsOf: repeatElement(0, count: 2 * P256KeyTable.positions))
        P256KeyTable.recode(scalar: u1, into: &deferredDigits, at: start)
        P256KeyTable.recode(scalar: u2, into: &deferredDigits, at: start + P256KeyTable.positions)
        deferredIndices.append(index)
        deferredTables.append(table)
        deferredGenerator = generatorTable
    }

    /// A number below 2²⁵⁶ as limbs (``P256Scalar``).
    private func number(_ value: OpaquePointer) -> P256Scalar.Element? {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 32) { bytes in
            guard BN_bn2binpad(value, bytes.baseAddress, 32) == 32 else { return nil }
            return P256Field.number(bigEndian: UnsafeBufferPointer(bytes), at: 0)
        }
    }

    /// r of a 64-byte signature (r ‖ s) as limbs; the length is checked in every build.
    private static func r(of signature: [UInt8]) -> P256Scalar.Element {
        signature.withUnsafeBufferPointer { P256Field.number(bigEndian: $0, at: 0) }
    }

    /// Answers the signatures set aside by ``setAside(_:_:_:u1:u2:)``: R for all of them at once when they are
    /// enough to share inversions (``P256KeyTable/sums(digits:keyTables:generator:)``), else one by one, then
    /// x(R) ≡ r; into `first`, or with `alternative` into the alternative digest's answer. With `adding`, each sum
    /// is added to the point there for its index (the first pass's R, for the alternative's R + (u1' − u1)·G).
    /// Returns each index's point when `keepingPoints`, else nothing.
    @discardableResult
    private func answerDeferred(_ checks: [ES256SignatureCheck],
                                into answers: inout [(first: Bool, alternative: Bool?)], alternative: Bool = false,
                                keepingPoints: Bool = false, adding bases: [Int: P256JacobianPoint] = [:])
        -> [Int: P256JacobianPoint] {
        defer {
            deferredDigits.removeAll(keepingCapacity: true)
            deferredIndices.removeAll(keepingCapacity: true)
            deferredTables.removeAll(keepingCapacity: true)
        }
        guard let generatorTable = deferredGenerator, !deferredIndices.isEmpty else { return [:] }
        var points: [P256JacobianPoint]
        if deferredIndices.count >= Self.minimumSharedInversions {
            points = P256KeyTable.sums(digits: deferredDigits, keyTables: deferredTables, generator: generatorTable)
            for (slot, index) in deferredIndices.enumerated() {
                guard var base = bases[index] else { continue }
                base.add(points[slot])
                points[slot] = base
            }
        } else {
            points = deferredTables.indices.map { slot in
                var point = bases[deferredIndices[slot]] ?? .infinity
                generatorTable.add(digits: deferredDigits, at: 2 * P256KeyTable.positions * slot, to: &point)
                deferredTables[slot].add(digits: deferredDigits, at: (2 * slot + 1) * P256KeyTable.positions,
                                         to: &point)
                return point
            }
        }
        var kept: [Int: P256JacobianPoint] = [:]
        for (slot, index) in deferredIndices.enumerated() {
            tableChecks += 1
            if keepingPoints { kept[index] = points[slot] }
            let matches = xMatches(points[slot], r: Self.r(of: checks[index].signature))
            if alternative {
                answers[index].alternative = matches
            } else {
                answers[index].first = matches
            }
        }
        return kept
    }

    /// r, e, u1 = e·s⁻¹ and u2 = r·s⁻¹ for one signature, with s⁻¹ (in Montgomery form) in `sInverse`. The length
    /// is checked again here, in every build, before libcrypto reads r.
    private func scalars(_ signature: [UInt8], _ digest: SHA256Digest) -> Bool {
        precondition(signature.count == 64, "P-256 signature of other than 64 bytes")
        return signature.withUnsafeBufferPointer({ BN_bin2bn($0.baseAddress, 32, r) }) != nil
            && digest.withUnsafeBytes({ BN_bin2bn($0.baseAddress, 32, e) }) != nil
            // e < 2²⁵⁶ < 2n, so one subtraction reduces it.
            && (BN_ucmp(e, order) < 0 || BN_sub(e, e, order) == 1)
            // A Montgomery product of a plain number and one in Montgomery form is the plain product mod n.
            && BN_mod_mul_montgomery(u1, e, sInverse, orderMontgomery, context) == 1
            && BN_mod_mul_montgomery(u2, r, sInverse, orderMontgomery, context) == 1
    }

    /// The distinct keys of the checks at `candidates`, each with its count of signatures.
    private static func signers(of checks: [ES256SignatureCheck], _ candidates: [Int])
        -> [(id: ObjectIdentifier, key: ECPublicKey, count: Int)] {
        var signers: [(id: ObjectIdentifier, key: ECPublicKey, count: Int)] = []
        for index in candidates {
            let id = ObjectIdentifier(checks[index].key.evpKey)
            if let last = signers.indices.last, signers[last].id == id {
                signers[last].count += 1
            } else if let known = signers.firstIndex(where: { $0.id == id }) {
                signers[known].count += 1
            } else {
                signers.append((id, checks[index].key, 1))
            }
        }
        return signers
    }

    /// The last steps for one signature, with s⁻¹ (in Montgomery form) in `sInverse`. Sets ``multiplied`` once R
    /// is in `result` (and u1 in `u1`, r in `r`), for ``isValidAlternative(_:)``. Only candidates reach it, whose
    /// signatures are 64 bytes; the length is checked again here, in every build, before libcrypto reads r.
    private func isValid(_ signature: [UInt8], _ digest: SHA256Digest, _ key: KnownKey?) -> Bool {
        multiplied = false
        guard let key, scalars(signature, digest), multiply(key) else { return false }
        multiplied = true
        return tableResult.map { xMatches($0, r: Self.r(of: signature)) } ?? xMatches(result)
    }

    /// The same signature over another digest, right after ``isValid(_:_:_:)`` computed R for the first (with r in
    /// `r`, u1 in `u1`, s⁻¹ in `sInverse`): R' = R + (u1' − u1)·G.
    private func isValidAlternative(_ digest: SHA256Digest) -> Bool {
        guard digest.withUnsafeBytes({ BN_bin2bn($0.baseAddress, 32, e) }) != nil,
              BN_ucmp(e, order) < 0 || BN_sub(e, e, order) == 1,
              BN_mod_mul_montgomery(u2, e, sInverse, orderMontgomery, context) == 1,
              // u2 ← u1' − u1 (mod n); R' into keyMultiple (or a copy of ``tableResult``).
              BN_mod_sub(u2, u2, u1, order, context) == 1 else { return false }
        if var point = tableResult, let generatorTable {
            guard let rNumber = number(r) else { return false }
            return add(u2, from: generatorTable, to: &point) && xMatches(point, r: rNumber)
        }
        guard EC_POINT_mul(group, generatorMultiple, u2, nil, nil, context) == 1,
              EC_POINT_add(group, keyMultiple, result, generatorMultiple, context) == 1 else { return false }
        return xMatches(keyMultiple)
    }

    /// x(R) ≡ r (mod n) for R = `point`, not the point at infinity, with r in `r`.
    private func xMatches(_ point: OpaquePointer) -> Bool {
        guard EC_POINT_is_at_infinity(group, point) == 0,
              attribution_point_x_and_z(group, point, x, z, context) == 1,
              isReduced(x), isReduced(z),
              // With R the Montgomery radix mod p: z ← Z²·R⁻¹ and x ← X·R⁻², so that a Montgomery product
              // candidate·z = candidate·Z²·R⁻² equals x exactly when X ≡ candidate·Z² (mod p).
              BN_mod_mul_montgomery(z, z, z, primeMontgomery, context) == 1,
              BN_from_montgomery(x, x, primeMontgomery, context) == 1,
              BN_from_montgomery(x, x, primeMontgomery, context) == 1 else { return false }
        if matches(r) { return true }
        guard BN_add(rPlusN, r, order) == 1, BN_ucmp(rPlusN, prime) < 0 else { return false }
        return matches(rPlusN)
    }

    /// R = u1·G + u2·Q: into ``tableResult`` from tables when the key has one, else into `result` in one
    /// `EC_POINT_mul` (``tableResult`` nil).
    private func multiply(_ key: KnownKey) -> Bool {
        tableResult = nil
        guard let table = key.table, let generatorTable else {
            return EC_POINT_mul(group, result, u1, key.point, u2, context) == 1
        }
        var point = P256JacobianPoint.infinity
        guard add(u1, from: generatorTable, to: &point), add(u2, from: table, to: &point) else { return false }
        tableChecks += 1
        tableResult = point
        return true
    }

    /// point += scalar·P from P's table, for a scalar below 2²⁵⁶.
    private func add(_ scalar: OpaquePointer, from table: P256KeyTable, to point: inout P256JacobianPoint) -> Bool {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 32) { bytes in
            guard BN_bn2binpad(scalar, bytes.baseAddress, 32) == 32 else { return false }
            table.add(scalar: UnsafeBufferPointer(bytes), to: &point)
            return true
        }
    }

    /// x(R) ≡ r (mod n) for R = `point` (from tables), not the point at infinity: X ≡ r·Z² (mod p), or, when
    /// r + n < p, X ≡ (r + n)·Z², on the Jacobian coordinates, as ``xMatches(_:)`` checks them.
    private func xMatches(_ point: P256JacobianPoint, r: P256Scalar.Element) -> Bool {
        // R must be on the curve before it can accept: a fault of the table arithmetic is a rejection, never an
        // acceptance.
        guard !point.isInfinity, point.isOnCurve else { return false }
        let zz = P256Field.square(point.z)
        // r < n < p, so r is a field element.
        guard let candidate = P256Field.element(plain: r) else { return false }
        if P256Field.equal(P256Field.multiply(candidate, zz), point.x) { return true }
        let rPlusN = P256Scalar.addingOrder(r)
        guard rPlusN.carry == 0, let other = P256Field.element(plain: rPlusN.sum) else { return false }
        return P256Field.equal(P256Field.multiply(other, zz), point.x)
    }

    /// True when `key`'s signatures are checked with tables on this thread; counts one signature towards the
    /// key's table when it has none yet. For a caller with one signature, which `EVP_PKEY_verify` checks as fast
    /// as this verifier does without a table.
    func hasTable(for key: ECPublicKey) -> Bool {
        guard key.curve == .p256, let known = known(key) else { return false }
        if known.table != nil { return true }
        let table = tables.table(forPoint: known.encodedPoint, adding: 1)
        keys[ObjectIdentifier(key.evpKey)]?.table = table
        return table != nil
    }

    /// Counts a chunk's signatures per key (``signers(of:_:)``), so keys that verify many get their table
    /// (``P256KeyTables``), and takes the tables that are ready.
    private func noteSignatures(of signers: [(id: ObjectIdentifier, key: ECPublicKey, count: Int)]) {
        tables.noteChecked(signers.reduce(0) { $0 + $1.count })
        for (id, signer, count) in signers {
            guard let known = known(signer), known.table == nil else { continue }
            keys[id]?.table = tables.table(forPoint: known.encodedPoint, adding: count)
        }
    }

    /// Whether a P-256 key among `signers` has no table.
    private func anyWithoutTable(_ signers: [(id: ObjectIdentifier, key: ECPublicKey, count: Int)]) -> Bool {
        signers.contains { known($0.key).map { $0.table == nil } ?? false }
    }

    /// `key` as ``known(_:)`` has it, with the table another thread has built for it since this thread last
    /// looked, if any.
    private func pickUpTable(for key: ECPublicKey) -> KnownKey? {
        let id = ObjectIdentifier(key.evpKey)
        guard let known = known(key), known.table == nil,
              let table = tables.existingTable(forPoint: known.encodedPoint) else { return known(key) }
        keys[id]?.table = table
        return keys[id]
    }

    /// X ≡ candidate·Z² (mod p), with `z` and `x` prepared as above (candidate < p).
    private func matches(_ candidate: OpaquePointer) -> Bool {
        BN_mod_mul_montgomery(product, candidate, z, primeMontgomery, context) == 1 && BN_cmp(product, x) == 0
    }

    /// Makes `value` less than p (it already is, as libcrypto returns coordinates): Montgomery products need that.
    private func isReduced(_ value: OpaquePointer) -> Bool {
        BN_ucmp(value, prime) < 0 || BN_nnmod(value, value, prime, context) == 1
    }

    /// 1 ≤ value ≤ n − 1.
    private func isInOrderRange(_ value: OpaquePointer) -> Bool {
        BN_is_zero(value) == 0 && BN_ucmp(value, order) < 0
    }

    /// A P-256 key as this thread knows it: Q decoded once (the last 65 bytes of its DER form: `04 || x || y`).
    private func known(_ key: ECPublicKey) -> KnownKey? {
        let id = ObjectIdentifier(key.evpKey)
        if let known = keys[id] { return known }
        let encodedPoint = Array(key.derRepresentation.suffix(65))
        guard let point = EC_POINT_new(group) else { return nil }
        guard encodedPoint.withUnsafeBufferPointer({
            EC_POINT_oct2point(group, point, $0.baseAddress, $0.count, context)
        }) == 1 else {
            EC_POINT_free(point)
            return nil
        }
        if keys.count >= Self.maximumKeys {
            keys.values.forEach { EC_POINT_free($0.point) }
            keys.removeAll()
        }
        let known = KnownKey(owner: key.evpKey, point: point, encodedPoint: encodedPoint,
                             table: tables.existingTable(forPoint: encodedPoint))
        keys[id] = known
        return known
    }
}
