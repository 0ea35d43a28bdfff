extension ECPublicKey {
    /// True when `derSignature` is a valid ECDSA signature with SHA-256 of `message` under this key, the signature
    /// being a DER `ECDSA-Sig-Value` (RFC 5480 §2.2.3) as SKAdNetwork postbacks carry it.
    ///
    /// Works for P-256 and P-192 keys (Apple, "Verifying an install-validation postback"). Only strict DER is
    /// accepted: libcrypto re-encodes the parsed signature and refuses one that differs, so BER variants (long-form
    /// lengths, padded integers) and trailing bytes are false.
    ///
    /// A P-256 key that has verified many signatures checks them with its table of multiples, shared with every
    /// other value of the same key (Apple's SKAdNetwork P-256 key is Apple's AdAttributionKit key): the same
    /// answer as `EVP_PKEY_verify`, which checks everything else. A P-192 key that has verified more than a few
    /// dozen signatures checks them with its tables of multiples (``P192KeyTable``), the same answer again.
    func isValidDERSignature(
        _ derSignature: some Collection<UInt8>, sha256Over message: some Collection<UInt8>
    ) -> Bool {
        isValidDERSignature(derSignature, sha256Over: message, p192Tables: .shared)
    }

    /// ``isValidDERSignature(_:sha256Over:)`` with P-192 tables from `p192Tables` instead of the process's registry
    /// (bounded in number): a test passes one of its own so that its keys do not spend the process's budget.
    func isValidDERSignature(
        _ derSignature: some Collection<UInt8>, sha256Over message: some Collection<UInt8>,
        p192Tables: P192KeyTables
    ) -> Bool {
        derSignature.withContiguousBytesForLibcrypto { der in
            message.withContiguousBytesForLibcrypto { message in
                if curve == .p256, let verifier = ThreadVerificationContexts.current?.batchVerifier,
                   verifier.hasTable(for: self), let raw = P1363Signature.raw(fromStrictDER: der) {
                    let check = ES256SignatureCheck(key: self, signature: raw, digest: SHA256Digest(of: message))
                    return verifier.verifyCrossChecked([check]) == [true]
                }
                if curve == .p192, let table = p192Tables.table(forPoint: uncompressedPoint) {
                    guard let raw = P1363Signature.raw(fromStrictDER: der, half: Int32(P192KeyTable.scalarBytes))
                    else { return evpKey.isValidSHA256Signature(der: der, over: message) }
                    let half = P192KeyTable.scalarBytes
                    let accepted = table.isValidSignature(r: raw[..<half], s: raw[half...],
                                                          digest: SHA256Digest(of: message))
                    return SignatureCrossCheck.isValid(accepted, curve: "P-192") {
                        evpKey.isValidSHA256Signature(der: der, over: message)
                    }
                }
                return evpKey.isValidSHA256Signature(der: der, over: message)
            }
        }
    }
}

extension ECPublicKey {
    /// The public point `04 || x || y`: the end of the DER SubjectPublicKeyInfo.
    var uncompressedPoint: [UInt8] {
        Array(derRepresentation.suffix(1 + 2 * curve.coordinateByteCount))
    }
}
