/// The common case, a genuine postback body of the usual shape, verified and written as its JSON Lines record
/// without building a JSON tree, a ``VerificationResult`` or a `String` per field (the heap sees only the record,
/// the identifier and a copy of the signature), so a busy core stays on the ECDSA.
///
/// It answers only when it is certain: the body and payload are flat objects ``FlatJSONScanner`` accepts (known
/// members only, in any order, plain values, escapes decoded), the header is exactly `alg` `ES256` and a trusted
/// `kid`, the signature verifies, and no rule of the catalogue fires, errors and warnings alike. Then the record
/// is, byte for byte, what `JSONLinesRecord.render(_:source:line:explain:)` writes for
/// ``AttributionVerifier/verify(_:)-(ArraySlice<UInt8>)``'s result (the tests compare the two over every fixture and
/// mutation). For anything else it answers nil and changes nothing: the caller runs the general path, which finds
/// and words the findings.
///
/// It works in three steps: ``prepare(_:source:line:)`` does everything but the ECDSA in one pass over the bytes
/// (so an item a rule sends to the general path costs no ECDSA here), ``checkSignatures(_:)`` checks a batch's
/// signatures together (or ``checkSignature(_:)`` one), and ``record(of:)`` hands over the record.
/// ``appendRecord(for:source:line:to:)`` runs the three in one call. An item whose signature fails goes to the
/// general path with the failed check (``rejectedCheck(of:)``), which words the record without a second ECDSA:
/// a forged postback in the usual shape costs one signature check, as a genuine one does. Deduplication (D1) is
/// the caller's, with the returned identifier.
struct FastPostbackPath: Sendable {
    private let cache: VerifiedTokenCache?
    /// The tables of a postback's payload and body, the verifier's (Apple's, unless a test added a member): the
    /// scanner knows exactly their members, and each present one must be as its table says.
    let payloadLayout: MessageLayout
    let bodyLayout: MessageLayout
    /// The trusted keys by the bytes of their kid, each with the part of a valid record that depends on the key
    /// alone (`,"kind":"postback",…,"environment":…,"errors":[],"warnings":[],"fields":`), written once here by
    /// `JSONLinesRecord`, and whether it is the developer-settings key rule P5 reads.
    let keys: [(
        keyID: [UInt8], trusted: TrustedKey, recordStatus: [UInt8], isDevelopmentSettingsKey: Bool
    )]

    init(_ verifier: AttributionVerifier) {
        cache = verifier.cache
        payloadLayout = verifier.layouts.postbackPayload
        bodyLayout = verifier.layouts.postbackBody
        keys = verifier.keyRing.trustedKeys
            .map { trusted in
                var status: [UInt8] = []
                JSONLinesRecord.appendStatus(kind: .postback, verdict: .valid, signature: .verified,
                                             keyID: trusted.keyID, environment: trusted.environment, to: &status)
                JSONLinesRecord.appendLiteral(#","errors":[],"warnings":[],"fields":"#, to: &status)
                return (Array(trusted.keyID.utf8), trusted, status,
                        trusted.keyID.isExactlyEqual(to: ApplePublishedKey.development1.keyID))
            }
    }

    /// Verifies `item` and appends its JSON Lines record (no line terminator) to `record` when the item is a valid
    /// postback with no finding; returns its `postback-identifier` for deduplication. Nil, with `record` untouched,
    /// whenever the general path must decide. The three steps below, in one call.
    func appendRecord(for item: ArraySlice<UInt8>, source: String, line: Int, to record: inout [UInt8])
        -> String? {
        guard var prepared = prepare(item, source: source, line: line) else { return nil }
        checkSignature(&prepared)
        guard let (identifier, bytes, _) = self.record(of: prepared) else { return nil }
        record.append(contentsOf: bytes)
        return identifier.description
    }

    // MARK: - The same in three steps, for a pipeline that checks signatures in batches or on their own thread

    /// What ``prepare(_:source:line:)`` made of an item: the record it gets once its signature verifies, and what
    /// the ECDSA needs.
    struct Prepared: Sendable {
        fileprivate let key: Int
        fileprivate let digest: SHA256Digest
        fileprivate let signature: [UInt8]
        fileprivate var record: [UInt8]
        /// The `postback-identifier`'s bytes, as deduplication keys it (no `String` made on the way).
        fileprivate let postbackIdentifier: ExactString
        fileprivate let content: ContentFingerprint
        /// Nil until ``FastPostbackPath/checkSignature(_:)`` ran (or the token cache vouched for the token).
        fileprivate(set) var signatureVerified: Bool?
    }

    /// Step 1: everything but the ECDSA, in one pass over the bytes: body, unsigned members, JWS envelope, header,
    /// key, digest and token cache, then payload and rules, and the record the item at `source`:`line` gets if
    /// its signature verifies. Nil when the general path must decide (so an item a rule sends there costs no
    /// ECDSA here).
    func prepare(_ item: ArraySlice<UInt8>, source: String, line: Int) -> Prepared? {
        withBody(item) { members, unsigned, token in
            guard let parts = JWSParts(token), let key = trustedKey(headerSegment: parts.header) else { return nil }
            return withDecoded(parts.signature) { signature -> Prepared? in
                guard let (digest, cached) = digest(parts, signature, key) else { return nil }
                var record: [UInt8] = []
                record.reserveCapacity(1024)
                guard let (identifier, content) = appendRecord(
                    payload: parts.payload, key: key, body: members, unsigned: unsigned, signedDigest: digest,
                    source: source, line: line, to: &record)
                else { return nil }
                return Prepared(key: key, digest: digest, signature: Array(signature), record: record,
                                postbackIdentifier: identifier, content: content,
                                signatureVerified: cached ? true : nil)
            } ?? nil
        }
    }

    /// Step 2: the ECDSA alone (a success is remembered in the token cache); with the key's table of multiples
    /// once it has one (``ECPublicKey/areValidES256Signatures(_:)``).
    func checkSignature(_ prepared: inout Prepared) {
        guard prepared.signatureVerified == nil else { return }
        let check = ES256SignatureCheck(key: keys[prepared.key].trusted.key, signature: prepared.signature,
                                        digest: prepared.digest)
        settle(&prepared, valid: ECPublicKey.areValidES256Signatures([check]) == [true])
    }

    /// Step 2 for many items at once, as a worker holding a batch does it: the signatures not yet vouched for are
    /// checked together (``ECPublicKey/areValidES256Signatures(_:)``: one inversion for all, and the key's table
    /// of multiples once it has one). Successes are remembered in the token cache; a failure leaves the item to the
    /// general path as before.
    func checkSignatures(_ items: inout [Prepared]) {
        let pending = items.indices.filter { items[$0].signatureVerified == nil }
        let answers = ECPublicKey.areValidES256Signatures(pending.map { index in
            ES256SignatureCheck(key: keys[items[index].key].trusted.key, signature: items[index].signature,
                                digest: items[index].digest)
        })
        for (index, valid) in zip(pending, answers) {
            settle(&items[index], valid: valid)
        }
    }

    /// Records the ECDSA's answer; a success is remembered in the token cache.
    private func settle(_ prepared: inout Prepared, valid: Bool) {
        prepared.signatureVerified = valid
        if valid {
            cache?.insert(signingInput: prepared.digest, signature: prepared.signature,
                          verifiedBy: keys[prepared.key].trusted.key)
        }
    }

    /// The ECDSA check that failed, once ``checkSignature(_:)`` found the signature invalid: the general path,
    /// which then words the item's record, settles its own identical check with this answer instead of running
    /// the ECDSA again (``AttributionVerifier/verify(_:rejected:)``). Nil unless the signature was checked and failed.
    func rejectedCheck(of prepared: Prepared) -> ES256SignatureCheck? {
        guard prepared.signatureVerified == false else { return nil }
        return ES256SignatureCheck(key: keys[prepared.key].trusted.key, signature: prepared.signature,
                                   digest: prepared.digest)
    }

    /// Step 3: the item's `postback-identifier`, JSON Lines record (no line terminator) and content fingerprint
    /// (for D1 and D2) once its signature verified; nil otherwise, and the general path decides.
    func record(of prepared: Prepared)
        -> (postbackIdentifier: ExactString, record: [UInt8], content: ContentFingerprint)? {
        prepared.signatureVerified == true
            ? (prepared.postbackIdentifier, prepared.record, prepared.content) : nil
    }

    /// What the fast path's answer for a valid item carries beside its record: the `postback-identifier` and
    /// content fingerprint that D1 and D2 decide on, and the key that verified it, so that the record of a
    /// duplicate is written from the record's own bytes (``duplicateRecord(_:of:source:line:marking:)``) and the
    /// item is never verified a second time.
    struct Answer: Sendable {
        let postbackIdentifier: ExactString
        let content: ContentFingerprint
        /// The index in ``FastPostbackPath/keys`` of the key whose signature verified.
        let key: Int
    }

    /// Step 3 as ``record(of:)``, the record moved out of `prepared` (left empty) rather than copied: for a
    /// caller done with the item.
    func takeRecord(from prepared: inout Prepared) -> (answer: Answer, record: [UInt8])? {
        guard prepared.signatureVerified == true else { return nil }
        var record: [UInt8] = []
        swap(&record, &prepared.record)
        return (Answer(postbackIdentifier: prepared.postbackIdentifier, content: prepared.content, key: prepared.key),
                record)
    }

    /// The record of an answered item that D1 found to be a duplicate, written from its valid record `record`
    /// (from ``takeRecord(from:)``, for the item at `source`:`line`): byte for byte what
    /// `JSONLinesRecord.render(_:source:line:explain:)` writes for the general path's result once
    /// ``VerificationResult/markDuplicate(of:content:)`` marked it. Only the parts a duplicate changes are written anew
    /// (verdict, findings, the `duplicate-of` members); `fields`, `unsigned` and `tier` are the valid record's bytes.
    func duplicateRecord(
        _ record: [UInt8], of answer: Answer, source: String, line: Int, marking: DuplicateMarking
    ) -> [UInt8] {
        let key = keys[answer.key]
        var out: [UInt8] = []
        out.reserveCapacity(record.count + 256)
        JSONLinesRecord.appendSource(source, line: line, to: &out)
        // The valid record is this opening, the key's status (which ends with `"fields":`), then the fields on.
        let fieldsStart = out.count + key.recordStatus.count
        assert(record.count > fieldsStart && record[out.count..<fieldsStart].elementsEqual(key.recordStatus),
               "not the record of this answer")
        JSONLinesRecord.appendStatus(kind: .postback, verdict: .invalid, signature: .verified,
                                     keyID: key.trusted.keyID, environment: key.trusted.environment, to: &out)
        JSONLinesRecord.appendFindings(errors: [marking.error], warnings: marking.warning.map { [$0] } ?? [],
                                       to: &out)
        JSONLinesRecord.appendLiteral(#","fields":"#, to: &out)
        out.append(contentsOf: record[fieldsStart..<(record.count - 1)])
        JSONLinesRecord.appendDuplicate(of: marking.first, differences: marking.differences, to: &out)
        out.append(UInt8(ascii: "}"))
        return out
    }

    // MARK: - The parts

    /// Calls `body` with the scanned body, its unsigned fields (U1 held) and its `jws-string`; nil when the body
    /// is not of the usual shape.
    private func withBody<Result>(
        _ item: ArraySlice<UInt8>, _ body: (Members, UnsignedFields, ByteCursor) -> Result?
    ) -> Result? {
        guard item.count <= AttributionVerifier.maximumItemBytes else { return nil }
        return ByteCursor.over(item) { bytes in
            func read(_ bytes: ByteCursor) -> Result? {
                guard let members = Members(scanning: bytes, names: bodyLayout.names),
                      let unsigned = UnsignedFields(members, layout: bodyLayout),
                      let token = members.string(PostbackBodyMember.jwsString.slot)
                else { return nil }
                return body(members, unsigned, bytes.span(token))
            }
            guard bytes.firstIndex(of: UInt8(ascii: "\\")) != nil else {
                return read(bytes)
            }
            // Escapes are decoded in place, so in a copy of the received bytes.
            return bytes.withWritableCopy(read)
        }
    }

    /// Decodes and scans the payload, applies the rules and writes the record; nil when a rule fires or the
    /// payload is not of the usual shape.
    private func appendRecord(
        payload segment: ByteCursor, key: Int, body: Members, unsigned: UnsignedFields,
        signedDigest: SHA256Digest, source: String, line: Int, to record: inout [UInt8]
    ) -> (ExactString, ContentFingerprint)? {
        withDecoded(segment) { decoded -> (ExactString, ContentFingerprint)? in
            guard let payload = Members(scanning: decoded, names: payloadLayout.names),
                  let signed = SignedFields(payload, layout: payloadLayout),
                  let tier = Self.tierIfNoFinding(
                    signed, unsigned, isDevelopmentSettingsKey: keys[key].isDevelopmentSettingsKey)
            else { return nil }
            JSONLinesRecord.appendSource(source, line: line, to: &record)
            record.append(contentsOf: keys[key].recordStatus)
            payload.appendCompactJSON(to: &record)
            var fingerprint = ContentFingerprint.Builder(signedDigest: signedDigest)
            body.addMembers(to: &fingerprint, skipping: PostbackBodyMember.jwsString.slot)
            let content = fingerprint.finish()
            JSONLinesRecord.appendLiteral(#","unsigned":"#, to: &record)
            body.appendCompactJSON(to: &record, skipping: PostbackBodyMember.jwsString.slot)
            JSONLinesRecord.appendLiteral(#","tier":"#, to: &record)
            record.append(UInt8(ascii: "0") + UInt8(tier))
            record.append(UInt8(ascii: "}"))
            return (ExactString(utf8: payload.bytes.array(signed.postbackIdentifier)), content)
        } ?? nil
    }

    /// The index in `keys` of the header's trusted key: exactly the members `alg` (`ES256`) and `kid` (a trusted
    /// kid), no others.
    private func trustedKey(headerSegment: ByteCursor) -> Int? {
        withDecoded(headerSegment) { header -> Int? in
            guard let members = Members(scanning: header, names: Self.headerNames),
                  let alg = members.string(0), members.matches(alg, "ES256"),
                  let kid = members.string(1) else { return nil }
            return keys.firstIndex { header.elementsEqual(kid, $0.keyID) }
        } ?? nil
    }

    private static let headerNames = [Array("alg".utf8), Array("kid".utf8)]

    /// The SHA-256 of the signing input, and whether the token cache already vouches for this signature under the
    /// key; nil unless the signature is 64 bytes (r‖s).
    private func digest(_ parts: JWSParts, _ signature: ByteCursor, _ key: Int)
        -> (SHA256Digest, cached: Bool)? {
        guard signature.count == 64 else { return nil }
        let digest = SHA256Digest(of: parts.signingInput)
        return (digest, cache?.contains(signingInput: digest, signature: signature, verifiedBy: keys[key].trusted.key)
                    ?? false)
    }

    /// Calls `body` with the canonical base64url decoding of `segment` (on the stack when small); nil when the
    /// segment is not canonical unpadded base64url.
    private func withDecoded<Result>(
        _ segment: ByteCursor, _ body: (ByteCursor) -> Result
    ) -> Result? {
        guard let count = Base64Alphabet.url.decodedCount(of: segment), count > 0 else { return nil }
        return ByteCursor.scratch(count: count) { buffer in
            guard Base64Alphabet.url.decode(segment, into: buffer) == count else { return nil }
            return body(buffer)
        }
    }

    // MARK: - Rules

    /// The crowd-anonymity tier when no rule of ``PostbackRules`` fires (P1, P2 and U1 held while the fields were
    /// read); nil when one would, so that the general path words it. The rules themselves are not restated here.
    private static func tierIfNoFinding(
        _ signed: SignedFields, _ unsigned: UnsignedFields, isDevelopmentSettingsKey: Bool
    ) -> Int? {
        var facts = signed.facts
        facts.isDevelopmentSettingsKey = isDevelopmentSettingsKey
        facts.body = PostbackFacts.Body(
            hasFineValue: unsigned.hasFineValue, hasCoarseValue: unsigned.hasCoarseValue,
            hasCountryCode: unsigned.hasCountryCode, interaction: PostbackFacts.Interaction(unsigned.interaction))
        guard !PostbackRules.anyFires(facts) else { return nil }
        return CrowdAnonymityTier.lowest(facts)
    }
}
