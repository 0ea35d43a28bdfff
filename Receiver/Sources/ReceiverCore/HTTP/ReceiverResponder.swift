import Attribution
import Foundation
import Hummingbird
import Logging
import NIOCore

/// Answers every request: Apple's two postback paths, `GET /healthz`, `GET /metrics`, and 404 for anything else.
///
/// A postback's body is read up to the cap (413 beyond it), verified, handed to the group committer, and answered
/// 200 only once it is stored; the 200 is the same empty body whatever the verdict, so the answers tell a forger
/// nothing. 500 only when storing failed, 503 for a body over the invalid quota that could still be genuine (Apple
/// then sends the postback again). Never a 4xx for a bad signature.
public struct ReceiverResponder: HTTPResponder {
    public typealias Context = BasicRequestContext

    /// Batch verification: concurrent requests' signatures checked together.
    let verification: GroupQueue<[UInt8], VerificationResult>
    /// Group commit; nil with `--no-storage`: answered without storing (benchmarks only).
    let committer: GroupQueue<ReceivedPostback, SinkOutcome>?
    let metrics: ReceiverMetrics
    let maximumBodyBytes: Int
    let requestIDs = RequestIDs()
    let logger: Logger

    public init(verification: GroupQueue<[UInt8], VerificationResult>,
                committer: GroupQueue<ReceivedPostback, SinkOutcome>?, metrics: ReceiverMetrics,
                maximumBodyBytes: Int, logger: Logger) {
        self.verification = verification
        self.committer = committer
        self.metrics = metrics
        self.maximumBodyBytes = maximumBodyBytes
        self.logger = logger
    }

    public func respond(to request: Request, context: Context) async throws -> Response {
        let started = DispatchTime.now().uptimeNanoseconds
        let route = ReceiverRoute(method: request.method.rawValue, path: Substring(request.uri.path))
        let response: Response
        switch route {
        case .appAttribution, .skAdNetwork:
            response = await receive(request, route: route)
        case .health:
            response = Response(status: .ok, headers: [.contentType: "text/plain"],
                                body: .init(byteBuffer: ByteBuffer(string: "ok\n")))
        case .metrics:
            response = Response(status: .ok, headers: [.contentType: "text/plain; version=0.0.4"],
                                body: .init(byteBuffer: ByteBuffer(bytes: metrics.render())))
        case .other:
            response = Self.empty(.notFound)
        }
        metrics.request(route, status: response.status.code,
                        nanoseconds: DispatchTime.now().uptimeNanoseconds &- started)
        return response
    }

    private func receive(_ request: Request, route: ReceiverRoute) async -> Response {
        if let length = request.headers[.contentLength].flatMap({ Int($0) }), length > maximumBodyBytes {
            return Self.tooLarge
        }
        let buffer: ByteBuffer
        do {
            buffer = try await request.body.collect(upTo: maximumBodyBytes)
        } catch is NIOTooManyBytesError {
            return Self.tooLarge
        } catch {
            // The connection failed mid-body: nothing was received whole, so nothing is stored; Apple retries.
            return Self.empty(.badRequest)
        }
        let body = Array(buffer.readableBytesView)
        let received = Int64(Date().timeIntervalSince1970 * 1000)
        let result: VerificationResult
        do {
            result = try await verification.submit(body)
        } catch {
            metrics.notStored(.failure)
            return Self.empty(.internalServerError)  // only when stopping: nothing was stored
        }
        let postback = ReceivedPostback(body: body, requestID: requestIDs.make(), route: route,
                                        receivedMilliseconds: received, result: result)
        guard let committer else {
            metrics.verdict(result)
            return Self.ok
        }
        do {
            let outcome = try await committer.submit(postback)
            if case .retryLater = outcome {
                // Over the invalid quota but possibly genuine: not stored, so not a 200 (Apple would not resend).
                return Self.empty(.serviceUnavailable)
            }
            metrics.verdict(outcome.postback.result)
            return Self.ok
        } catch {
            metrics.notStored(.failure)
            logger.error("not stored, answered 500 so that Apple sends it again",
                         metadata: ["request": "\(postback.requestID)", "error": "\(error)"])
            return Self.empty(.internalServerError)
        }
    }

    /// The one answer to every stored postback, valid or not.
    static var ok: Response { empty(.ok) }

    static var tooLarge: Response {
        Response(status: .contentTooLarge, headers: [.connection: "close"])
    }

    static func empty(_ status: HTTPResponse.Status) -> Response {
        Response(status: status, headers: [.contentLength: "0"])
    }
}
