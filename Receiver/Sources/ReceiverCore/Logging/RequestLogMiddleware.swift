import Hummingbird
import Logging

/// The request log: one line per request once it is answered, as Hummingbird's `LogRequestsMiddleware` wrote it
/// (message `Request`; `hb.request.id` from the context's logger, `hb.request.method`, `hb.request.path`), and what
/// the answer was: `status` (the HTTP status code), `latency_ms` (from the middleware's start to the answer's head,
/// in milliseconds with three decimals) and, for a postback that was verified, `postback.verdict` (`valid`,
/// `invalid`) and, when invalid, `postback.code` (the first error's code, `duplicate` for a retry). The added keys
/// sort after Hummingbird's, so a text line keeps its fields where they were and gains its new ones at its end.
///
/// A request the router or a handler answers by throwing (the router's 404) is logged with that error's status
/// (500 for any error that is not an HTTP one) before the error goes on.
struct RequestLogMiddleware<Context: RequestContext>: RouterMiddleware {
    /// The level of the request lines (`info`: `--log-level notice` leaves them out).
    let level: Logger.Level

    init(_ level: Logger.Level) {
        self.level = level
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response {
        // At a level that leaves the line out, nothing is measured or kept.
        guard context.logger.logLevel <= level else { return try await next(request, context) }
        let start = ContinuousClock.now
        let outcome = RequestOutcome()
        do {
            let response = try await RequestOutcome.$current.withValue(outcome) {
                try await next(request, context)
            }
            log(request, context: context, status: response.status.code, outcome: outcome, since: start)
            return response
        } catch {
            let status = (error as? any HTTPResponseError)?.status.code ?? 500
            log(request, context: context, status: status, outcome: outcome, since: start)
            throw error
        }
    }

    private func log(_ request: Request, context: Context, status: Int, outcome: RequestOutcome,
                     since start: ContinuousClock.Instant) {
        var metadata: Logger.Metadata = [
            "hb.request.path": .stringConvertible(request.uri),
            "hb.request.method": .string(request.method.rawValue),
            "status": .stringConvertible(status),
            "latency_ms": .string(Self.milliseconds(ContinuousClock.now - start)),
        ]
        if let decided = outcome.verdict {
            metadata["postback.verdict"] = .string(decided.verdict.rawValue)
            if let code = decided.code { metadata["postback.code"] = .string(code) }
        }
        context.logger.log(level: level, "Request", metadata: metadata)
    }

    /// `duration` in milliseconds with three decimals (`0.412`, `12.000`).
    static func milliseconds(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        let microseconds = max(0, seconds * 1_000_000 + attoseconds / 1_000_000_000_000)
        let fraction = String(microseconds % 1000)
        return "\(microseconds / 1000)." + String(repeating: "0", count: 3 - fraction.count) + fraction
    }
}
