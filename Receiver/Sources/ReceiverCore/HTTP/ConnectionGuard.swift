import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1
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
/// - **An HTTP/1.0 request's connection ends after its answer**, as it does when the answer says `Connection:
///   close`. HTTP/1.0's `Connection: keep-alive` is not honoured: the answers never say `keep-alive`, so such a
///   client expects the close anyway (RFC 9112 section 9.3), and a proxy speaking 1.0 (nginx's default upstream
///   protocol) sends one request per connection.
/// - **Open connections are counted** (``ConnectionCounter``), for the cap and the metrics, and at the cap the
///   oldest idle one is closed, so that idle clients cannot hold every slot.
///
/// Two handlers share one state per connection, on its event loop: one at the byte level, first in the pipeline
/// (it sees the first byte of a request's head, and can stop reading), one after the HTTP decoder (it sees where a
/// request ends and which answer was written).
struct GuardedHTTP1Channel: ServerChildChannel {
    typealias Value = HTTP1Channel.Value

    let responder: HTTPChannelHandler.Responder
    let idleTimeout: TimeAmount
    let requestTimeout: TimeAmount
    let connections: ConnectionCounter?
    let metrics: ReceiverMetrics?

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let state = ConnectionGuardState(requestTimeout: requestTimeout, connections: connections, metrics: metrics)
        let http = HTTP1Channel(responder: responder, configuration: .init(
            additionalChannelHandlers: [ResponseGuardHandler(state: state)], idleTimeout: idleTimeout))
        do {
            try channel.pipeline.syncOperations.addHandler(ByteGuardHandler(state: state), position: .first)
        } catch {
            return channel.eventLoop.makeFailedFuture(error)
        }
        // Hummingbird's setup adds its handlers synchronously; the version is only seen before its codec, which
        // turns HTTP/1 heads into version-less HTTP types.
        return http.setup(channel: channel, logger: logger).flatMapThrowing { value in
            let operations = channel.pipeline.syncOperations
            let codec = try operations.handler(type: HTTP1ToHTTPServerCodec.self)
            try operations.addHandler(VersionGuardHandler(state: state), position: .before(codec))
            return value
        }
    }

    func handle(value: Value, logger: Logger) async {
        // The responder is the same for every connection; the configuration only matters to `setup`.
        await HTTP1Channel(responder: responder).handle(value: value, logger: logger)
    }
}

/// Open connections now, and the cap: Hummingbird stops accepting while `open` is at `maximum` (new connections
/// wait in the kernel's listen backlog instead of taking a file descriptor each), and resumes as they close.
///
/// A connection holds its slot only while it is being used. Each guarded connection tells the counter when it
/// turns idle (a new one before its first byte, a keep-alive one once its answer is written) and busy again
/// (a byte of its next request); whenever the connections reach the cap, the one idle the longest is closed, so
/// that the listener keeps accepting. Slow clients are busy and keep their slots until their request deadline.
final class ConnectionCounter: Sendable {
    let open = Atomic<Int>(0)
    let maximum: Int
    private let registry = Mutex(Registry())

    /// The guarded connections, and when each turned idle (a sequence number; nil: busy).
    private struct Registry {
        var connections: [ObjectIdentifier: (channel: any Channel, idleSince: UInt64?)] = [:]
        /// Closed by the counter, not yet gone: they no longer count against the cap.
        var closing: Set<ObjectIdentifier> = []
        var sequence: UInt64 = 0
    }

    init(maximum: Int) {
        self.maximum = max(1, maximum)
    }

    /// A connection opened: idle until its first byte.
    func opened(_ channel: any Channel) {
        update(channel) { registry, id in
            registry.sequence += 1
            registry.connections[id] = (channel, registry.sequence)
        }
    }

    /// A byte of a request arrived: the connection holds its slot until its answer is written.
    func busy(_ channel: any Channel) {
        update(channel) { registry, id in registry.connections[id]?.idleSince = nil }
    }

    /// The answer was written and the connection stays open for the next request.
    func idle(_ channel: any Channel) {
        update(channel) { registry, id in
            guard registry.connections[id] != nil else { return }
            registry.sequence += 1
            registry.connections[id]?.idleSince = registry.sequence
        }
    }

    /// The connection closed.
    func closed(_ channel: any Channel) {
        let id = ObjectIdentifier(channel)
        registry.withLock { registry in
            registry.connections[id] = nil
            registry.closing.remove(id)
        }
    }

    /// Applies `change`, then closes the oldest idle connections while the others are at the cap: never the one
    /// that changed (a connection just accepted is not closed to admit itself).
    private func update(_ channel: any Channel, _ change: (inout Registry, ObjectIdentifier) -> Void) {
        let id = ObjectIdentifier(channel)
        let evicted: [any Channel] = registry.withLock { registry in
            change(&registry, id)
            var evicted: [any Channel] = []
            while registry.connections.count - registry.closing.count >= maximum {
                var oldest: (id: ObjectIdentifier, since: UInt64, channel: any Channel)?
                for (other, entry) in registry.connections where other != id && !registry.closing.contains(other) {
                    guard let since = entry.idleSince, since < (oldest?.since ?? .max) else { continue }
                    oldest = (other, since, entry.channel)
                }
                guard let oldest else { break }
                registry.closing.insert(oldest.id)
                evicted.append(oldest.channel)
            }
            return evicted
        }
        for channel in evicted { channel.close(promise: nil) }
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
    let connections: ConnectionCounter?
    let metrics: ReceiverMetrics?
    /// The running deadline of the request being read, if any.
    var deadline: Scheduled<Void>?
    /// Answered with `Connection: close`: read nothing more.
    var isClosing = false
    /// The request being read is HTTP/1.0: its answer ends the connection.
    var closesAfterAnswer = false
    /// Whether the connection holds its slot (a request being read or answered) as the counter last heard.
    var isBusy = false
    /// Requests whose head was read and whose answer is not written yet (pipelined ones too).
    var requestsInProgress = 0
    /// How long a closing connection stays half-closed, for the client to read the answer before the reset.
    static let linger = TimeAmount.seconds(1)

    init(requestTimeout: TimeAmount, connections: ConnectionCounter?, metrics: ReceiverMetrics?) {
        self.requestTimeout = requestTimeout
        self.connections = connections
        self.metrics = metrics
    }

    /// A byte of a request arrived.
    func becameBusy(_ channel: any Channel) {
        guard !isBusy else { return }
        isBusy = true
        connections?.busy(channel)
    }

    /// An answer was written on a connection that stays open.
    func becameIdle(_ channel: any Channel) {
        requestsInProgress -= 1
        guard isBusy, !isClosing, requestsInProgress <= 0 else { return }
        requestsInProgress = 0
        isBusy = false
        connections?.idle(channel)
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

    /// Whether the counter knows this connection (registered once, however it became active).
    private var isRegistered = false

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { opened(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        opened(context)
        context.fireChannelActive()
    }

    private func opened(_ context: ChannelHandlerContext) {
        state.startDeadline(context)
        guard !isRegistered else { return }
        isRegistered = true
        state.connections?.opened(context.channel)
    }

    func channelInactive(context: ChannelHandlerContext) {
        state.endDeadline()
        if isRegistered { state.connections?.closed(context.channel) }
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        if isRegistered { state.connections?.closed(context.channel) }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        // What a closing connection still had in flight is dropped, not parsed.
        guard !state.isClosing else { return }
        state.startDeadline(context)
        state.becameBusy(context.channel)
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
    /// has been read, and any answer that says so (and, from ``ConnectionGuardState/closesAfterAnswer``, any
    /// answer to HTTP/1.0).
    static func endsConnection(_ response: HTTPResponse) -> Bool {
        switch response.status.code {
        case 400, 404, 408, 413: return true
        default: return response.headerFields[.connection]?.lowercased() == "close"
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head:
            state.startDeadline(context)
            state.requestsInProgress += 1
        case .end: state.endDeadline()
        case .body: break
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(let response):
            if Self.endsConnection(response) || state.closesAfterAnswer {
                closesAfterAnswer = true
                state.isClosing = true  // stop reading now: the rest of the body is not wanted
            }
            context.write(data, promise: promise)
        case .body:
            context.write(data, promise: promise)
        case .end:
            guard closesAfterAnswer else {
                context.write(data, promise: promise)
                state.becameIdle(context.channel)
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

/// Between the HTTP/1 decoder and Hummingbird's codec (which drops the version): marks an HTTP/1.0 request's
/// connection to close after its answer. Hummingbird alone keeps it open for the idle timeout, since the version-less
/// request it sees has no `Connection: close`.
final class VersionGuardHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart

    let state: ConnectionGuardState

    init(state: ConnectionGuardState) {
        self.state = state
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head(let head) = unwrapInboundIn(data),
           head.version.major < 1 || (head.version.major == 1 && head.version.minor == 0) {
            state.closesAfterAnswer = true
        }
        context.fireChannelRead(data)
    }
}
