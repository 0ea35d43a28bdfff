import ArgumentParser
import Hummingbird
@_spi(Servers) import Attribution
@_spi(Servers) import AttributionStores
import Foundation
import Logging
@_spi(Servers) import ReceiverCore
import ServiceLifecycle
import Synchronization

/// `postback-receiver`: receives Apple's postbacks over HTTP, verifies them with the command line's rules and keys,
/// stores each one before answering 200. See Receiver/README.md.
@main
struct ReceiverCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "postback-receiver",
        abstract: "Receive, verify and durably store Apple's AdAttributionKit and SKAdNetwork postbacks.",
        discussion: """
            Serves POST /.well-known/appattribution/report-attribution/ and \
            POST /.well-known/skadnetwork/report-attribution/, GET /healthz, GET /readyz (503 while the state does \
            not answer) and GET /metrics. Every postback is stored (bytes, verdict, JSON Lines record) before it \
            is answered 200, whatever its verdict; 500 when storing failed, 503 for an invalid body over \
            --invalid-quota that could still be genuine, and 503 with Retry-After past --queue-depth. Plain HTTP: \
            put a TLS terminator in front (see Receiver/README.md).

            Exit statuses: 0 stopped by SIGTERM or SIGINT; 64 usage mistake (with the usage line); 66 a key or schema file \
            cannot be used; 69 the PostgreSQL state's server cannot be reached; 71 cannot listen (port in use, \
            address not on this machine); 73 the state or archive is refused or cannot be created. Every start-up \
            failure prints one line on standard error naming its cause and remedy.
            """,
        version: ReleaseVersion.line)

    @Option(help: "Address to listen on.")
    var host = "127.0.0.1"

    @Option(help: "Port to listen on (0: any free port, printed at start-up).")
    var port = 8080

    @Option(help: ArgumentHelp(
        "Deduplication state: a SQLite file shared with postback-verify --state (created when missing), or a "
            + "PostgreSQL database (postgresql://... or host=... dbname=...) shared by every receiver and run.",
        valueName: "path-or-url"))
    var state = "postback-receiver.sqlite"

    @Option(help: ArgumentHelp(
        "With a SQLite --state only: the SQLite file of the received postbacks (bytes, verdict, record; default "
            + "STATE-received.sqlite beside it). A PostgreSQL state keeps them itself, in one table for every "
            + "receiver. Read them with postback-verify export.", valueName: "path"))
    var archive: String?

    @Flag(help: "Store nothing and deduplicate nothing (benchmarks only: a 200 tells Apple never to resend).")
    var noStorage = false

    @Option(help: ArgumentHelp("Forget postbacks first seen more than DAYS days ago (0-36500).", valueName: "days"))
    var retention = String(StateLocation.defaultRetentionDays)

    @Option(help: ArgumentHelp("Invalid bodies stored per clock hour; beyond it a body that could still be genuine "
                                   + "is answered 503, a forged one only counted (see Receiver/README.md).",
                               valueName: "n"))
    var invalidQuota = 10_000

    @Option(help: ArgumentHelp(
        "Trust the PEM (or DER) P-256 public key at PATH for that kid; repeatable.", valueName: "kid=path"))
    var key: [String] = []

    @Flag(help: "Also trust Apple's development kids (never on production traffic).")
    var allowDevelopment = false

    @Flag(help: "Warnings become rejections (code rule-warning).")
    var strict = false

    @Option(help: ArgumentHelp("Decode valid postbacks' conversion values with the schema in FILE (docs/schema.md): "
                                   + "records gain decoded, metrics count campaigns and events by its names.",
                               valueName: "file"))
    var schema: String?

    @Option(help: ArgumentHelp("I3 warns on impressions older than this (30d, 12h, 90m, 3600s).",
                               valueName: "duration"))
    var maxImpressionAge: String?

    @Option(name: .customLong("skadnetwork-key-p256"),
            help: ArgumentHelp("Replace Apple's SKAdNetwork 2.1+ key (testing your own signing).", valueName: "path"))
    var skAdNetworkKeyP256: String?

    @Option(name: .customLong("skadnetwork-key-p192"),
            help: ArgumentHelp("Replace Apple's SKAdNetwork 1.0/2.0 key (testing your own signing).",
                               valueName: "path"))
    var skAdNetworkKeyP192: String?

    @Option(help: ArgumentHelp(
        "full: each archive commit reaches the disk (fsync; PostgreSQL: the server's) before the 200, surviving a "
            + "power loss; normal: it reaches the operating system (PostgreSQL: the server), surviving the "
            + "receiver's crash but not the machine's.",
        valueName: "full|normal"))
    var sync = "full"

    @Option(help: ArgumentHelp("Close a keep-alive connection after this many seconds without a request (1-3600).",
                               valueName: "seconds"))
    var idleTimeout = 5

    @Option(help: ArgumentHelp("Most postbacks stored in one group commit (1-65536).", valueName: "n"))
    var groupSize = 512

    @Option(help: ArgumentHelp("Close a connection whose request (head and body) has not arrived this many seconds "
                                   + "after its first byte (0.1-3600).", valueName: "seconds"))
    var requestTimeout = 5.0

    @Option(help: ArgumentHelp("Connections open at once; more wait in the listen backlog (default: the open-file "
                                   + "limit less 64, at most 4096).", valueName: "n"))
    var maxConnections: Int?

    @Option(help: ArgumentHelp("Requests waiting for verification, and for storing, before more are answered 503 "
                                   + "with Retry-After (1-1048576).", valueName: "n"))
    var queueDepth = 4096

    @Option(help: ArgumentHelp("On SIGTERM, wait at most this many seconds for requests in flight, then close "
                                   + "their connections (1-3600).", valueName: "seconds"))
    var stopTimeout = 10.0

    @Option(help: ArgumentHelp("Serve GET /metrics on this address only (404 on the postback listener).",
                               valueName: "host:port"))
    var metricsAddress: String?

    @Option(help: ArgumentHelp("Log level: trace, debug, info (a line per request), notice (no request lines), "
                                   + "warning, error, critical.", valueName: "level"))
    var logLevel = "info"

    @Option(help: ArgumentHelp("Log lines on standard error as text or as one JSON object each; every value from a "
                                   + "request is escaped.", valueName: "text|json"))
    var logFormat = "text"

    @Option(help: ArgumentHelp(
        "Relay each stored valid postback (first sightings) to this endpoint as Apple sent it: a base URL (Apple's "
            + "path appended) or appattribution=URL,skadnetwork=URL; repeatable.", valueName: "url"))
    var forward: [String] = []

    @Option(help: ArgumentHelp("As --forward, but every body Apple sent (invalid ones too; never a duplicate), for a "
                                   + "partner that verifies on its own; repeatable.", valueName: "url"))
    var forwardAll: [String] = []

    @Option(help: ArgumentHelp("Post each valid postback's record to this URL, signed as Standard Webhooks says; "
                                   + "repeatable, each with its --webhook-secret.", valueName: "url"))
    var webhook: [String] = []

    @Option(help: ArgumentHelp("The file holding the secret (whsec_ then base64) of the --webhook at the same "
                                   + "position.", valueName: "file"))
    var webhookSecret: [String] = []

    @Option(help: ArgumentHelp("Relay requests in flight per destination, and its connections (1-1024).",
                               valueName: "n"))
    var relayInFlight = 16

    @Option(help: ArgumentHelp("A relay request's deadline, connecting included (0.1-600).", valueName: "seconds"))
    var relayDeadline = 10.0

    @Option(help: ArgumentHelp("Give a delivery up (kept as dead) once owed this long (30s, 90m, 12h, 9d; 1s-3650d).",
                               valueName: "duration"))
    var relayHorizon = "9d"

    @Option(help: ArgumentHelp("The longest wait between two attempts of a delivery (1-86400).",
                               valueName: "seconds"))
    var relayMaxBackoff = 600.0

    /// `--relay-horizon`'s value in milliseconds: a whole number and `s`, `m`, `h` or `d`.
    static func horizonMilliseconds(_ text: String) -> Int64? {
        guard let unit = text.utf8.last, let number = Int64(text.dropLast()), number > 0 else { return nil }
        let scale: Int64
        switch unit {
        case UInt8(ascii: "s"): scale = 1_000
        case UInt8(ascii: "m"): scale = 60_000
        case UInt8(ascii: "h"): scale = 3_600_000
        case UInt8(ascii: "d"): scale = 86_400_000
        default: return nil
        }
        let (product, overflow) = number.multipliedReportingOverflow(by: scale)
        return overflow || product > 3650 * 86_400_000 ? nil : product
    }

    /// The relay's destinations, as checked values; the webhooks' secrets are read only when `readSecrets`.
    private func relayDestinations(readSecrets: Bool) throws -> [RelayDestination] {
        var destinations = try forward.map { try RelayDestination.forward($0, selection: .valid) }
            + forwardAll.map { try RelayDestination.forward($0, selection: .all) }
        for (url, path) in zip(webhook, webhookSecret) {
            let signer = readSecrets ? try WebhookSigner(contentsOfFile: path)
                : try WebhookSigner(secret: "whsec_AAAAAAAAAAAAAAAAAAAAAA==", path: path)
            destinations.append(try RelayDestination.webhook(url, signer: signer))
        }
        var names: [String] = []
        for destination in destinations {
            let name = destination.outbox.name
            if names.contains(where: { $0.utf8.elementsEqual(name.utf8) }) {
                throw StartupFailure(.usage, "\(name) is given twice as a relay destination: give each once")
            }
            names.append(name)
        }
        return destinations
    }

    func validate() throws {
        guard (0...65535).contains(port) else { throw ValidationError("--port must be from 0 to 65535, not \(port)") }
        _ = try Self.usage { () throws(AttributionError) in try StateLocation.retentionDays(retention) }
        guard invalidQuota >= 0 else { throw ValidationError("--invalid-quota must be 0 or more") }
        guard (1...65536).contains(groupSize) else { throw ValidationError("--group-size must be from 1 to 65536") }
        guard ReceiverConfiguration.Synchronous(rawValue: sync) != nil else {
            throw ValidationError("--sync must be full or normal, not \(TerminalText.escaped(sync))")
        }
        guard (1...3600).contains(idleTimeout) else { throw ValidationError("--idle-timeout must be from 1 to 3600") }
        guard (0.1...3600).contains(requestTimeout) else {
            throw ValidationError("--request-timeout must be from 0.1 to 3600 seconds")
        }
        if let maxConnections, !(1...1_048_576).contains(maxConnections) {
            throw ValidationError("--max-connections must be from 1 to 1048576")
        }
        guard (1...1_048_576).contains(queueDepth) else {
            throw ValidationError("--queue-depth must be from 1 to 1048576")
        }
        guard (1...3600).contains(stopTimeout) else { throw ValidationError("--stop-timeout must be from 1 to 3600") }
        if let metricsAddress, Self.splitAddress(metricsAddress) == nil {
            throw ValidationError("--metrics-address takes HOST:PORT (port 0-65535), not "
                                  + TerminalText.escaped(metricsAddress))
        }
        guard Logger.Level(rawValue: logLevel) != nil else {
            throw ValidationError("--log-level must be trace, debug, info, notice, warning, error or critical")
        }
        guard ReceiverLogHandler.Format(rawValue: logFormat) != nil else {
            throw ValidationError("--log-format must be text or json, not \(TerminalText.escaped(logFormat))")
        }
        let stateLocation = try Self.usage { () throws(AttributionError) in try StateLocation(state) }
        if archive != nil, case .postgreSQL = stateLocation {
            throw ValidationError("--archive applies to a SQLite --state only: a PostgreSQL state keeps the "
                                  + "received postbacks itself (read them with postback-verify export)")
        }
        if let archive {
            guard !archive.isEmpty, archive != "-" else { throw ValidationError("--archive needs a file path") }
            guard archive != state else {
                throw ValidationError("--archive must be another file than --state (the state file holds only "
                                      + "the deduplication tables)")
            }
        }
        _ = try verifierOptions()
        guard webhook.count == webhookSecret.count else {
            throw ValidationError("each --webhook needs its --webhook-secret FILE (\(webhook.count) --webhook, "
                                  + "\(webhookSecret.count) --webhook-secret)")
        }
        guard (1...1024).contains(relayInFlight) else { throw ValidationError("--relay-in-flight must be 1 to 1024") }
        guard (0.1...600).contains(relayDeadline) else {
            throw ValidationError("--relay-deadline must be from 0.1 to 600 seconds")
        }
        guard (1...86400).contains(relayMaxBackoff) else {
            throw ValidationError("--relay-max-backoff must be from 1 to 86400 seconds")
        }
        guard Self.horizonMilliseconds(relayHorizon) != nil else {
            throw ValidationError("--relay-horizon takes a whole number and s, m, h or d (9d, 12h, 30s), at most "
                                  + "3650d, not \(TerminalText.escaped(relayHorizon))")
        }
        do {
            if try !relayDestinations(readSecrets: false).isEmpty && noStorage {
                throw ValidationError("--forward, --forward-all and --webhook relay stored postbacks: they cannot go "
                                      + "with --no-storage")
            }
        } catch let failure as StartupFailure {
            throw ValidationError(failure.message)
        }
    }

    /// A mistake the library found in an option's value (`invalid-option`), as a usage error: the library's message,
    /// escaped (the argument parser prints it as it is).
    static func usage<Value>(_ body: () throws(AttributionError) -> Value) throws -> Value {
        do {
            return try body()
        } catch {
            throw ValidationError(StartupFailure(.usage, error.reason).message)
        }
    }

    /// `--key`, `--allow-development`, the SKAdNetwork key options, `--strict` and `--max-impression-age`, as the
    /// library defines them for every program that verifies (the command line parses the same).
    private func verifierOptions() throws -> VerifierOptions {
        try Self.usage { () throws(AttributionError) -> VerifierOptions in
            var options = VerifierOptions()
            for entry in key { try options.addKey(entry) }
            options.allowsDevelopmentKeys = allowDevelopment
            if let skAdNetworkKeyP256 { try options.replaceSKAdNetworkKey(.p256, path: skAdNetworkKeyP256) }
            if let skAdNetworkKeyP192 { try options.replaceSKAdNetworkKey(.p192, path: skAdNetworkKeyP192) }
            options.isStrict = strict
            if let maxImpressionAge { try options.setMaximumImpressionAge(maxImpressionAge) }
            return options
        }
    }

    func run() async throws {
        // Log lines wait in memory for a few milliseconds (ReceiverLogHandler): they are written before the
        // process exits, however run ends, unless standard error has stalled for 1 s (they are then counted lost).
        defer { ReceiverLogHandler.stopBuffering() }
        do {
            try await serve()
        } catch let failure as StartupFailure {
            // Queued after the lines logged before it, and written with them by the stop above: a stalled standard
            // error cannot hold the exit.
            ReceiverLogHandler.writeUnformatted("postback-receiver: \(failure.message)\n")
            throw ExitCode(failure.status.rawValue)
        }
    }

    /// Starts the receiver and runs it until SIGTERM or SIGINT; throws ``StartupFailure`` for whatever stopped it
    /// from starting.
    private func serve() async throws {
        let level = Logger.Level(rawValue: logLevel) ?? .info
        let format = ReceiverLogHandler.Format(rawValue: logFormat) ?? .text
        ReceiverLogHandler.bootstrap(format: format, level: level)
        let logger = Logger(label: "postback-receiver")
        let verification = try verifierOptions()
        let verifier: AttributionVerifier
        do {
            verifier = try verification.verifier()
        } catch {
            throw StartupFailure(.inputFile, error.reason)  // the library's message names the file and the remedy
        }
        var configuration = ReceiverConfiguration(verifier: verifier)
        if let schema {
            do {
                configuration.schema = try ConversionSchema(contentsOfFile: schema)
            } catch {
                throw StartupFailure(.inputFile, error.reason)  // names the file, and the line and reason
            }
        }
        configuration.host = host
        configuration.port = port
        let stateLocation = try Self.usage { () throws(AttributionError) in try StateLocation(state) }
        configuration.storage = noStorage ? .none : .durable(
            state: stateLocation, archive: archive ?? ReceiverConfiguration.defaultArchivePath(for: stateLocation))
        configuration.retentionDays = try Self.usage { () throws(AttributionError) in
            try StateLocation.retentionDays(retention)
        }
        configuration.invalidQuotaPerHour = invalidQuota
        configuration.maximumGroupSize = groupSize
        configuration.idleTimeoutSeconds = idleTimeout
        configuration.requestTimeoutMilliseconds = Int((requestTimeout * 1000).rounded())
        if let maxConnections { configuration.maximumConnections = maxConnections }
        configuration.queueDepth = queueDepth
        configuration.metricsAddress = metricsAddress.flatMap(Self.splitAddress)
        configuration.synchronous = ReceiverConfiguration.Synchronous(rawValue: sync) ?? .full
        configuration.relayDestinations = try relayDestinations(readSecrets: true)
        configuration.relayMaximumInFlight = relayInFlight
        configuration.relayDeadlineMilliseconds = Int64((relayDeadline * 1000).rounded())
        configuration.relayHorizonMilliseconds = Self.horizonMilliseconds(relayHorizon) ?? 9 * 86_400_000
        configuration.relayMaximumBackoffMilliseconds = Int64((relayMaxBackoff * 1000).rounded())
        let metrics = ReceiverMetrics(schema: configuration.schema)
        metrics.bootstrapMetricsSystem()
        if noStorage {
            logger.warning("--no-storage: nothing is stored or deduplicated; for benchmarks only")
        }
        let listening = ListeningFlag(expectsMetrics: configuration.metricsAddress != nil)
        let app: any Service
        do {
            app = try await PostbackReceiver.application(configuration, metrics: metrics, logger: logger) { channel in
                let address = channel.localAddress.map { "\($0.ipAddress ?? host):\($0.port ?? port)" } ?? "?"
                listening.bound(postbacks: address)
            } onMetricsServerRunning: { channel in
                let address = channel.localAddress.map { "\($0.ipAddress ?? "?"):\($0.port ?? 0)" } ?? "?"
                listening.bound(metrics: address)
            }
        } catch let failure as StorageFailure {
            if case .postgreSQL = stateLocation {
                throw StartupFailure.state(failure, isPostgreSQL: true)
            }
            throw StartupFailure.state(failure, isPostgreSQL: false)
        }
        // SIGTERM or SIGINT: stop accepting, answer what is in flight; past --stop-timeout, cancel (connections
        // closed; what is being stored is still stored and confirmed before the queues end).
        var groupConfiguration = ServiceGroupConfiguration(
            services: [.init(service: app)], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        groupConfiguration.maximumGracefulShutdownDuration = .milliseconds(Int64((stopTimeout * 1000).rounded()))
        do {
            try await ServiceGroup(configuration: groupConfiguration).run()
        } catch is CancellationError where listening.isListening {
            // The stop deadline passed: the connections still open were closed. A stop all the same.
            logger.warning("stopped after --stop-timeout with requests still in flight; their connections closed")
        } catch {
            // A server threw before it listened (a bind error): the whole service group stopped with it. The
            // metrics listener binds first (the postback listener waits for it).
            if let address = configuration.metricsAddress, !listening.hasMetricsListener {
                throw StartupFailure.cannotListenForMetrics(host: address.host, port: address.port, error: error)
            }
            if !listening.hasPostbackListener {
                throw StartupFailure.cannotListen(host: host, port: port, error: error)
            }
            throw error
        }
    }

    /// `HOST:PORT` split at its last `:` (an IPv6 host in brackets loses them); nil without a host or a port.
    static func splitAddress(_ address: String) -> (host: String, port: Int)? {
        guard let colon = address.lastIndex(of: ":"), colon != address.startIndex,
              let port = Int(address[address.index(after: colon)...]), (0...65535).contains(port) else { return nil }
        var host = String(address[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        return host.isEmpty ? nil : (host, port)
    }

}

/// Which listeners are bound. The `listening on` line (and `metrics on`, with --metrics-address) is printed once
/// every listener is bound, so that a script waiting for it knows the start-up succeeded; an error before that is
/// a start-up failure (cannot listen), one after it is not.
private final class ListeningFlag: Sendable {
    private struct Bound {
        var postbacks: String?
        var metrics: String?
        var printed = false
    }

    private let expectsMetrics: Bool
    private let bound = Mutex(Bound())

    init(expectsMetrics: Bool) {
        self.expectsMetrics = expectsMetrics
    }

    var hasPostbackListener: Bool { bound.withLock { $0.postbacks != nil } }
    var hasMetricsListener: Bool { bound.withLock { $0.metrics != nil } }
    var isListening: Bool { bound.withLock { $0.printed } }

    func bound(postbacks address: String) {
        record { $0.postbacks = address }
    }

    func bound(metrics address: String) {
        record { $0.metrics = address }
    }

    private func record(_ change: (inout Bound) -> Void) {
        let lines = bound.withLock { bound -> String? in
            change(&bound)
            guard !bound.printed, let postbacks = bound.postbacks else { return nil }
            if expectsMetrics && bound.metrics == nil { return nil }
            bound.printed = true
            // Lines on standard output that scripts wait for (the ports, when 0).
            return "postback-receiver: listening on \(postbacks)\n"
                + (bound.metrics.map { "postback-receiver: metrics on \($0)\n" } ?? "")
        }
        if let lines { FileHandle.standardOutput.write(Data(lines.utf8)) }
    }
}
