extension ECPublicKey {
    /// The byte count of an ES256 signature: r then s, 32 bytes each (RFC 7518 §3.4).
    static let es256SignatureByteCount = 64

    /// True when `rawSignature` is a valid ES256 signature of `message` under this key (RFC 7518 §3.4).
    ///
    /// `rawSignature` is the decoded JWS signature segment: exactly 64 bytes r‖s, else false. `message` is the JWS
    /// signing input, the first two segments and their dot as received. High-S signatures are valid (ECDSA has
    /// no low-S rule; Apple's development postback has s > n/2); r or s of 0 or at least n are not. Always false
    /// for a key that is not on P-256. Apple, "Verifying a postback". Always `EVP_PKEY_verify`'s answer (the
    /// reference the faster checks of ``areValidES256Signatures(_:)`` are tested against).
    func isValidES256Signature(
        _ rawSignature: some Collection<UInt8>, for message: some Collection<UInt8>
    ) -> Bool {
        guard curve == .p256, rawSignature.count == Self.es256SignatureByteCount else { return false }
        return isValidES256Signature(rawSignature, digest: SHA256Digest(of: message))
    }

    /// True when `rawSignature` (64 bytes r‖s) is a valid ES256 signature of the message whose SHA-256 is
    /// `digest`: the same check as ``isValidES256Signature(_:for:)`` when the caller has hashed the message
    /// already (the JWS path hashes the signing input once, for this check and for its token cache).
    func isValidES256Signature(_ rawSignature: some Collection<UInt8>, digest: SHA256Digest) -> Bool {
        guard curve == .p256, rawSignature.count == Self.es256SignatureByteCount else { return false }
        return rawSignature.withContiguousBytesForLibcrypto { raw in
            P1363Signature.withDEREncoding(of: raw) { der in
                digest.withUnsafeBytes { evpKey.isValidSignature(der: der, overSHA256Digest: $0) }
            }
        }
    }
}

extension ECPublicKey {
    /// Whether each check's signature is a valid ES256 signature of its digest under its key: the answers
    /// ``isValidES256Signature(_:digest:)`` gives one by one (false for a signature that is not 64 bytes or a key
    /// not on P-256). Two or more are computed together, with one modular inversion for the whole batch and
    /// without converting points to affine coordinates (``P256BatchVerifier``), and with tables of multiples for
    /// keys that have verified many signatures (``P256KeyTables``); a lone check under a key without a table
    /// goes through ``isValidES256Signature(_:digest:)``, which is as cheap alone.
    static func areValidES256Signatures(_ checks: [ES256SignatureCheck]) -> [Bool] {
        if let verifier = batchVerifier(for: checks) { return verifier.verifyCrossChecked(checks) }
        return checks.map { $0.key.isValidES256Signature($0.signature, digest: $0.digest) }
    }

    /// As ``areValidES256Signatures(_:)``, and for each check that fails and has an alternative digest
    /// (`alternatives[i]`), whether its signature verifies over that digest instead: an SKAdNetwork 2.2 postback's
    /// 2.0/2.1 order (rule S6), which the batch verifier checks for a fraction of a second verification
    /// (``P256BatchVerifier/verify(_:orElse:)``). `alternative` is nil where none was given, and not meaningful
    /// where `first` holds.
    static func areValidES256Signatures(
        _ checks: [ES256SignatureCheck], orElse alternatives: [SHA256Digest?]
    ) -> [(first: Bool, alternative: Bool?)] {
        if let verifier = batchVerifier(for: checks) {
            return verifier.verifyCrossChecked(checks, orElse: alternatives)
        }
        return checks.indices.map { index in
            let check = checks[index]
            let first = check.key.isValidES256Signature(check.signature, digest: check.digest)
            let alternative = index < alternatives.count ? alternatives[index] : nil
            return (first, alternative.map { !first && check.key.isValidES256Signature(check.signature, digest: $0) })
        }
    }

    /// The thread's batch verifier when it should take `checks` (two or more, or one under a key with a table of
    /// multiples); nil when the checks go one by one.
    private static func batchVerifier(for checks: [ES256SignatureCheck]) -> P256BatchVerifier? {
        guard let verifier = ThreadVerificationContexts.current?.batchVerifier else { return nil }
        return checks.count >= 2 || (checks.first.map { verifier.hasTable(for: $0.key) } ?? false) ? verifier : nil
    }
}
