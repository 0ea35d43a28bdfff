import AsyncHTTPClient
@_spi(Servers) import Attribution
@_spi(Servers) import AttributionStores
import Foundation
import Logging
import NIOCore
import NIOPosix
import NIOHTTP1
import ServiceLifecycle
import Synchronization

/// Delivers what the outbox owes each destination: a loop per destination takes due deliveries under a lease,
/// sends each (at most ``Settings/maximumInFlight`` at once, each under ``Settings/deadline``), and records each
/// outcome in the outbox.
///
/// The relay never touches the path that answers Apple: the storing transaction writes the outbox rows, and the
/// relay reads them on a connection and thread of its own. A destination that is down or slow leaves its rows
/// owed in the outbox (bounded by disk, not memory: the relay holds at most the deliveries in flight); the
/// receiver keeps answering. A delivery is sent again only when its outcome was not recorded (the receiver died, or
/// the outbox failed, between the destination's answer and its recording): the lease runs out and the next taker
/// counts it in `postback_receiver_relay_reclaimed_total`.
final class Relay: Service, Sendable {
    /// How the relay paces itself.
    struct Settings: Sendable {
        /// Requests in flight per destination (`--relay-in-flight`); connections are bounded by it too.
        var maximumInFlight = 16
        /// A request's deadline, connection included (`--relay-deadline`).
        var deadline: Duration = .seconds(10)
        /// How long a delivery stays owed before it is given up as dead (`--relay-horizon`; Apple's own nine days).
        var horizonMilliseconds: Int64 = 9 * 86_400_000
        /// The back-off.
        var schedule = RetrySchedule()
        /// How often an idle destination's loop looks for new deliveries.
        var pollInterval: Duration = .milliseconds(100)

        /// The lease on a delivery taken: twice the deadline and 5 s, time to record its outcome. A receiver that
        /// dies hands its deliveries back this long after it took them; one whose recording outlasts it (a database
        /// that stalls) may see a delivery sent again, counted as reclaimed.
        var leaseMilliseconds: Int64 {
            2 * (Int64(deadline.components.seconds) * 1000
                + deadline.components.attoseconds / 1_000_000_000_000_000) + 5_000
        }
    }

    let destinations: [RelayDestination]
    let outbox: any Outbox
    let settings: Settings
    let metrics: RelayMetrics
    let logger: Logger
    /// This process's lease holder id.
    let holder = Int64.random(in: 1...Int64.max)
    private let stopping = Atomic<Bool>(false)

    init(destinations: [RelayDestination], outbox: any Outbox, settings: Settings, metrics: RelayMetrics,
         logger: Logger) {
        self.destinations = destinations
        self.outbox = outbox
        self.settings = settings
        self.metrics = metrics
        self.logger = logger
    }

    func run() async throws {
        await withGracefulShutdownHandler {
            await withTaskGroup(of: Void.self) { group in
                for destination in destinations {
                    group.addTask { await self.deliver(to: destination) }
                }
                group.addTask { await self.watchBacklog() }
            }
        } onGracefulShutdown: {
            self.stopping.store(true, ordering: .relaxed)
        }
    }

    private var isStopping: Bool { stopping.load(ordering: .relaxed) || Task.isCancelled }

    /// Runs `work` (a blocking outbox call) on `queue`, off the cooperative pool.
    private func offload<Value: Sendable>(_ queue: DispatchQueue,
                                          _ work: @escaping @Sendable () throws(AttributionError) -> Value)
        async throws(AttributionError) -> Value {
        let result: Result<Value, AttributionError> = await withCheckedContinuation { continuation in
            queue.async {
                do throws(AttributionError) {
                    continuation.resume(returning: .success(try work()))
                } catch {
                    continuation.resume(returning: .failure(error))
                }
            }
        }
        return try result.get()
    }

    /// What a destination's loop waits for: an attempt's outcome, a batch taken or recorded, or the clock.
    private enum Event: Sendable {
        /// An attempt ended.
        case finished(DeliveryOutcome)
        /// Deliveries taken from the outbox (nil: the outbox failed), of the number asked for.
        case taken([OwedDelivery]?, asked: Int)
        /// Outcomes recorded (nil), or the ones the outbox failed to record.
        case recorded([DeliveryOutcome]?)
        /// The poll interval (or the pause after a failure) passed.
        case tick
    }

    /// One destination's loop: sends what it took as slots free up, while the next batch is taken and the last
    /// one's outcomes are recorded (the outbox's work never stops the sending). At most ``Settings/maximumInFlight``
    /// are in flight, at most twice that many sent and not yet recorded (so a crash repeats no more), and as many
    /// wait, taken, for a slot, each for at most one
    /// deadline, well inside its lease. On stop, it takes nothing more, records what was in flight, and hands back
    /// what it took and did not send.
    private func deliver(to destination: RelayDestination) async {
        let name = destination.outbox.name
        let queue = DispatchQueue(label: "postback-receiver.relay")
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool = .init(idleTimeout: .seconds(60),
                                             concurrentHTTP1ConnectionsPerHostSoftLimit: settings.maximumInFlight)
        let deadline = TimeAmount.nanoseconds(
            settings.deadline.components.seconds * 1_000_000_000
                + settings.deadline.components.attoseconds / 1_000_000_000)
        configuration.timeout = .init(connect: deadline, read: deadline)
        configuration.redirectConfiguration = .disallow
        configuration.decompression = .disabled
        // An event loop (a thread) of the relay's own: on the server's loops its connections would get a turn per
        // round with the 64 or more of Apple's.
        let loops = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let client = HTTPClient(eventLoopGroupProvider: .shared(loops), configuration: configuration)
        let limit = settings.maximumInFlight
        await withTaskGroup(of: Event.self) { group in
            var waiting: [OwedDelivery] = []  // taken, not yet sent
            var inFlight = 0
            var finished: [DeliveryOutcome] = []
            var taking = false
            var recording = 0  // outcomes being recorded
            var ticking = false
            var tickFired = false
            // Set when a take found nothing due, or the outbox failed: no take (or record) until the next tick.
            var idle = false
            var troubled = false
            while true {
                let stopping = isStopping
                // Sent and not yet recorded stays within twice the limit: a crash repeats at most that many, and the
                // sending goes on while a batch's outcomes are recorded.
                while !stopping && inFlight < limit && inFlight + finished.count + recording < 2 * limit
                    && !waiting.isEmpty {
                    let delivery = waiting.removeFirst()
                    metrics.attempted(name, reclaimed: delivery.wasReclaimed)
                    inFlight += 1
                    group.addTask { .finished(await self.attempt(delivery, to: destination, client: client)) }
                }
                metrics.inFlight(name, inFlight)
                if recording == 0 && !finished.isEmpty && (!troubled || stopping)
                    && (finished.count >= max(1, limit / 4) || inFlight == 0 || stopping || tickFired) {
                    recording = finished.count
                    let outcomes = finished
                    finished = []
                    group.addTask { [outbox, holder, settings] in
                        do throws(AttributionError) {
                            try await self.offload(queue) { () throws(AttributionError) in
                                try outbox.record(outcomes, holder: holder,
                                                  horizonMilliseconds: settings.horizonMilliseconds)
                            }
                            return .recorded(nil)
                        } catch {
                            self.logger.error("relay: cannot record deliveries", metadata: [
                                "destination": "\(name)", "error": "\(error.reason)"])
                            return .recorded(outcomes)
                        }
                    }
                }
                tickFired = false
                let room = 2 * limit - inFlight - waiting.count
                if !stopping && !taking && !idle && room >= max(1, limit / 2) && finished.count < 2 * limit {
                    taking = true
                    group.addTask { [outbox, holder, settings] in
                        do throws(AttributionError) {
                            return .taken(try await self.offload(queue) { () throws(AttributionError) in
                                try outbox.claim(destination: name, limit: room, holder: holder,
                                                 leaseMilliseconds: settings.leaseMilliseconds,
                                                 horizonMilliseconds: settings.horizonMilliseconds)
                            }, asked: room)
                        } catch {
                            self.logger.error("relay: cannot take deliveries", metadata: [
                                "destination": "\(name)", "error": "\(error.reason)"])
                            return .taken(nil, asked: room)
                        }
                    }
                }
                if stopping && inFlight == 0 && !taking && recording == 0 && finished.isEmpty {
                    await handBack(waiting, destination: name, queue: queue)
                    break
                }
                if !ticking && !stopping && (idle || troubled || !finished.isEmpty) {
                    ticking = true
                    let pause: Duration = troubled ? .seconds(1) : settings.pollInterval
                    group.addTask {
                        try? await Task.sleep(for: pause)
                        return .tick
                    }
                }
                guard let event = await group.next() else {
                    try? await Task.sleep(for: settings.pollInterval)
                    continue
                }
                switch event {
                case .finished(let outcome):
                    inFlight -= 1
                    finished.append(outcome)
                case .taken(let taken, let asked):
                    taking = false
                    if let taken {
                        waiting += taken
                        if taken.count < asked { idle = true }  // nothing more due now: look again at the next tick
                    } else {
                        idle = true
                        troubled = true
                    }
                case .recorded(let failed):
                    recording = 0
                    if let failed {
                        // Kept (at most the deliveries of two batches) and recorded again; their leases cover them
                        // meanwhile. A stopping relay leaves them to the leases.
                        if !isStopping { finished = failed + finished }
                        troubled = true
                    }
                case .tick:
                    ticking = false
                    tickFired = true
                    idle = false
                    troubled = false
                }
            }
            group.cancelAll()
        }
        try? await client.shutdown()
        try? await loops.shutdownGracefully()
    }

    /// Gives back deliveries taken but not sent (the receiver stopping), so that they are due again at once rather
    /// than when their lease runs out; left to the lease when the outbox fails.
    private func handBack(_ deliveries: [OwedDelivery], destination: String, queue: DispatchQueue) async {
        guard !deliveries.isEmpty else { return }
        do throws(AttributionError) {
            try await offload(queue) { [outbox, holder] () throws(AttributionError) in
                try outbox.release(deliveries.map(\.id), holder: holder)
            }
        } catch {
            logger.error("relay: cannot hand back deliveries taken and not sent (their lease gives them back)",
                         metadata: ["destination": "\(destination)", "error": "\(error.reason)"])
        }
    }

    /// Sends one delivery and says what became of it.
    private func attempt(_ delivery: OwedDelivery, to destination: RelayDestination, client: HTTPClient) async
        -> DeliveryOutcome {
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: "application/json")
        headers.add(name: "User-Agent", value: "postback-receiver")
        let body: [UInt8]
        switch destination.kind {
        case .forward:
            headers.add(name: "Idempotency-Key", value: Self.idempotencyKey(delivery))
            body = delivery.body
        case .webhook(_, let signer):
            let timestamp = Int64(Date().timeIntervalSince1970)
            headers.add(name: "webhook-id", value: delivery.request)
            headers.add(name: "webhook-timestamp", value: String(timestamp))
            headers.add(name: "webhook-signature",
                        value: signer.signature(id: delivery.request, timestamp: timestamp, body: delivery.record))
            body = delivery.record
        }
        let name = destination.outbox.name
        let outcome: DeliveryOutcome
        do {
            let request = try HTTPClient.Request(url: destination.url(route: delivery.route).absoluteString,
                                                 method: .POST, headers: headers,
                                                 body: .byteBuffer(ByteBuffer(bytes: body)))
            // Read on the event loop by the delegate (no task switch per part of the answer).
            let response = try await client.execute(
                request: request, delegate: DestinationAnswer(),
                deadline: .now() + .nanoseconds(Int64(settings.deadline.components.seconds) * 1_000_000_000
                                                    + settings.deadline.components.attoseconds / 1_000_000_000)
            ).futureResult.get()
            var answer = "\(response.status)"
            if !response.start.isEmpty {
                answer += " " + TerminalText.escaped(String(decoding: response.start, as: UTF8.self))
            }
            let fate = settings.schedule.fate(status: response.status, retryAfter: response.retryAfter,
                                              attempt: delivery.attempts)
            outcome = DeliveryOutcome(id: delivery.id, fate: fate, answer: answer)
        } catch {
            outcome = DeliveryOutcome(
                id: delivery.id,
                fate: .retry(afterMilliseconds: settings.schedule.backoff(afterAttempt: delivery.attempts)),
                answer: "no answer: \(error)")
        }
        switch outcome.fate {
        case .delivered: metrics.finished(name, .delivered)
        case .retry: metrics.finished(name, .retried)
        case .dead: metrics.finished(name, .dead)
        }
        return outcome
    }

    /// The `Idempotency-Key` of a forwarded postback: its deduplication key (AdAttributionKit's
    /// `postback-identifier`; SKAdNetwork's `transaction-id`, sequence index, version and network, joined by `:`),
    /// the same on every attempt and every receiver; the request id when it has none or it is not printable ASCII
    /// (an invalid body forwarded by `--forward-all`).
    static func idempotencyKey(_ delivery: OwedDelivery) -> String {
        guard let key = delivery.key, !key.isEmpty else { return delivery.request }
        let joined = key.map { $0 == 0x1F ? UInt8(ascii: ":") : $0 }
        guard joined.count <= 512, joined.allSatisfy({ (0x21...0x7E).contains($0) }) else { return delivery.request }
        return String(decoding: joined, as: UTF8.self)
    }

    /// Reads every destination's backlog from the outbox every 2 s, for the depth and oldest-age gauges.
    private func watchBacklog() async {
        let queue = DispatchQueue(label: "postback-receiver.relay.backlog")
        while !isStopping {
            if let backlog = try? await offload(queue, { [outbox] () throws(AttributionError) in
                try outbox.backlog()
            }) {
                let now = Int64(Date().timeIntervalSince1970 * 1000)
                for destination in destinations {
                    let entry = backlog[destination.outbox.name]
                    let age = entry?.oldestOwedSince.map { Double(max(0, now - $0)) / 1000 } ?? 0
                    metrics.backlog(destination.outbox.name, owed: entry?.owed ?? 0, oldestAgeSeconds: age)
                }
            }
            try? await Task.sleep(for: .seconds(2))
        }
    }
}
