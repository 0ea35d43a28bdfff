import Attribution
@testable import ReceiverCore
import Testing

/// Issue 34: the library's sampled re-check of its signature arithmetic through libcrypto counts disagreements
/// process-wide (`ECPublicKey.signatureDisagreements`); the receiver exports them as
/// `postback_receiver_signature_disagreements_total`, brought up to the library's count after each verification
/// group (which also logs the new ones at critical level).
@Suite("Signature disagreements in the receiver's metrics")
struct ReceiverSignatureDisagreementTests {
    @Test("The series is there at 0 from start-up, and the library's count has no disagreement in a healthy process")
    func seriesAtZero() {
        let metrics = ReceiverMetrics()
        #expect(ReceiverDevelopmentKeyTests.value(of: "postback_receiver_signature_disagreements_total",
                                                  in: metrics) == 0)
        #expect(ECPublicKey.signatureDisagreements == 0)
    }

    @Test("The counter follows the library's total: each increase once, never backwards")
    func followsTheTotal() {
        let metrics = ReceiverMetrics()
        #expect(metrics.signatureDisagreements(total: 0) == 0)
        #expect(metrics.signatureDisagreements(total: 3) == 3)
        #expect(metrics.signatureDisagreements(total: 3) == 0, "an increase is reported (and logged) once")
        #expect(metrics.signatureDisagreements(total: 5) == 2)
        #expect(metrics.signatureDisagreements(total: 4) == 0)
        #expect(ReceiverDevelopmentKeyTests.value(of: "postback_receiver_signature_disagreements_total",
                                                  in: metrics) == 5)
    }
}
