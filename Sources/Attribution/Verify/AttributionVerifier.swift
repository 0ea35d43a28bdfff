/// Verifies what Apple's attribution sends or a network signs: AdAttributionKit postbacks (a request body, or the
/// bare JWS), AdAttributionKit impressions (a JWS) and SKAdNetwork postbacks (a request body), each item into one
/// ``VerificationResult``. This is the library's main entry point; a server calls it once per request body.
///
/// It never throws and never traps on input: every way an item can be wrong is a finding in the result.
/// It is `Sendable` and holds no mutable state, so one verifier serves every thread.
///
/// ```swift
/// let verifier = AttributionVerifier(keyRing: KeyRing())
/// let result = verifier.verify(requestBodyBytes)
/// if result.verdict == .valid, let postback = result.postback { count(postback) }
/// ```
public struct AttributionVerifier: Sendable {
    /// Items larger than this are rejected (J1) without being parsed.
    public static let maximumItemBytes = 16 * 1024

    /// J1 for an item over ``maximumItemBytes`` (its bytes given, or only counted as the reader skipped them).
    static func oversized(byteCount: Int) -> Finding {
        Finding(.j1, "the item is \(byteCount) bytes, over the limit of \(maximumItemBytes)")
    }

    /// The keys this verifier trusts.
    public let keyRing: KeyRing
    /// Strictness and the impression clock this verifier applies.
    public let policy: VerificationPolicy
    /// Tokens already verified by this verifier, so exact repeats (Apple's retries) skip the ECDSA; nil: no cache.
    let cache: VerifiedTokenCache?
    /// The tables the AdAttributionKit messages are read with, by this path and the fast path alike: Apple's,
    /// unless a test adds a member.
    let layouts: MessageLayouts

    /// A verifier for `keyRing` under `policy`.
    /// - Parameters:
    ///   - keyRing: the trusted keys (`KeyRing()`: Apple's production keys only).
    ///   - policy: strictness and the impression clock; not strict, no impression-age limit by default.
    public init(keyRing: KeyRing, policy: VerificationPolicy = VerificationPolicy()) {
        self.init(keyRing: keyRing, policy: policy, cache: nil)
    }

    /// With a cache of verified tokens (the command line's: Apple's retries skip the ECDSA).
    init(keyRing: KeyRing, policy: VerificationPolicy = VerificationPolicy(), cache: VerifiedTokenCache?) {
        self.init(keyRing: keyRing, policy: policy, cache: cache, layouts: .apple)
    }

    /// With other tables than Apple's (a test's, with an added member).
    init(keyRing: KeyRing, policy: VerificationPolicy, cache: VerifiedTokenCache?, layouts: MessageLayouts) {
        self.keyRing = keyRing
        self.policy = policy
        self.cache = cache
        self.layouts = layouts
    }

    /// Verifies one item given as bytes (a whole request body, or one line of input without its terminator).
    /// - Parameter item: the item's bytes, exactly as received.
    /// - Returns: the item's result; an invalid item is a result too, never a thrown error.
    public func verify(_ item: some Collection<UInt8>) -> VerificationResult {
        if let slice = item as? ArraySlice<UInt8> {
            return verify(slice)
        }
        return verify(ArraySlice(item))
    }

    /// Verifies one item given as bytes.
    /// - Parameter item: the item's bytes, exactly as received.
    /// - Returns: the item's result; an invalid item is a result too, never a thrown error.
    public func verify(_ item: ArraySlice<UInt8>) -> VerificationResult {
        var prepared = prepare(item)
        checkSignature(&prepared)
        return complete(prepared)
    }

    /// Verifies many items, giving their results in order: the same results as ``verify(_:)-(ArraySlice<UInt8>)``
    /// one by one, but the items' ES256 signatures are checked together, which a batch job (a day's file of
    /// postbacks) should prefer. How signatures are batched is this call's business.
    /// - Parameter items: the items' bytes, each exactly as received.
    /// - Returns: one result per item, in order.
    public func verify<Items: Sequence>(batch items: Items) -> [VerificationResult]
    where Items.Element: Collection, Items.Element.Element == UInt8 {
        var prepared = items.map { item in prepare((item as? ArraySlice<UInt8>) ?? ArraySlice(item)) }
        // Their signatures are about to be checked: a large batch builds its keys' tables on its first chunk.
        P256KeyTables.shared.announce(prepared.count)
        checkSignatures(&prepared)
        return prepared.map(complete)
    }

    // MARK: - The three steps

    /// Step 1: everything before the ECDSA: size, form, body JSON, JWS envelope and header, key, digest, cache.
    func prepare(_ item: ArraySlice<UInt8>) -> PreparedItem {
        var prepared = PreparedItem()
        if item.count > Self.maximumItemBytes {
            prepared.findings.append(Self.oversized(byteCount: item.count))
        } else if item.first(where: { !Self.isJSONWhitespace($0) }) == UInt8(ascii: "{") {
            prepareBody(item, into: &prepared)
        } else {
            prepared.form = .bareJWS
            prepared.jws = JWSVerification.prepare(item, keyFor: keyRing.trustedKey(for:), cache: cache)
        }
        return prepared
    }

    /// Step 2: the signature (the ECDSA, or a whole SKAdNetwork verification); nothing else.
    func checkSignature(_ prepared: inout PreparedItem) {
        switch prepared.form {
        case .skAdNetwork where !(prepared.skAdNetworkCheck?.isChecked ?? true):
            prepared.skAdNetworkCheck?.checkAlone()
        case .body, .bareJWS:
            prepared.jws?.checkSignature()
        case .skAdNetwork, .finished:
            break
        }
    }

    /// Step 2 for many items at once: their ES256 signatures checked together (one inversion for all, from two on:
    /// ``ECPublicKey/areValidES256Signatures(_:)``), everything else as ``checkSignature(_:)`` does; the same
    /// answers.
    func checkSignatures(_ items: inout [PreparedItem]) {
        var pending: [(index: Int, check: ES256SignatureCheck)] = []
        // SKAdNetwork 2.1 and later: their ES256 checks join the batch, a 2.2 postback's 2.0/2.1 order as the
        // alternative digest of its check (tried only when the signing order fails, for a fraction of a check).
        var skAdNetwork: [(index: Int, check: ES256SignatureCheck, fallback: SHA256Digest?)] = []
        for index in items.indices {
            if let check = items[index].pendingES256Check {
                pending.append((index, check))
            } else if case .skAdNetwork = items[index].form, let check = items[index].skAdNetworkCheck,
                      !check.isChecked, let es256 = check.es256Check(of: check.postback) {
                skAdNetwork.append((index, es256, check.fallback.map { SHA256Digest(of: $0.signedString.utf8) }))
            } else {
                checkSignature(&items[index])
            }
        }
        let answers = ECPublicKey.areValidES256Signatures(
            pending.map(\.check) + skAdNetwork.map(\.check),
            orElse: [SHA256Digest?](repeating: nil, count: pending.count) + skAdNetwork.map(\.fallback))
        for ((index, _), answer) in zip(pending, answers) {
            items[index].jws?.settleSignatureCheck(valid: answer.first)
        }
        for ((index, _, _), answer) in zip(skAdNetwork, answers[pending.count...]) {
            guard var check = items[index].skAdNetworkCheck else { continue }
            check.primaryValid = answer.first
            if !answer.first, check.fallback != nil {
                check.fallbackValid = answer.alternative ?? false
            }
            items[index].skAdNetworkCheck = check
        }
    }

    /// Step 3: the payload (parsed only once its signature holds), the rules, and the ordered findings.
    func complete(_ prepared: PreparedItem) -> VerificationResult {
        var prepared = prepared
        if prepared.needsSignatureCheck {
            checkSignature(&prepared)
        }
        prepared.jws?.remember(in: cache)
        var result = prepared.result
        var findings = prepared.findings
        switch prepared.form {
        case .body(let body):
            if let jws = prepared.jws, let payload = applyJWS(jws, into: &result, findings: &findings) {
                checkPostback(payload, body: body, into: &result, findings: &findings)
            }
        case .bareJWS:
            if let jws = prepared.jws, let payload = applyJWS(jws, into: &result, findings: &findings) {
                if Self.looksLikeImpression(payload) {
                    result.kind = .impression
                    checkImpression(payload, keyID: result.keyID ?? "", into: &result, findings: &findings)
                } else {
                    result.kind = .postback
                    checkPostback(payload, body: nil, into: &result, findings: &findings)
                }
            }
        case .skAdNetwork:
            if let check = prepared.skAdNetworkCheck {
                completeSKAdNetwork(check, into: &result, findings: &findings)
            }
        case .finished:
            break
        }
        finish(&result, findings: findings)
        return result
    }

    // MARK: - Item forms

    private func prepareBody(_ item: ArraySlice<UInt8>, into prepared: inout PreparedItem) {
        let body: JSONObject
        do {
            guard let object = try StrictJSONParser.parse(item).objectValue else {
                prepared.findings.append(Finding(.j1, "the item is JSON but not an object"))
                return
            }
            body = object
        } catch {
            prepared.findings.append(Finding(AttributionError.malformed("the item is not valid JSON: \(error.reason)")))
            return
        }
        if let jws = body[PostbackBodyMember.jwsString.name] {
            prepared.result.kind = .postback
            prepared.result.unsigned = body.removing(PostbackBodyMember.jwsString.name)
            guard case .string(let token) = jws else {
                prepared.findings.append(Finding(.j1, "jws-string is \(jws.typeName), not a string"))
                return
            }
            prepared.form = .body(body)
            prepared.jws = JWSVerification.prepare(ArraySlice(token.utf8), keyFor: keyRing.trustedKey(for:),
                                                   cache: cache)
        } else if body.contains(SKAdNetworkField.attributionSignature) {
            prepared.result.kind = .skadnetwork
            if let check = prepareSKAdNetwork(body, into: &prepared.result, findings: &prepared.findings) {
                prepared.form = .skAdNetwork
                prepared.skAdNetworkCheck = check
            }
        } else {
            prepared.findings.append(Finding(.j1,
                "a JSON item needs \(PostbackBodyMember.jwsString.name) (postback) or "
                    + "\(SKAdNetworkField.attributionSignature) (SKAdNetwork)"))
        }
    }

    // MARK: - The JWS outcome, then the payload's JSON (J1)

    /// Records a checked JWS in the result; returns the payload object once its signature holds.
    private func applyJWS(_ outcome: JWSVerification, into result: inout VerificationResult,
                          findings: inout [Finding]) -> JSONObject? {
        result.keyID = outcome.keyID
        result.environment = outcome.key?.environment
        result.signature = outcome.signature
        if outcome.signature == .verified { result.signedDigest = outcome.signingInputDigest }
        if let failure = outcome.failure {
            findings.append(failure)
            if result.kind == .unknown, outcome.keyID != nil || failure.rule != .j1,
               let payloadBytes = outcome.token?.payloadBytes {
                // Only to name the kind in the record (once the header was readable); rules never see
                // unauthenticated bytes.
                result.kind = Self.kindOfUnverifiedPayload(payloadBytes)
            }
            return nil
        }
        guard let payloadBytes = outcome.verifiedPayload else { return nil }
        do {
            guard let payload = try StrictJSONParser.parse(payloadBytes).objectValue else {
                findings.append(Finding(.j1, "the JWS payload is not a JSON object"))
                return nil
            }
            result.fields = payload
            return payload
        } catch {
            findings.append(Finding(AttributionError.malformed("the JWS payload is not valid JSON: \(error.reason)")))
            return nil
        }
    }

    // MARK: - Payload rules

    private func checkPostback(_ payloadObject: JSONObject, body bodyObject: JSONObject?,
                               into result: inout VerificationResult, findings: inout [Finding]) {
        let payload = PostbackPayload.decode(payloadObject, layout: layouts.postbackPayload, findings: &findings)
        let body = bodyObject.map { PostbackBody.decode($0, layout: layouts.postbackBody, findings: &findings) }
        result.body = body
        guard let payload else { return }
        result.postback = payload
        let facts = PostbackFacts(payload, body: body, keyID: result.keyID ?? "")
        findings += PostbackRules.findings(facts)
        result.tier = CrowdAnonymityTier.lowest(facts)
        result.deduplicationKey = ExactString(payload.postbackIdentifier)
    }

    private func checkImpression(_ payloadObject: JSONObject, keyID: String,
                                 into result: inout VerificationResult, findings: inout [Finding]) {
        result.impression = ImpressionPayload.decode(
            payloadObject, layout: layouts.impressionPayload, findings: &findings)
        // I2 and I3 read the raw members, so a warning still shows beside an I1 error in another field.
        findings += ImpressionRules.check(payloadObject, keyID: keyID, policy: policy)
    }

    // MARK: - Helpers

    /// Orders findings by the catalogue, splits errors from warnings, and applies strict mode.
    private func finish(_ result: inout VerificationResult, findings: [Finding]) {
        guard !findings.isEmpty else { return }
        let ordered = findings.count == 1 ? findings : findings.enumerated().sorted {
            $0.element.rule != $1.element.rule ? $0.element.rule < $1.element.rule : $0.offset < $1.offset
        }.map(\.element)
        result.errors = ordered.filter { !$0.isWarning }
        result.warnings = ordered.filter(\.isWarning)
        if policy.isStrict && !result.warnings.isEmpty {
            result.errors += result.warnings.map(\.promotedToError)
            result.warnings = []
        }
    }

    /// Spec §5.2: `impression-identifier` and no `postback-identifier` makes an impression; anything else is a
    /// postback.
    static func looksLikeImpression(_ payload: JSONObject) -> Bool {
        payload.contains(ImpressionMember.impressionIdentifier.name)
            && !payload.contains(PostbackPayloadMember.postbackIdentifier.name)
    }

    /// A payload that is not a JSON object is neither an impression nor a postback: its kind stays unknown.
    private static func kindOfUnverifiedPayload(_ payloadBytes: [UInt8]) -> ItemKind {
        guard let object = try? StrictJSONParser.parse(payloadBytes).objectValue else { return .unknown }
        return looksLikeImpression(object) ? .impression : .postback
    }

    private static func isJSONWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }
}
