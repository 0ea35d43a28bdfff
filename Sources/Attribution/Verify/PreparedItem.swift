/// An item part-way through verification: parsed and checked up to its ECDSA, which may run on another thread.
///
/// ``AttributionVerifier/verify(_:)-(ArraySlice<UInt8>)`` is `complete(checkSignature(prepare(item)))`; a pipeline runs
/// the three steps on different threads so the threads that do the ECDSA do nothing else.
struct PreparedItem: Sendable {
    /// What the item turned out to be, and what is left to do for it.
    enum Form: Sendable {
        /// Decided already (malformed, too large, unknown form).
        case finished
        /// A postback body; its `jws-string` is in ``jws``.
        case body(JSONObject)
        /// A bare compact JWS in ``jws``.
        case bareJWS
        /// An SKAdNetwork body read up to its signature (S1, S2 and the signature's encoding passed): its check
        /// is in ``skAdNetworkCheck``.
        case skAdNetwork
    }

    var result = VerificationResult()
    var findings: [Finding] = []
    var form = Form.finished
    var jws: JWSVerification?
    /// An SKAdNetwork body's check. Kept out of ``Form``: a payload there would make it a multi-payload enum, whose
    /// case tag Swift may keep in a pointer's spare bits, which LeakSanitizer then cannot follow.
    var skAdNetworkCheck: SKAdNetworkCheck?

    /// The ES256 check the signature step would run for this item, if that is all it has to do.
    var pendingES256Check: ES256SignatureCheck? {
        switch form {
        case .body, .bareJWS: jws?.pendingCheck
        case .skAdNetwork, .finished: nil
        }
    }

    /// True when the signature step has work to do: an ECDSA, or a whole SKAdNetwork verification.
    var needsSignatureCheck: Bool {
        switch form {
        case .skAdNetwork: !(skAdNetworkCheck?.isChecked ?? true)
        case .body, .bareJWS: jws?.needsSignatureCheck ?? false
        case .finished: false
        }
    }
}
