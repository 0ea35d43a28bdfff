import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One thread's sampled second opinion on the fast signature arithmetic: about one acceptance in
/// ``defaultInterval`` of ``P256BatchVerifier`` (ES256, and SKAdNetwork's P-256 signatures) or ``P192KeyTable``
/// (SKAdNetwork's P-192 signatures) is verified again through libcrypto's `EVP_PKEY_verify`.
///
/// The fast paths are tested against libcrypto, but they decide real signatures with code of their own; a fault in
/// it that only some inputs reach would accept a forgery silently. The re-check bounds how long such a fault stays
/// unseen. When libcrypto disagrees, the item is invalid (the answer becomes false, as for any bad signature), the
/// process-wide ``disagreements`` count grows (the command line's exit status 3, the receiver's
/// `postback_receiver_signature_disagreements_total`), and a line on standard error asks for a report. Rejections are
/// not re-checked: a signature the fast path refuses is refused.
///
/// Each thread counts its own acceptances (no shared counter on the hot path) from a random phase, so which
/// acceptances are re-checked cannot be steered by the order of the input. Held by ``ThreadVerificationContexts``.
final class SignatureCrossCheck {
    /// Acceptances per re-check through libcrypto.
    static let defaultInterval = 1024

    /// Disagreements with libcrypto since the process started, on every thread.
    private static let disagreementCount = Atomic<Int>(0)

    /// Acceptances per re-check on this thread: ``defaultInterval``, or 1 for a test that re-checks every one.
    var interval: Int {
        didSet { remaining = min(remaining, max(1, interval)) }
    }

    /// When true, the fast path's answers are inverted before they are sampled: a test's stand-in for a fault of
    /// the arithmetic (a forgery the fast path would accept). Never set outside tests.
    var invertsFastAnswers = false

    /// Acceptances re-checked on this thread (tests check that the sampling ran).
    private(set) var recheckCount = 0

    /// Acceptances left on this thread before the next re-check.
    private var remaining: Int

    /// A cross-check at a random phase of ``defaultInterval``.
    init() {
        interval = Self.defaultInterval
        remaining = Int.random(in: 1...Self.defaultInterval)
        #if DEBUG
        // The command line's tests run its debug binary with this set, to see a disagreement end to end (the
        // status, the message); a release build has no such switch.
        if getenv("POSTBACK_VERIFY_TEST_INVERT_FAST_SIGNATURES") != nil {
            (interval, remaining, invertsFastAnswers) = (1, 1, true)
        }
        #endif
    }

    /// What became of one answer of the fast path.
    enum Outcome {
        /// The fast path rejected the signature: not re-checked.
        case rejected
        /// The fast path accepted it, and it was not sampled or libcrypto agreed.
        case accepted
        /// The fast path accepted it and libcrypto did not: the signature is invalid.
        case disagreed
    }

    /// Disagreements with libcrypto since the process started, on every thread: each one an item reported invalid
    /// that the fast arithmetic had accepted.
    static var disagreements: Int { disagreementCount.load(ordering: .relaxed) }

    /// The fast path's answer after this thread's sampling: every ``interval``-th acceptance is checked again with
    /// `reference` (libcrypto's `EVP_PKEY_verify` on the same key, signature and digest).
    ///
    /// - Parameters:
    ///   - fastAnswer: whether the fast path accepted the signature.
    ///   - curve: the curve's name, for the report on standard error.
    ///   - reference: libcrypto's answer for the same check; called only for a sampled acceptance.
    /// - Returns: ``Outcome/disagreed`` (after counting and reporting it) when libcrypto rejects a sampled
    ///   acceptance, else whether the fast path accepted.
    func outcome(of fastAnswer: Bool, curve: String, reference: () -> Bool) -> Outcome {
        guard fastAnswer != invertsFastAnswers else { return .rejected }
        remaining -= 1
        guard remaining <= 0 else { return .accepted }
        remaining = max(1, interval)
        recheckCount += 1
        if reference() { return .accepted }
        Self.disagreementCount.add(1, ordering: .relaxed)
        Self.report(curve: curve)
        return .disagreed
    }

    /// ``outcome(of:curve:reference:)`` as the signature's validity, on this thread's cross-check; libcrypto's
    /// answer alone on a thread without contexts (libcrypto could not allocate them).
    ///
    /// - Parameters:
    ///   - fastAnswer: whether the fast path accepted the signature.
    ///   - curve: the curve's name, for the report on standard error.
    ///   - reference: libcrypto's answer for the same check.
    /// - Returns: true when the fast path accepted and libcrypto, if asked, agreed.
    static func isValid(_ fastAnswer: Bool, curve: String, reference: () -> Bool) -> Bool {
        guard let crossCheck = ThreadVerificationContexts.current?.crossCheck else { return reference() }
        return crossCheck.outcome(of: fastAnswer, curve: curve, reference: reference) == .accepted
    }

    /// Writes the line that asks for a report, once per disagreement, in one `write` so that threads' lines do not
    /// interleave.
    private static func report(curve: String) {
        let line = "postback-verify: the signature arithmetic disagreed with libcrypto on an item; it was reported "
            + "invalid. Please report this: a \(curve) signature that libcrypto's EVP_PKEY_verify rejects was "
            + "accepted by postback-verify's own arithmetic (with the version and, if you can share it, the "
            + "item).\n"
        var bytes = Array(line.utf8)
        _ = bytes.withUnsafeMutableBytes { write(2, $0.baseAddress, $0.count) }
    }
}

extension P256BatchVerifier {
    /// ``verify(_:orElse:)`` with this thread's sampled re-check of its acceptances (``SignatureCrossCheck``): an
    /// acceptance libcrypto rejects makes its item invalid, the alternative digest's answer too.
    ///
    /// - Parameters:
    ///   - checks: the signatures, digests and keys.
    ///   - alternatives: each check's alternative digest, nil or absent where it has none.
    /// - Returns: one answer per check, in order, as ``verify(_:orElse:)`` gives them.
    func verifyCrossChecked(_ checks: [ES256SignatureCheck], orElse alternatives: [SHA256Digest?])
        -> [(first: Bool, alternative: Bool?)] {
        var answers = verify(checks, orElse: alternatives)
        guard let crossCheck = ThreadVerificationContexts.current?.crossCheck else { return answers }
        for index in answers.indices {
            let check = checks[index]
            switch crossCheck.outcome(of: answers[index].first, curve: "P-256", reference: {
                check.key.isValidES256Signature(check.signature, digest: check.digest)
            }) {
            case .accepted:
                answers[index].first = true
                continue
            case .disagreed:
                answers[index] = (false, answers[index].alternative.map { _ in false })
                continue
            case .rejected:
                answers[index].first = false
            }
            guard let alternative = answers[index].alternative, index < alternatives.count,
                  let digest = alternatives[index] else { continue }
            answers[index].alternative = crossCheck.outcome(of: alternative, curve: "P-256", reference: {
                check.key.isValidES256Signature(check.signature, digest: digest)
            }) == .accepted
        }
        return answers
    }

    /// ``verify(_:)`` with this thread's sampled re-check of its acceptances (``SignatureCrossCheck``).
    ///
    /// - Parameter checks: the signatures, digests and keys.
    /// - Returns: one answer per check, in order.
    func verifyCrossChecked(_ checks: [ES256SignatureCheck]) -> [Bool] {
        verifyCrossChecked(checks, orElse: []).map(\.first)
    }
}

extension ECPublicKey {
    /// How many signatures postback-verify's own arithmetic accepted and libcrypto, re-checking a sample of about
    /// one acceptance in 1,024, rejected since the process started. Each of those items was reported invalid.
    /// Anything but 0 is a bug to report: the command line exits with status 3, the receiver exports it as
    /// `postback_receiver_signature_disagreements_total`.
    public static var signatureDisagreements: Int { SignatureCrossCheck.disagreements }
}
