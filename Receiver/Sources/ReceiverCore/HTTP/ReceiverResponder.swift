import Attribution
import Foundation
import Hummingbird
import Logging
import NIOCore

/// Answers every request: Apple's two postback paths, `GET /healthz`, `GET /readyz`, `GET /metrics` (unless it
/// has a listener of its own), and 404 for anything else.
///
/// A postback's body is read up to the cap (413 beyond it), verified, handed to the group committer, and answered
/// 200 only once it is stored; the 200 is the same empty body whatever the verdict, so the answers tell a forger
/// nothing. 500 only when storing failed, 503 for a body over the invalid quota that could still be genuine (Apple
/// then sends the postback again), and 503 with `Retry-After` when a queue is at its bound. Never a 4xx for a bad
/// signature.
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
    let readiness: Readiness
    let connections: ConnectionCounter
    /// False when `/metrics` has a listener of its own (`--metrics-address`): 404 here.
    let servesMetrics: Bool

    init(verification: GroupQueue<[UInt8], VerificationResult>,
         committer: GroupQueue<ReceivedPostback, SinkOutcome>?, metrics: ReceiverMetrics,
         maximumBodyBytes: Int, logger: Logger, readiness: Readiness, connections: ConnectionCounter,
         servesMetrics: Bool) {
        self.verification = verification
        self.committer = committer
        self.metrics = metrics
        self.maximumBodyBytes = maximumBodyBytes
        self.logger = logger
        self.readiness = readiness
        self.connections = connections
        self.servesMetrics = servesMetrics
    }

    /// The queues' depths and bounds, read when the metrics are rendered.
    var queues: QueueGauges {
        QueueGauges(verification: verification, committer: committer)
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
        case .readiness:
            response = await readiness.check() ? Response(status: .ok, headers: [.contentType: "text/plain"],
                                                          body: .init(byteBuffer: ByteBuffer(string: "ready\n")))
                : Self.empty(.serviceUnavailable)
        case .metrics where servesMetrics:
            response = MetricsResponder.render(metrics, connections: connections, queues: queues)
        case .other, .metrics:
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
        } catch is QueueOverloaded {
            metrics.notStored(.overloaded)
            return Self.overloaded
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
        } catch is QueueOverloaded {
            metrics.notStored(.overloaded)
            return Self.overloaded
        } catch {
            metrics.notStored(.failure)
            logger.error("not stored, answered 500 so that Apple sends it again",
                         metadata: ["request": "\(postback.requestID)", "error": "\(error)"])
            return Self.empty(.internalServerError)
        }
    }

    /// The one answer to every stored postback, valid or not.
    static var ok: Response { empty(.ok) }

    /// A queue is at its bound: not stored, Apple retries; `Retry-After` asks any other sender to wait as long.
    static var overloaded: Response {
        Response(status: .serviceUnavailable, headers: [.contentLength: "0", .retryAfter: "5"])
    }

    static var tooLarge: Response {
        Response(status: .contentTooLarge, headers: [.connection: "close"])
    }

    static func empty(_ status: HTTPResponse.Status) -> Response {
        Response(status: status, headers: [.contentLength: "0"])
    }
}

/// The two queues, for their gauges.
struct QueueGauges: Sendable {
    let verification: GroupQueue<[UInt8], VerificationResult>
    let committer: GroupQueue<ReceivedPostback, SinkOutcome>?

    func record(into metrics: ReceiverMetrics) {
        metrics.queue("verification", depth: verification.depth, capacity: verification.maximumDepth)
        if let committer {
            metrics.queue("commit", depth: committer.depth, capacity: committer.maximumDepth)
        }
    }
}

/// `GET /metrics` on a listener of its own (`--metrics-address`); 404 for anything else.
struct MetricsResponder: HTTPResponder {
    typealias Context = BasicRequestContext

    let metrics: ReceiverMetrics
    let connections: ConnectionCounter
    let queues: QueueGauges

    func respond(to request: Request, context: Context) async throws -> Response {
        guard request.method == .get, request.uri.path == "/metrics" else {
            return ReceiverResponder.empty(.notFound)
        }
        return Self.render(metrics, connections: connections, queues: queues)
    }

    /// The Prometheus text, with the gauges read now.
    static func render(_ metrics: ReceiverMetrics, connections: ConnectionCounter, queues: QueueGauges) -> Response {
        queues.record(into: metrics)
        metrics.connections(open: connections.current, maximum: connections.maximum)
        return Response(status: .ok, headers: [.contentType: "text/plain; version=0.0.4"],
                        body: .init(byteBuffer: ByteBuffer(bytes: metrics.render())))
    }
}
