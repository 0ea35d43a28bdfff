@_spi(CommandLine) @_spi(Servers) @_spi(Stores) @testable import Attribution
import Foundation

// libFuzzer target `fuzz-item`: AttributionVerifier on one whole item (a postback body, a bare JWS or an SKAdNetwork
// body), then the CLI's JSON Lines record of the result (`JSONLinesRecord`), and the fast path on the same bytes.
//
// The key ring trusts the two fixture keys under their fixture kids and Apple's development kids, and the
// SKAdNetwork keys are replaced by the fixture ones, so the seed corpus from Fixtures/ reaches every rule. The
// clock is fixed, so a result depends on the bytes alone.
//
// Invariants, for every input: valid exactly when there are no errors; every error has a code and no warning has
// one; a valid result has a verified signature, a known kind and decoded fields; a verified signature names its
// key and environment; fields and unsigned members re-serialise to text the strict parser reads back equal; the
// record is one strict JSON object that agrees with the result; and a token that verified gets the same result
// again through a verified-token cache, both when it is stored and when it is found there. The fast path
// (`FastPostbackPath`) answers only for an item the general path finds valid without a warning, with its record
// byte for byte and its deduplication key, and writes nothing when it declines. The fixed-key path
// (`P256BatchVerifier` with every key's table of multiples, `P256KeyTable`) gives `EVP_PKEY_verify`'s answer for
// the item's own signature, a one-bit change of it, and the input's bytes read as a digest and a signature under
// each fixture key. (`Fuzz/run.sh` compiles the library with `-enable-testing` for this check.)

/// A fixed "now" (2023-11-14) so I3's future-timestamp warning does not depend on when the fuzzer runs.
private let fixedClock: @Sendable () -> UInt64 = { 1_700_000_000_000 }

/// The verifier every input goes through, built once by `LLVMFuzzerInitialize`.
private let verifier = makeVerifier(cache: nil)
/// The same verifier with a small cache, used to re-check inputs whose signature verified.
private let cachedVerifier = makeVerifier(cache: VerifiedTokenCache(capacity: 64))

/// Reads the fixture keys from `Fixtures/keys` (Fuzz/run.sh runs targets from the package root).
private func makeVerifier(cache: VerifiedTokenCache?) -> AttributionVerifier {
    func key(_ name: String, _ curve: ECPublicKey.Curve = .p256) -> ECPublicKey {
        let path = "Fixtures/keys/\(name).pem"
        guard let pem = try? String(contentsOfFile: path, encoding: .utf8),
              let key = try? ECPublicKey(pemRepresentation: pem, curve: curve) else {
            fatalError("cannot read \(path); run from the package root (Fuzz/run.sh does)")
        }
        return key
    }
    var ring = KeyRing(allowingDevelopmentKeys: true)
    do {
        try ring.add(key("fixture.adattributionkit"), keyID: "fixture.adattributionkit")
        try ring.add(key("fixture-apple-identifier-0"), keyID: "fixture-apple-identifier/0")
    } catch {
        fatalError("fixture key refused: \(error)")
    }
    ring.replaceSKAdNetworkKey(with: key("fixture-skadnetwork-p256"))
    ring.replaceSKAdNetworkKey(with: key("fixture-skadnetwork-p192", .p192))
    return AttributionVerifier(keyRing: ring, policy: VerificationPolicy(clock: fixedClock), cache: cache)
}

/// Builds the verifiers before the first input, so their one-time allocations are not taken for leaks.
@_cdecl("LLVMFuzzerInitialize")
public func fuzzItemInitialize(
    _ argc: UnsafeMutablePointer<CInt>?, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
) -> CInt {
    _ = verifier.keyRing
    _ = cachedVerifier.keyRing
    _ = fastPath
    _ = tableVerifier
    return 0
}

/// A batch verifier whose every key gets its table of multiples on its first signature.
private let tableVerifier: P256BatchVerifier = {
    guard let verifier = P256BatchVerifier(tables: P256KeyTables(threshold: 0)) else {
        fatalError("libcrypto could not make a batch verifier")
    }
    return verifier
}()

/// The fixture P-256 keys, for reading raw input bytes as signatures.
private let fixtureP256Keys: [ECPublicKey] = verifier.keyRing.trustedKeys.map(\.key).filter { $0.curve == .p256 }

/// The fixed-key path against EVP_PKEY_verify (`isValidES256Signature(_:digest:)`) on signatures from this input.
private func checkTables(_ item: ArraySlice<UInt8>) {
    var checks: [ES256SignatureCheck] = []
    if let check = verifier.prepare(item).pendingES256Check {
        checks.append(check)
        if check.signature.count == 64 {
            var flipped = check.signature
            let bit = item.reduce(0) { $0 &+ Int($1) } % 512
            flipped[bit / 8] ^= 1 << (bit % 8)
            checks.append(ES256SignatureCheck(key: check.key, signature: flipped, digest: check.digest))
        }
    }
    if item.count >= 96, let digest = SHA256Digest(digestBytes: Array(item.prefix(32))) {
        let signature = Array(item.dropFirst(32).prefix(64))
        checks += fixtureP256Keys.map { ES256SignatureCheck(key: $0, signature: signature, digest: digest) }
    }
    guard !checks.isEmpty else { return }
    let expected = checks.map { $0.key.isValidES256Signature($0.signature, digest: $0.digest) }
    precondition(tableVerifier.verify(checks) == expected, "the fixed-key tables disagree with EVP_PKEY_verify")
    for (check, answer) in zip(checks, expected) {
        precondition(tableVerifier.verify([check]) == [answer], "a lone check through tables disagrees with EVP")
    }
}

/// Called by libFuzzer once per input. The item is a slice that does not start at index 0, as the CLI's
/// batches slice one shared buffer.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzItem(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var buffer: [UInt8] = [0x0A]
    buffer.append(contentsOf: UnsafeBufferPointer(start: data, count: size))
    let item = buffer[1...]
    let result = verifier.verify(item)
    checkInvariants(result)
    checkRecord(result)
    checkFastPath(item, result)
    checkTables(item)
    // The general path's signature step over a batch (the item twice) gives each copy the single result.
    var batch = [verifier.prepare(item), verifier.prepare(item)]
    verifier.checkSignatures(&batch)
    for prepared in batch {
        precondition(summary(verifier.complete(prepared)) == summary(result),
                     "a batched signature check gave another result")
    }
    if result.signature == .verified {
        let stored = cachedVerifier.verify(item)
        let found = cachedVerifier.verify(item)
        precondition(summary(stored) == summary(result), "a cached verifier gave another result")
        precondition(summary(found) == summary(result), "a cache hit gave another result")
    }
    return 0
}

private func checkInvariants(_ result: VerificationResult) {
    precondition((result.verdict == .valid) == result.errors.isEmpty, "verdict disagrees with the errors")
    precondition(result.errors.allSatisfy { $0.code != nil }, "an error without a code")
    precondition(result.warnings.allSatisfy { $0.code == nil }, "a warning with a code")
    if result.verdict == .valid {
        precondition(result.signature == .verified, "valid without a verified signature")
        precondition(result.kind != .unknown, "valid with an unknown kind")
        precondition(result.fields != nil, "valid without decoded fields")
        precondition(result.duplicateOf == nil, "a single item marked duplicate")
    }
    if result.signature == .verified {
        precondition(result.keyID != nil && result.environment != nil, "verified without naming the key")
    } else {
        precondition(result.fields == nil, "fields reported from an unverified signature")
        precondition(result.postback == nil && result.impression == nil && result.skAdNetwork == nil,
                     "a payload decoded from an unverified signature")
        precondition(result.deduplicationKey == nil, "a deduplication key from an unverified item")
    }
    for object in [result.fields, result.unsigned].compactMap({ $0 }) {
        let text = JSONValue.object(object).jsonText
        // Without the value budget: the budget is per text, and a re-serialisation is shorter than what was read.
        guard let reparsed = try? StrictJSONParser.parse(Array(text.utf8), options: .init(valueBudget: nil)) else {
            fatalError("the record's JSON text is refused by the strict parser: \(text)")
        }
        precondition(reparsed == .object(object) && reparsed.jsonText == text, "JSON text does not read back")
    }
}

/// The CLI's JSON Lines record must be one strict JSON object that says what the result says.
private func checkRecord(_ result: VerificationResult) {
    let record = recordBytes(result)
    precondition(!record.contains(0x0A), "a record spans lines")
    // The record nests fields and unsigned members one level below its own object, so a payload at the
    // verifier's depth limit makes a record one deeper.
    // The record nests one level deeper than what it reports, and holds the item's values in fewer bytes (no
    // jws-string), so it is read without the value budget.
    let recordDepth = StrictJSONParser.Options(
        maximumDepth: StrictJSONParser.Options().maximumDepth + 1, valueBudget: nil)
    guard let parsed = try? StrictJSONParser.parse(record, options: recordDepth),
          let object = parsed.objectValue else {
        fatalError("the record is not one strict JSON object: \(String(decoding: record, as: UTF8.self))")
    }
    precondition(object["verdict"] == JSONValue.string(result.verdict.rawValue), "record verdict differs")
    precondition(object["signature"] == JSONValue.string(result.signature.rawValue), "record signature differs")
    guard case .array(let errors) = object["errors"], case .array(let warnings) = object["warnings"] else {
        fatalError("record without errors and warnings arrays: \(String(decoding: record, as: UTF8.self))")
    }
    precondition(errors.count == result.errors.count && warnings.count == result.warnings.count,
                 "record lists a different number of findings")
    precondition(object["fields"] == (result.fields.map { .object($0) } ?? .null), "record fields differ")
    precondition(object["unsigned"] == (result.unsigned.map { .object($0) } ?? .null), "record unsigned differs")
}

/// The fast path agrees with the general path whenever it answers.
private let fastPath = FastPostbackPath(verifier)

private func checkFastPath(_ item: ArraySlice<UInt8>, _ result: VerificationResult) {
    var record: [UInt8] = []
    let identifier = fastPath.appendRecord(for: item, source: "fuzz", line: 1, to: &record)
    // The three steps of a split pipeline answer the same as the single call.
    var stepRecord: [UInt8] = []
    var stepIdentifier: String?
    if let unchecked = fastPath.prepare(item, source: "fuzz", line: 1) {
        var prepared = unchecked
        fastPath.checkSignature(&prepared)
        if let (identifier, record, _) = fastPath.record(of: prepared) {
            stepIdentifier = identifier.description
            stepRecord = record
        }
        // Checked in a batch (P256BatchVerifier: this fast path has no token cache), the signature gets the
        // same answer every time.
        var batch = [unchecked, unchecked, unchecked]
        fastPath.checkSignatures(&batch)
        precondition(batch.allSatisfy { $0.signatureVerified == prepared.signatureVerified },
                     "the batch signature check disagrees with the single one")
    }
    precondition(stepIdentifier == identifier && stepRecord == record, "the fast path's three steps disagree")
    guard let identifier else {
        precondition(record.isEmpty, "the fast path declined but wrote a record")
        return
    }
    precondition(result.verdict == .valid && result.warnings.isEmpty,
                 "the fast path answered for an item the general path finds \(result.errors + result.warnings)")
    precondition(ExactString(identifier) == result.deduplicationKey,
                 "the fast path's deduplication key differs")
    precondition(record == JSONLinesRecord.render(result, source: "fuzz", line: 1), """
        the fast path's record differs:
        \(String(decoding: record, as: UTF8.self))
        \(String(decoding: JSONLinesRecord.render(result, source: "fuzz", line: 1), as: UTF8.self))
        """)
}

/// What two verifications of the same bytes must agree on.
private func summary(_ result: VerificationResult) -> String {
    String(decoding: recordBytes(result), as: UTF8.self)
        + "|\(result.deduplicationKey?.description ?? "-")|\(String(describing: result.postback))"
        + "|\(String(describing: result.impression))|\(String(describing: result.skAdNetwork))"
}

/// The CLI's JSON Lines record of the result, as bytes.
private func recordBytes(_ result: VerificationResult) -> [UInt8] {
    utf8Bytes(JSONLinesRecord.render(result, source: "fuzz", line: 1, explain: true))
}

/// The renderer's output as bytes, whether it returns text or bytes (it moved from one to the other).
private func utf8Bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

private func utf8Bytes(_ bytes: [UInt8]) -> [UInt8] { bytes }
