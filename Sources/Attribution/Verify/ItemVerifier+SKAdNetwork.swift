extension ItemVerifier {
    /// Verifies an SKAdNetwork postback body (spec §9) in the order of its checks: the version (S1), the version's
    /// signed members and their JSON types (S2), the signature over their U+2063-joined values (S3, and for 2.2
    /// the 2.0/2.1 order as a fallback, S6), then the signed values (S4) and the unsigned members (S5).
    ///
    /// The key is chosen by the version, never by the body: P-192 for 1.0 and 2.0, P-256 from 2.1 on.
    func verifySKAdNetwork(_ body: JSONObject, into result: inout VerificationResult, findings: inout [Finding]) {
        let version: SKAdNetworkVersion
        switch SKAdNetworkVersion.read(body) {
        case .success(let read): version = read
        case .failure(let finding):
            findings.append(finding)
            return
        }
        let trusted = keyRing.skAdNetworkKeys.key(for: version)
        result.keyID = trusted.keyID
        result.environment = trusted.environment
        result.unsigned = SKAdNetworkPostback.unsignedMembers(of: body, signedFields: version.signedFields)
        guard let postback = SKAdNetworkPostback.decode(
            body, version: version, signedFields: version.signedFields, findings: &findings) else { return }
        result.signedString = postback.signedString

        let signature: [UInt8]
        switch Self.attributionSignature(body) {
        case .success(let bytes): signature = bytes
        case .failure(let finding):
            result.signature = .failed
            findings.append(finding)
            return
        }
        var verified = postback
        if !trusted.key.isValidDERSignature(signature, sha256Over: Array(postback.signedString.utf8)) {
            var ignored: [Finding] = []
            guard let fallbackFields = version.fallbackSignedFields,
                  let fallback = SKAdNetworkPostback.decode(
                    body, version: version, signedFields: fallbackFields, findings: &ignored),
                  trusted.key.isValidDERSignature(signature, sha256Over: Array(fallback.signedString.utf8))
            else {
                result.signature = .failed
                let alsoTried = version.fallbackSignedFields == nil ? "" : " (nor over the 2.0/2.1 order)"
                findings.append(Finding(.s3,
                    "attribution-signature does not verify with the \(trusted.key.curve) key \(trusted.keyID) over "
                        + "the \(version.rawValue) signed string\(alsoTried)"))
                return
            }
            verified = fallback
            result.signedString = fallback.signedString
            findings.append(Finding(.s6,
                "this 2.2 postback verifies only over the 2.0/2.1 order, without fidelity-type, which is "
                    + "therefore unsigned"))
        }
        result.signature = .verified
        result.fields = verified.signedMembers
        result.unsigned = verified.unsignedMembers
        result.skAdNetwork = verified
        findings += SKAdNetworkRules.checkSignedValues(verified)
        findings += SKAdNetworkRules.checkUnsignedMembers(verified.unsignedMembers)
        result.deduplicationKey = DeduplicationKey(verified.deduplicationKey)
    }

    /// The DER signature in `attribution-signature`: strict padded standard base64 (RFC 4648 §4) in a string.
    /// Anything else cannot be a valid signature, so it is `bad-signature` (S3) rather than malformed input.
    private static func attributionSignature(_ body: JSONObject) -> Result<[UInt8], Finding> {
        guard case .string(let text)? = body["attribution-signature"] else {
            let found = body["attribution-signature"]?.typeName ?? "missing"
            return .failure(Finding(.s3, "attribution-signature is \(found), not a base64 string"))
        }
        guard !text.isEmpty else {
            return .failure(Finding(.s3, "attribution-signature is empty"))
        }
        do {
            return .success(try Base64.decode(Array(text.utf8)))
        } catch {
            return .failure(Finding(.s3, "attribution-signature is not strict standard base64: \(error.reason)"))
        }
    }
}
