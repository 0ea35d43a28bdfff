@_spi(Servers) import Attribution
import Synchronization

/// What a request's handler decided, for its log line: the verdict and the first error's code of the postback it
/// received. The request log (``RequestLogMiddleware``) makes one per request and hands it down as a task-local
/// value; the postback endpoint records into it. Never in the answer: a 200 tells a sender nothing of the verdict.
final class RequestOutcome: Sendable {
    /// The request's outcome, while the request log's middleware runs the request; nil elsewhere.
    @TaskLocal static var current: RequestOutcome?

    private let decided = Mutex<(verdict: Verdict, code: String?)?>(nil)

    /// Records `postback`'s verdict and first error's code (the last recorded wins: after deduplication, a retry
    /// is `invalid` with code `duplicate`).
    func record(_ postback: VerifiedPostback) {
        let code = postback.firstError?.code?.rawValue
        decided.withLock { $0 = (postback.verdict, code) }
    }

    /// The verdict and code recorded, if any.
    var verdict: (verdict: Verdict, code: String?)? {
        decided.withLock { $0 }
    }
}
