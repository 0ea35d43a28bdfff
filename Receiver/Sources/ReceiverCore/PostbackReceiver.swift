@_spi(Servers) import Attribution
@_spi(Servers) import AttributionStores
import Foundation
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import ServiceLifecycle
import Synchronization

/// Puts the receiver together: the storage (deduplication store and received-postback archive, or nothing), the
/// group committer, the metrics and the HTTP application, from a checked ``ReceiverConfiguration``.
public enum PostbackReceiver {
    /// The application to run (`try await app.runService()` stops gracefully on SIGTERM and SIGINT). Opens the
    /// state first: a state file it refuses throws ``StorageFailure`` before anything listens.
    public static func application(
        _ configuration: ReceiverConfiguration, metrics: ReceiverMetrics? = nil, logger: Logger,
        onServerRunning: @escaping @Sendable (any Channel) async -> Void = { _ in },
        onMetricsServerRunning: @escaping @Sendable (any Channel) async -> Void = { _ in }
    ) async throws -> some ApplicationProtocol {
        let metrics = metrics ?? ReceiverMetrics(schema: configuration.schema)
        let trustsDevelopmentKeys = configuration.verifier.keyRing.allowsDevelopmentKeys
        metrics.developmentKeys(trusted: trustsDevelopmentKeys)
        // The library's one pipeline, as the command line's: the fast path, the token cache (Apple's retries skip
        // the ECDSA), and the duplicate marking the store's answers call for.
        // With `--schema` it also decodes each valid postback, as of its request's arrival.
        let pipeline = PostbackPipeline(keyRing: configuration.verifier.keyRing, policy: configuration.verifier.policy,
                                        schema: configuration.schema)
        let (sink, outbox) = try await makeSink(configuration, pipeline: pipeline, metrics: metrics)
        let committer = sink.map { sink in
            GroupQueue<ReceivedPostback, SinkOutcome>(
                maximumGroupSize: configuration.maximumGroupSize, concurrency: configuration.concurrentCommits,
                maximumDepth: configuration.queueDepth, onEnd: { await sink.finish() }
            ) { group in
                let outcomes = try await sink.store(group)
                metrics.committed()
                return outcomes
            }
        }
        let verification = GroupQueue<ReceivedBody, VerifiedPostback>(
            maximumGroupSize: configuration.maximumVerificationBatch,
            concurrency: ProcessInfo.processInfo.activeProcessorCount,
            maximumDepth: configuration.queueDepth
        ) { bodies in
            let verified = pipeline.verify(bodies.map { (body: $0.body, source: $0.requestID, arrival: $0.arrival) })
            // The library re-checks a sample of its own arithmetic's acceptances through libcrypto; a disagreement
            // (already answered invalid, and written on standard error by the library) is a bug to report.
            let disagreements = metrics.signatureDisagreements(total: ECPublicKey.signatureDisagreements)
            if disagreements > 0 {
                let message = "the signature arithmetic disagreed with libcrypto; the items were reported invalid "
                    + "(postback_receiver_signature_disagreements_total): please report this"
                logger.critical("\(message)", metadata: ["disagreements": "\(disagreements)"])
            }
            return verified
        }
        let connections = ConnectionCounter(maximum: configuration.maximumConnections)
        var probe: (@Sendable () throws -> Void)?
        if let sink { probe = { try sink.probe() } }
        let readiness = Readiness(probe: probe,
                                  deadline: .milliseconds(configuration.readinessDeadlineMilliseconds))
        let endpoint = PostbackEndpoint(verification: verification, committer: committer, metrics: metrics,
                                        maximumBodyBytes: configuration.maximumBodyBytes)
        let metricsPage = MetricsPage(metrics: metrics, connections: connections, queues: endpoint.queues,
                                      sink: sink)
        let router = ReceiverRouter.postbacks(
            endpoint: endpoint, readiness: readiness,
            metricsPage: configuration.metricsAddress == nil ? metricsPage : nil)
        let idleTimeout = TimeAmount.seconds(Int64(configuration.idleTimeoutSeconds))
        let requestTimeout = TimeAmount.milliseconds(Int64(configuration.requestTimeoutMilliseconds))
        // Every connection is guarded: a deadline per request, no body read after a refusal, the oldest idle one
        // closed at the cap (ConnectionGuard). Hummingbird closes one idle for the idle timeout (keep-alive ones).
        let server = HTTPServerBuilder { responder in
            GuardedHTTP1Channel(responder: responder, idleTimeout: idleTimeout, requestTimeout: requestTimeout,
                                connections: connections, metrics: metrics)
        }
        var services: [any Service] = (committer.map { [$0] } ?? []) + [verification]
        if let outbox, !configuration.relayDestinations.isEmpty {
            // First in the list, so stopped last: after the commits that write its outbox rows.
            services.insert(relay(configuration, outbox: outbox, metrics: metrics, logger: logger), at: 0)
        }
        let metricsBound = metricsAddressGate(configuration)
        if let address = configuration.metricsAddress {
            // Its own listener, for the monitoring network only: the postback listener then answers 404 there,
            // so a sender learns nothing from the counters (which kids verify) or their timing.
            services.append(Application(
                router: ReceiverRouter.metrics(metricsPage),
                server: .http1(configuration: .init(idleTimeout: idleTimeout)),
                configuration: ApplicationConfiguration(
                    address: .hostname(address.host, port: address.port), serverName: nil,
                    availableConnectionsDelegate: MaximumAvailableConnections(64)),
                onServerRunning: { channel in
                    await onMetricsServerRunning(channel)
                    metricsBound?.open()
                },
                logger: logger))
        }
        var application = Application(
            router: router,
            server: server,
            configuration: ApplicationConfiguration(
                address: .hostname(configuration.host, port: configuration.port), serverName: nil,
                // Beyond the cap, connections wait in the kernel's backlog rather than take a descriptor each.
                backlog: configuration.listenBacklog,
                availableConnectionsDelegate: connections.delegate),
            // Stopped in reverse order, after the server: the metrics listener, verification, then the commits.
            services: services,
            onServerRunning: { channel in
                // Once the start-up has succeeded (a failed one prints only its one line), before `listening on`.
                if trustsDevelopmentKeys { logger.warning("\(developmentKeysWarning)") }
                await onServerRunning(channel)
            },
            logger: logger)
        if let metricsBound {
            // The postback listener binds once the metrics listener has: if that one cannot (its address in use),
            // nothing listened and the start-up fails with one line, not after a "listening on".
            application.beforeServerStarts { try await metricsBound.wait() }
        }
        return application
    }

    /// The warning logged at start-up when Apple's development keys are trusted (`--allow-development`).
    static let developmentKeysWarning = "Apple's development keys are trusted (--allow-development): "
        + "any device in developer mode can sign postbacks that verify; never on production traffic"

    private static func metricsAddressGate(_ configuration: ReceiverConfiguration) -> Gate? {
        configuration.metricsAddress == nil ? nil : Gate()
    }

    /// Opens once; waiting is cancellable (a service group that fails cancels the waiter).
    final class Gate: Sendable {
        private struct State {
            var isOpen = false
            var waiters: [Int: CheckedContinuation<Void, any Error>] = [:]
            var next = 0
        }

        private let state = Mutex(State())

        func open() {
            let waiters = state.withLock { state in
                state.isOpen = true
                defer { state.waiters = [:] }
                return Array(state.waiters.values)
            }
            for waiter in waiters { waiter.resume() }
        }

        func wait() async throws {
            let id = state.withLock { state in
                state.next += 1
                return state.next
            }
            try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                    let resumeNow: Result<Void, any Error>? = state.withLock { state in
                        if state.isOpen { return .success(()) }
                        if Task.isCancelled { return .failure(CancellationError()) }
                        state.waiters[id] = continuation
                        return nil
                    }
                    if let resumeNow { continuation.resume(with: resumeNow) }
                }
            } onCancel: {
                let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
                waiter?.resume(throwing: CancellationError())
            }
        }
    }

    static func makeSink(_ configuration: ReceiverConfiguration, pipeline: PostbackPipeline, metrics: ReceiverMetrics)
        async throws
        -> (sink: (any PostbackSink)?, outbox: (any Outbox)?) {
        switch configuration.storage {
        case .none:
            return (nil, nil)
        case .durable(let state, let archive):
            let opened = try DurableSink.open(
                state, archivePath: archive, synchronous: configuration.synchronous,
                retentionDays: configuration.retentionDays,
                quota: InvalidQuota(perHour: configuration.invalidQuotaPerHour), pipeline: pipeline, metrics: metrics,
                destinations: configuration.relayDestinations.map(\.outbox))
            return (opened.sink, opened.outbox)
        }
    }

    /// The relay of the stored postbacks to `--forward`, `--forward-all` and `--webhook` destinations.
    static func relay(_ configuration: ReceiverConfiguration, outbox: any Outbox, metrics: ReceiverMetrics,
                      logger: Logger) -> Relay {
        var settings = Relay.Settings()
        settings.maximumInFlight = configuration.relayMaximumInFlight
        settings.deadline = .milliseconds(configuration.relayDeadlineMilliseconds)
        settings.horizonMilliseconds = configuration.relayHorizonMilliseconds
        settings.schedule.maximumMilliseconds = configuration.relayMaximumBackoffMilliseconds
        settings.schedule.initialMilliseconds = min(settings.schedule.initialMilliseconds,
                                                    configuration.relayMaximumBackoffMilliseconds)
        return Relay(destinations: configuration.relayDestinations, outbox: outbox, settings: settings,
                     metrics: RelayMetrics(destinations: configuration.relayDestinations.map(\.outbox.name),
                                           factory: metrics.factory),
                     logger: logger)
    }
}
