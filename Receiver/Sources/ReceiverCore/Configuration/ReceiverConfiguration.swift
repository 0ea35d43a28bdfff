import Foundation
@_spi(Servers) import Attribution
@_spi(Servers) import AttributionStores

/// Everything the receiver is started with, checked before it listens: the command line's flags as values.
public struct ReceiverConfiguration: Sendable {
    /// Where the received bodies, verdicts, records and deduplication keys are kept.
    public enum Storage: Sendable, Equatable {
        /// Deduplication in `state`; the received postbacks in the SQLite file at `archive` with a SQLite state
        /// (nil: ``defaultArchivePath(for:)``), or in the PostgreSQL state itself (then `archive` must be nil).
        case durable(state: StateLocation, archive: String?)
        /// Nothing is stored (benchmarks only): every verdict is answered 200 and forgotten. Never in production:
        /// a 200 tells Apple not to send the postback again.
        case none
    }

    /// Where deduplication is kept: `--state`, as the library defines it for the command line too (a SQLite file
    /// shared with `postback-verify --state` on the same machine, or a PostgreSQL database shared by every
    /// receiver and run).
    typealias State = StateLocation

    /// When an archive commit counts as stored (`--sync`).
    public enum Synchronous: String, Sendable, Equatable, CaseIterable {
        /// Every commit reaches the disk (`fsync`) before the answer: a 200 survives a power loss (the default).
        case full
        /// Every commit reaches the operating system before the answer: a 200 survives the receiver's crash
        /// (kill -9), not the machine's (power loss, kernel panic), whose last commits may be lost.
        case normal
    }

    public var synchronous: Synchronous = .full
    public var host = "127.0.0.1"
    public var port = 8080
    public var storage: Storage = .durable(state: .sqlite(path: "postback-receiver.sqlite"),
                                           archive: "postback-receiver-received.sqlite")
    /// The verifier: the same key ring and policy the command line builds from the same flags.
    var verifier: AttributionVerifier
    /// Days a postback is remembered for deduplication (`--retention`).
    public var retentionDays = StateLocation.defaultRetentionDays
    /// Invalid bodies stored per clock hour (`--invalid-quota`); beyond it they are only counted in metrics.
    public var invalidQuotaPerHour = 10_000
    /// Largest body accepted (bytes); a larger one is answered 413. The verifier's own item limit.
    var maximumBodyBytes = AttributionVerifier.maximumItemBytes
    /// Seconds a connection may stay without a request being read or answered before it is closed
    /// (`--idle-timeout`): short, because an idle keep-alive connection holds one of `--max-connections`' slots.
    public var idleTimeoutSeconds = 5
    /// Most submissions one group commit takes (`--group-size`).
    public var maximumGroupSize = 512
    /// Groups committed at once (each on the archive's one thread, so more only queue there).
    var concurrentCommits = 1
    /// Most bodies whose signatures are checked together.
    var maximumVerificationBatch = 64
    /// Milliseconds a request's head and body may take to arrive, from its first byte (`--request-timeout`).
    public var requestTimeoutMilliseconds = 5_000
    /// Connections open at once (`--max-connections`); beyond it new ones wait in the listen backlog.
    public var maximumConnections = ReceiverConfiguration.defaultMaximumConnections()
    /// Connections the kernel holds while the receiver is at its cap (or busy accepting).
    var listenBacklog = 4096
    /// Submissions waiting in each queue (verification, commit) before requests are answered 503
    /// (`--queue-depth`).
    public var queueDepth = 4096
    /// `/readyz` is 503 when the store does not answer its probe within this many milliseconds.
    var readinessDeadlineMilliseconds = 1_000
    /// `/metrics` on a listener of its own (`--metrics-address`); nil: on the postback listener.
    public var metricsAddress: (host: String, port: Int)?
    /// The conversion-value schema (`--schema`): valid postbacks' records gain `decoded`, and the metrics count
    /// them by the schema's campaign and event names.
    public var schema: ConversionSchema?
    /// Where stored postbacks are relayed (`--forward`, `--forward-all`, `--webhook`); none: no relay.
    public var relayDestinations: [RelayDestination] = []
    /// Requests in flight per destination (`--relay-in-flight`).
    public var relayMaximumInFlight = 16
    /// A relay request's deadline, in milliseconds (`--relay-deadline`).
    public var relayDeadlineMilliseconds: Int64 = 10_000
    /// How long a delivery stays owed before it is given up (`--relay-horizon`; Apple retries for nine days).
    public var relayHorizonMilliseconds: Int64 = 9 * 86_400_000
    /// The longest back-off between two attempts of a delivery (`--relay-max-backoff`), in milliseconds.
    public var relayMaximumBackoffMilliseconds: Int64 = 600_000

    public init(verifier: AttributionVerifier) {
        self.verifier = verifier
    }
}

extension ReceiverConfiguration {
    /// The archive's default path: beside a state file (`state.sqlite` -> `state-received.sqlite`, where
    /// `postback-verify export --state state.sqlite` looks for it); nil with a PostgreSQL state, which keeps the
    /// received postbacks itself.
    public static func defaultArchivePath(for state: StateLocation) -> String? {
        switch state {
        case .sqlite(let path):
            return SQLiteReceivedArchive.defaultPath(besideState: path)
        case .postgreSQL:
            return nil
        }
    }
}

extension ReceiverConfiguration {
    /// Descriptors kept free below the open-file limit: the state and archive files, their journals, the
    /// PostgreSQL connection, the listeners, and whatever the runtime opens.
    static let reservedDescriptors = 64

    /// `--max-connections`' default: the open-file limit (`ulimit -n`) less ``reservedDescriptors``, at most
    /// 4,096 (each connection may hold a 16 KiB body: 64 MiB at most), at least 16. Past the limit, `accept`
    /// failed and the event loop spun on it while normal requests timed out.
    static func defaultMaximumConnections() -> Int {
        var limit = rlimit()
        #if os(Linux)
        let status = getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
        #else
        let status = getrlimit(RLIMIT_NOFILE, &limit)
        #endif
        guard status == 0 else { return 1024 - reservedDescriptors }
        let files = limit.rlim_cur == rlim_t.max ? 1 << 20 : Int(clamping: limit.rlim_cur)
        return max(16, min(files - reservedDescriptors, 4096))
    }
}
