import AsyncHTTPClient
import NIOCore
import NIOHTTP1

/// What a destination answered, as much of it as the outbox keeps: the status, `Retry-After`, and the first 200
/// bytes of the body. The rest of the body is read and dropped as it comes (a destination cannot make the relay
/// buffer a large answer; the request's deadline bounds a long one).
///
/// AsyncHTTPClient calls a delegate on the request's event loop, so reading the answer costs no switch of task
/// or thread per part of it.
final class DestinationAnswer: HTTPClientResponseDelegate, @unchecked Sendable {
    // @unchecked: AsyncHTTPClient calls every method on the request's one event loop, in order.

    /// The part of an answer kept.
    struct Kept: Sendable {
        /// The HTTP status code.
        let status: Int
        /// The `Retry-After` header, when there was one.
        let retryAfter: String?
        /// The first 200 bytes of the body.
        let start: [UInt8]
    }

    typealias Response = Kept

    /// The most body bytes kept.
    static let keptBytes = 200
    private var status = 0
    private var retryAfter: String?
    private var start: [UInt8] = []

    func didReceiveHead(task: HTTPClient.Task<Kept>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
        status = Int(head.status.code)
        retryAfter = head.headers.first(name: "Retry-After")
        return task.eventLoop.makeSucceededVoidFuture()
    }

    func didReceiveBodyPart(task: HTTPClient.Task<Kept>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
        if start.count < Self.keptBytes {
            start += buffer.readableBytesView.prefix(Self.keptBytes - start.count)
        }
        return task.eventLoop.makeSucceededVoidFuture()
    }

    func didFinishRequest(task: HTTPClient.Task<Kept>) throws -> Kept {
        Kept(status: status, retryAfter: retryAfter, start: start)
    }
}
