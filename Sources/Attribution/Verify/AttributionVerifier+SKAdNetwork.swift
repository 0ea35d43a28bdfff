/// An SKAdNetwork body read up to its signature: what the signature step checks and the completion step reports.
///
/// Split so that a pipeline's signature step does nothing but ECDSA: versions from 2.1 on (P-256) join the batch
/// of ES256 checks (one inversion for the batch, the key's table of multiples), 1.0 and 2.0 are checked with the
/// P-192 key's table (``P192KeyTable``); the decoding before and the rules after run in the other steps.
struct SKAdNetworkCheck: Sendable {
    let version: SKAdNetworkVersion
    let trusted: TrustedKey
    /// The postback decoded in the version's signing order.
    let postback: SKAdNetworkPostback
    /// `attribution-signature`, DER.
    let signature: [UInt8]
    /// For 2.2, the postback decoded in the 2.0/2.1 order (rule S6); nil when the version has no fallback or the
    /// body does not decode in it.
    let fallback: SKAdNetworkPostback?
    /// Whether the signature verified over the signing order, then over the fallback order; nil until checked.
    var primaryValid: Bool?
    var fallbackValid: Bool?

    /// True once the signature step has answered everything the completion needs.
    var isChecked: Bool {
        guard let primaryValid else { return false }
        return primaryValid || fallback == nil || fallbackValid != nil
    }

    /// The ES256 check (r‖s, SHA-256 of the signed string) of `postback`, when the key is on P-256 and the signature
    /// strict DER; nil otherwise (the single check then decides, with `EVP_PKEY_verify`).
    func es256Check(of postback: SKAdNetworkPostback) -> ES256SignatureCheck? {
        guard trusted.key.curve == .p256,
              let raw = P1363Signature.raw(fromStrictDER: signature) else { return nil }
        return ES256SignatureCheck(key: trusted.key, signature: raw,
                                   digest: SHA256Digest(of: postback.signedString.utf8))
    }

    /// The checks still to run: the signing order first, then (only once it failed) the fallback.
    mutating func checkAlone() {
        if primaryValid == nil {
            primaryValid = trusted.key.isValidDERSignature(signature, sha256Over: postback.signedString.utf8)
        }
        if primaryValid == false, let fallback, fallbackValid == nil {
            fallbackValid = trusted.key.isValidDERSignature(signature, sha256Over: fallback.signedString.utf8)
        }
    }
}

extension AttributionVerifier {
    /// Reads an SKAdNetwork postback body (spec §9) up to its signature, in the order of its checks: the version
    /// (S1), the version's signed members and their JSON types (S2), and the signature's encoding (S3). Nil, with
    /// the findings, when one fails.
    ///
    /// The key is chosen by the version, never by the body: P-192 for 1.0 and 2.0, P-256 from 2.1 on.
    func prepareSKAdNetwork(_ body: JSONObject, into result: inout VerificationResult, findings: inout [Finding])
        -> SKAdNetworkCheck? {
        let version: SKAdNetworkVersion
        switch SKAdNetworkVersion.read(body) {
        case .success(let read): version = read
        case .failure(let error):
            findings.append(Finding(error))
            return nil
        }
        let trusted = keyRing.skAdNetworkKeys.key(for: version)
        result.keyID = trusted.keyID
        result.environment = trusted.environment
        guard let postback = SKAdNetworkPostback.decode(
            body, version: version, signedFields: version.signedFields, findings: &findings) else {
            result.unsigned = SKAdNetworkPostback.unsignedMembers(of: body, signedFields: version.signedFields)
            return nil
        }
        result.unsigned = postback.unsignedMembers
        result.signedString = postback.signedString

        let signature: [UInt8]
        switch Self.attributionSignature(body) {
        case .success(let bytes): signature = bytes
        case .failure(let error):
            result.signature = .failed
            findings.append(Finding(error))
            return nil
        }
        var ignored: [Finding] = []
        let fallback = version.fallbackSignedFields.flatMap { fields in
            SKAdNetworkPostback.decode(body, version: version, signedFields: fields, findings: &ignored)
        }
        return SKAdNetworkCheck(version: version, trusted: trusted, postback: postback, signature: signature,
                                fallback: fallback)
    }

    /// The findings and fields once the signature step answered: S3 when neither order verified, S6 when only the
    /// 2.2 fallback did, then the signed values (S4) and the unsigned members (S5).
    func completeSKAdNetwork(_ check: SKAdNetworkCheck, into result: inout VerificationResult,
                             findings: inout [Finding]) {
        var check = check
        if !check.isChecked { check.checkAlone() }
        var verified = check.postback
        if check.primaryValid != true {
            guard let fallback = check.fallback, check.fallbackValid == true else {
                result.signature = .failed
                let alsoTried = check.version.fallbackSignedFields == nil ? "" : " (nor over the 2.0/2.1 order)"
                findings.append(Finding(.s3,
                    "attribution-signature does not verify with the \(check.trusted.key.curve) key "
                        + "\(check.trusted.keyID) over the \(check.version.rawValue) signed string\(alsoTried)"))
                return
            }
            verified = fallback
            result.signedString = fallback.signedString
            findings.append(Finding(.s6,
                "this 2.2 postback verifies only over the 2.0/2.1 order, without "
                    + "\(SKAdNetworkField.fidelityType.rawValue), which is "
                    + "therefore unsigned"))
        }
        result.signature = .verified
        result.fields = verified.signedMembers
        result.unsigned = verified.unsignedMembers
        result.skAdNetwork = verified
        findings += SKAdNetworkRules.checkSignedValues(verified)
        findings += SKAdNetworkRules.checkUnsignedMembers(verified.unsignedMembers)
        result.deduplicationKey = ExactString(verified.deduplicationKey)
    }

    /// The DER signature in `attribution-signature`: strict padded standard base64 (RFC 4648 §4) in a string.
    /// Anything else cannot be a valid signature, so it is `bad-signature` (S3) rather than malformed input.
    private static func attributionSignature(_ body: JSONObject) -> Result<[UInt8], AttributionError> {
        guard case .string(let text)? = body[SKAdNetworkField.attributionSignature] else {
            let found = body[SKAdNetworkField.attributionSignature]?.typeName ?? "missing"
            return .failure(AttributionError(.s3, "attribution-signature is \(found), not a base64 string"))
        }
        guard !text.isEmpty else {
            return .failure(AttributionError(.s3, "attribution-signature is empty"))
        }
        do {
            return .success(try Base64.decode(Array(text.utf8)))
        } catch {
            return .failure(
                AttributionError(.s3, "attribution-signature is not strict standard base64: \(error.reason)"))
        }
    }
}
