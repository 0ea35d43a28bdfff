/// The JWS checks in the spec's order, whatever the keys come from: envelope (J1), header (J1, J2), key (J3, J4),
/// signature (J5). The payload is not parsed here: it is handed back only once its signature holds.
struct JWSVerification: Sendable {
    /// The token taken apart, once its envelope was well formed.
    private(set) var token: CompactJWS?
    /// The header `kid`, once the header was read.
    private(set) var keyID: String?
    /// The trusted key that `kid` named.
    private(set) var key: TrustedKey?
    private(set) var signature: SignatureStatus = .notChecked
    /// The finding that stopped verification; nil when the signature verified (or is still to be checked).
    private(set) var failure: Finding?
    /// The SHA-256 of the signing input, once everything but the ECDSA itself has passed.
    private var pendingDigest: SHA256Digest?
    /// The SHA-256 of the signing input, once computed (what a ``ContentFingerprint`` names the signed content by).
    private(set) var signingInputDigest: SHA256Digest?
    /// The digest of a signing input whose signature the ECDSA just verified, until ``remember(in:)`` stores it.
    private var newlyVerifiedDigest: SHA256Digest?

    /// True when everything before the ECDSA passed and ``checkSignature()`` is still to run.
    var needsSignatureCheck: Bool { pendingDigest != nil }

    /// The decoded payload bytes, only when the signature verified.
    var verifiedPayload: [UInt8]? {
        signature == .verified ? token?.payloadBytes : nil
    }

    /// Verifies `token` (RFC 7515 §5.2 with RFC 7518 §3.4), looking its `kid` up through `keyFor`.
    ///
    /// The signed message is the token's own bytes up to the second dot; a signature that is canonical
    /// base64url but not 64 bytes is `bad-signature` (J5), not a format error.
    /// - Parameter cache: tokens already verified under the same key ring; a hit skips the ECDSA.
    static func verify(
        _ token: ArraySlice<UInt8>, keyFor: (String) -> Result<TrustedKey, AttributionError>,
        cache: VerifiedTokenCache? = nil
    ) -> JWSVerification {
        var outcome = prepare(token, keyFor: keyFor, cache: cache)
        outcome.checkSignature()
        outcome.remember(in: cache)
        return outcome
    }

    /// Everything before the ECDSA: envelope, header, key, signature length, the signing input's digest, and the
    /// cache. A pipeline runs this and ``checkSignature()`` on different threads.
    static func prepare(
        _ token: ArraySlice<UInt8>, keyFor: (String) -> Result<TrustedKey, AttributionError>,
        cache: VerifiedTokenCache? = nil
    ) -> JWSVerification {
        var outcome = JWSVerification()
        let jws: CompactJWS
        do {
            jws = try CompactJWS(token)
        } catch {
            outcome.failure = Finding(error)
            return outcome
        }
        outcome.token = jws
        let header: JWSHeader
        switch JWSHeader.read(jws.headerBytes) {
        case .success(let read): header = read
        case .failure(let error):
            outcome.failure = Finding(error)
            return outcome
        }
        outcome.keyID = header.keyID
        let trusted: TrustedKey
        switch keyFor(header.keyID) {
        case .success(let key): trusted = key
        case .failure(let error):
            outcome.failure = Finding(error)
            return outcome
        }
        outcome.key = trusted
        guard jws.signatureBytes.count == 64 else {
            outcome.signature = .failed
            outcome.failure = Finding(.j5,
                "an ES256 signature is 64 bytes (r then s); this one is \(jws.signatureBytes.count)")
            return outcome
        }
        // One SHA-256 of the signing input serves the cache lookup and the ECDSA.
        let digest = SHA256Digest(of: jws.signingInput)
        outcome.signingInputDigest = digest
        if let cache, cache.contains(signingInput: digest, signature: jws.signatureBytes, verifiedBy: trusted.key) {
            outcome.signature = .verified
            return outcome
        }
        outcome.pendingDigest = digest
        return outcome
    }

    /// The ECDSA, if ``prepare(_:keyFor:cache:)`` left it to do; nothing else, so a worker thread spends its time on
    /// the ECDSA alone (``remember(in:)`` records a success in the cache afterwards, on any thread).
    mutating func checkSignature() {
        guard let digest = pendingDigest, let jws = token, let trusted = key else { return }
        settleSignatureCheck(valid: trusted.key.isValidES256Signature(jws.signatureBytes, digest: digest))
    }

    /// The ECDSA still to do, for a caller that checks many at once (``ECPublicKey/areValidES256Signatures(_:)``)
    /// and hands each answer back through ``settleSignatureCheck(valid:)``; nil when there is none.
    var pendingCheck: ES256SignatureCheck? {
        guard let digest = pendingDigest, let jws = token, let trusted = key else { return nil }
        return ES256SignatureCheck(key: trusted.key, signature: jws.signatureBytes, digest: digest)
    }

    /// Records the answer to ``pendingCheck``, as ``checkSignature()`` does with its own.
    mutating func settleSignatureCheck(valid: Bool) {
        guard let digest = pendingDigest, let trusted = key else { return }
        pendingDigest = nil
        guard valid else {
            signature = .failed
            failure = Finding(.j5, "the signature does not verify with the key for \(trusted.keyID)")
            return
        }
        newlyVerifiedDigest = digest
        signature = .verified
    }

    /// Stores a signature that ``checkSignature()`` verified in `cache`, so an exact repeat skips the ECDSA.
    mutating func remember(in cache: VerifiedTokenCache?) {
        guard let digest = newlyVerifiedDigest, let jws = token, let trusted = key else { return }
        newlyVerifiedDigest = nil
        cache?.insert(signingInput: digest, signature: jws.signatureBytes, verifiedBy: trusted.key)
    }
}
