import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTPTypes
import Synchronization

/// Limits what one client, or many, can hold of the receiver (issue 23 item 2):
///
/// - **A deadline per request**: a request's head and body must arrive within `requestTimeout` of its first byte
///   (or, on a fresh connection, of the connection), or the connection is closed. The idle timeout alone is reset
///   by every byte, so a client sending a byte every few seconds held its socket, and its share of the open-file
///   limit, for ever. The deadline ends when the request has been read: storing it is the receiver's own time.
/// - **An answer that refuses the body ends the connection** (413, 404, 400, or any answer with `Connection:
///   close`): nothing more is read from it (Hummingbird would otherwise read an endless chunked body to its end
///   to reach the next request), its output is shut down after the answer, and it is closed a second later (a
///   close with unread input sends a reset, which could destroy the answer before the client read it).
/// - **Open connections are counted** (``ConnectionCounter``), for the cap and the metrics.
///
/// Two handlers share one state per connection, on its event loop: one at the byte level, first in the pipeline
/// (it sees the first byte of a request's head, and can stop reading), one after the HTTP decoder (it sees where a
/// request ends and which answer was written).
struct GuardedHTTP1Channel: ServerChildChannel {
    typealias Value = HTTP1Channel.Value

    let responder: HTTPChannelHandler.Responder
    let idleTimeout: TimeAmount
    let requestTimeout: TimeAmount
    let metrics: ReceiverMetrics?

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let state = ConnectionGuardState(requestTimeout: requestTimeout, metrics: metrics)
        let http = HTTP1Channel(responder: responder, configuration: .init(
            additionalChannelHandlers: [ResponseGuardHandler(state: state)], idleTimeout: idleTimeout))
        do {
            try channel.pipeline.syncOperations.addHandler(ByteGuardHandler(state: state), position: .first)
        } catch {
            return channel.eventLoop.makeFailedFuture(error)
        }
        return http.setup(channel: channel, logger: logger)
    }

    func handle(value: Value, logger: Logger) async {
        // The responder is the same for every connection; the configuration only matters to `setup`.
        await HTTP1Channel(responder: responder).handle(value: value, logger: logger)
    }
}

/// Open connections now, and the cap: Hummingbird stops accepting while `open` is at `maximum` (new connections
/// wait in the kernel's listen backlog instead of taking a file descriptor each), and resumes as they close.
final class ConnectionCounter: Sendable {
    let open = Atomic<Int>(0)
    let maximum: Int

    init(maximum: Int) {
        self.maximum = max(1, maximum)
    }

    /// Connections open now.
    var current: Int { open.load(ordering: .relaxed) }

    /// The delegate Hummingbird's server consults before accepting.
    var delegate: Delegate { Delegate(counter: self) }

    struct Delegate: AvailableConnectionsDelegate {
        let counter: ConnectionCounter

        mutating func connectionOpened() {
            counter.open.add(1, ordering: .relaxed)
        }

        mutating func connectionClosed() {
            counter.open.subtract(1, ordering: .relaxed)
        }

        func isAcceptingNewConnections() -> Bool {
            counter.open.load(ordering: .relaxed) < counter.maximum
        }
    }
}

/// One connection's deadline and whether it is closing. Only touched on the connection's event loop (both handlers
/// run there), hence unchecked.
final class ConnectionGuardState: @unchecked Sendable {
    let requestTimeout: TimeAmount
    let metrics: ReceiverMetrics?
    /// The running deadline of the request being read, if any.
    var deadline: Scheduled<Void>?
    /// Answered with `Connection: close`: read nothing more.
    var isClosing = false
    /// How long a closing connection stays half-closed, for the client to read the answer before the reset.
    static let linger = TimeAmount.seconds(1)

    init(requestTimeout: TimeAmount, metrics: ReceiverMetrics?) {
        self.requestTimeout = requestTimeout
        self.metrics = metrics
    }

    /// Starts the deadline unless one runs: a request (or a fresh connection's first) is being read.
    func startDeadline(_ context: ChannelHandlerContext) {
        guard deadline == nil, !isClosing else { return }
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        deadline = context.eventLoop.assumeIsolated().scheduleTask(in: requestTimeout) {
            self.deadline = nil
            self.metrics?.requestTimedOut()
            loopBound.value.close(promise: nil)
        }
    }

    /// The request has been read whole (or the connection closed): its deadline no longer applies.
    func endDeadline() {
        deadline?.cancel()
        deadline = nil
    }
}

/// First in the pipeline: starts a request's deadline at its first byte (and a fresh connection's at once), and
/// stops reading from a connection that is closing.
final class ByteGuardHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    let state: ConnectionGuardState

    init(state: ConnectionGuardState) {
        self.state = state
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { state.startDeadline(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        state.startDeadline(context)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        state.endDeadline()
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        // What a closing connection still had in flight is dropped, not parsed.
        guard !state.isClosing else { return }
        state.startDeadline(context)
        context.fireChannelRead(data)
    }

    func read(context: ChannelHandlerContext) {
        // A closing connection reads nothing more: its unread bytes stay in the kernel until the close.
        guard !state.isClosing else { return }
        context.read()
    }
}

/// After the HTTP decoder: ends a request's deadline once it has been read whole, starts it for a pipelined
/// request already buffered, and closes the connection after an answer that refuses the body.
final class ResponseGuardHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    let state: ConnectionGuardState
    /// The answer being written ends the connection.
    private var closesAfterAnswer = false

    init(state: ConnectionGuardState) {
        self.state = state
    }

    /// Answers after which the rest of the request, if any, is not read: refusals that may come before the body
    /// has been read, and any answer that says so.
    static func endsConnection(_ response: HTTPResponse) -> Bool {
        switch response.status.code {
        case 400, 404, 408, 413: return true
        default: return response.headerFields[.connection]?.lowercased() == "close"
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head: state.startDeadline(context)
        case .end: state.endDeadline()
        case .body: break
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(let response):
            if Self.endsConnection(response) {
                closesAfterAnswer = true
                state.isClosing = true  // stop reading now: the rest of the body is not wanted
            }
            context.write(data, promise: promise)
        case .body:
            context.write(data, promise: promise)
        case .end:
            guard closesAfterAnswer else {
                context.write(data, promise: promise)
                return
            }
            state.endDeadline()
            let written = context.eventLoop.makePromise(of: Void.self)
            if let promise { written.futureResult.cascade(to: promise) }
            context.writeAndFlush(data, promise: written)
            let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
            written.futureResult.assumeIsolated().whenComplete { _ in
                let context = loopBound.value
                // FIN after the answer; the reset (unread input) only once the client had time to read it.
                context.close(mode: .output, promise: nil)
                context.eventLoop.assumeIsolated().scheduleTask(in: ConnectionGuardState.linger) {
                    context.close(promise: nil)
                }
            }
        }
    }
}
