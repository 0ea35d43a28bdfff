import Attribution
import Foundation
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle

/// Puts the receiver together: the storage (deduplication store and received-postback archive, or nothing), the
/// group committer, the metrics and the HTTP application, from a checked ``ReceiverConfiguration``.
public enum PostbackReceiver {
    /// The application to run (`try await app.runService()` stops gracefully on SIGTERM and SIGINT). Opens the
    /// state first: a state file it refuses throws ``StorageFailure`` before anything listens.
    public static func application(
        _ configuration: ReceiverConfiguration, metrics: ReceiverMetrics = ReceiverMetrics(), logger: Logger,
        onServerRunning: @escaping @Sendable (any Channel) async -> Void = { _ in }
    ) async throws -> Application<ReceiverResponder> {
        let sink = try await makeSink(configuration, metrics: metrics)
        let committer = sink.map { sink in
            GroupQueue<ReceivedPostback, SinkOutcome>(
                maximumGroupSize: configuration.maximumGroupSize, concurrency: configuration.concurrentCommits,
                onEnd: { await sink.finish() }
            ) { group in
                let outcomes = try await sink.store(group)
                metrics.committed()
                return outcomes
            }
        }
        let verifier = configuration.verifier
        let verification = GroupQueue<[UInt8], VerificationResult>(
            maximumGroupSize: configuration.maximumVerificationBatch,
            concurrency: ProcessInfo.processInfo.activeProcessorCount
        ) { bodies in
            bodies.count == 1 ? [verifier.verify(bodies[0])] : verifier.verify(batch: bodies)
        }
        let responder = ReceiverResponder(
            verification: verification, committer: committer, metrics: metrics,
            maximumBodyBytes: configuration.maximumBodyBytes, logger: logger)
        return Application(
            responder: responder,
            // A connection with nothing read or written for this long is closed: idle and stalled clients do not
            // hold sockets for ever.
            server: .http1(configuration: .init(idleTimeout: .seconds(Int64(configuration.idleTimeoutSeconds)))),
            configuration: ApplicationConfiguration(
                address: .hostname(configuration.host, port: configuration.port), serverName: nil),
            // Stopped in reverse order, after the server: verification, then the commits.
            services: (committer.map { [$0] } ?? []) + [verification],
            onServerRunning: onServerRunning,
            logger: logger)
    }

    static func makeSink(_ configuration: ReceiverConfiguration, metrics: ReceiverMetrics) async throws
        -> (any PostbackSink)? {
        switch configuration.storage {
        case .none:
            return nil
        case .durable(let state, let archive):
            return try DurableSink.open(
                state, archivePath: archive, synchronous: configuration.synchronous,
                retentionDays: configuration.retentionDays,
                quota: InvalidQuota(perHour: configuration.invalidQuotaPerHour), metrics: metrics)
        }
    }
}
