@_spi(Servers) import Attribution
import Foundation
import Hummingbird
import Logging
import NIOCore

/// Apple's two postback paths: a body is read up to the cap (413 beyond it), verified, handed to the group
/// committer, and answered 200 only once it is stored; the 200 is the same empty body whatever the verdict, so the
/// answers tell a forger nothing. 500 only when storing failed, 503 for a body over the invalid quota that could
/// still be genuine (Apple then sends the postback again), and 503 with `Retry-After` when a queue is at its bound.
/// Never a 4xx for a bad signature. The request id a stored row and a later duplicate's `duplicate-of-source` name
/// is Hummingbird's (`context.id`), the one its request log line carries.
struct PostbackEndpoint: Sendable {
    /// Batch verification: concurrent requests' signatures checked together.
    let verification: GroupQueue<ReceivedBody, VerifiedPostback>
    /// Group commit; nil with `--no-storage`: answered without storing (benchmarks only).
    let committer: GroupQueue<ReceivedPostback, SinkOutcome>?
    let metrics: ReceiverMetrics
    let maximumBodyBytes: Int

    /// The queues' depths and bounds, read when the metrics are rendered.
    var queues: QueueGauges {
        QueueGauges(verification: verification, committer: committer)
    }

    func receive(_ request: Request, context: some RequestContext, route: ReceiverRoute) async -> Response {
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
        let verified: VerifiedPostback
        do {
            verified = try await verification.submit(
                ReceivedBody(body: body, requestID: context.id, receivedMilliseconds: received))
        } catch is QueueOverloaded {
            metrics.notStored(.overloaded)
            return Self.overloaded
        } catch {
            metrics.notStored(.failure)
            return Self.empty(.internalServerError)  // only when stopping: nothing was stored
        }
        RequestOutcome.current?.record(verified)
        let postback = ReceivedPostback(body: body, requestID: context.id, route: route,
                                        receivedMilliseconds: received, verified: verified)
        guard let committer else {
            metrics.verdict(postback)
            return Self.ok
        }
        do {
            let outcome = try await committer.submit(postback)
            if case .retryLater = outcome {
                // Over the invalid quota but possibly genuine: not stored, so not a 200 (Apple would not resend).
                return Self.empty(.serviceUnavailable)
            }
            metrics.verdict(outcome.postback)
            RequestOutcome.current?.record(outcome.postback.verified)  // after deduplication
            return Self.ok
        } catch is QueueOverloaded {
            metrics.notStored(.overloaded)
            return Self.overloaded
        } catch {
            metrics.notStored(.failure)
            context.logger.error("not stored, answered 500 so that Apple sends it again", metadata: ["error": "\(error)"])
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
    let verification: GroupQueue<ReceivedBody, VerifiedPostback>
    let committer: GroupQueue<ReceivedPostback, SinkOutcome>?

    func record(into metrics: ReceiverMetrics) {
        metrics.queue("verification", depth: verification.depth, capacity: verification.maximumDepth)
        if let committer {
            metrics.queue("commit", depth: committer.depth, capacity: committer.maximumDepth)
        }
    }
}

/// The Prometheus page, with the gauges read when it is rendered.
struct MetricsPage: Sendable {
    let metrics: ReceiverMetrics
    let connections: ConnectionCounter
    let queues: QueueGauges
    /// The storing sink, whose store's lease renewals are counted (nil without storage).
    let sink: (any PostbackSink)?

    func render() -> Response {
        queues.record(into: metrics)
        metrics.connections(open: connections.current, maximum: connections.maximum)
        metrics.logLines(droppedTotal: ReceiverLogHandler.droppedLineCount)
        metrics.leaseRenewals(failedTotal: sink?.leaseRenewalFailures ?? 0)
        return Response(status: .ok, headers: [.contentType: "text/plain; version=0.0.4"],
                        body: .init(byteBuffer: ByteBuffer(bytes: metrics.render())))
    }
}
