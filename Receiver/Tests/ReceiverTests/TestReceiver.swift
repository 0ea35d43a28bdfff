@_spi(Servers) import Attribution
import CSQLiteForTests
import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
@_spi(Servers) @testable import ReceiverCore
import Synchronization

/// A receiver built as `postback-receiver` builds it, on files in a fresh temporary directory, with the fixture
/// keys; and a read-only look at its archive.
struct TestReceiver {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
    static let appAttributionPath = "/.well-known/appattribution/report-attribution/"
    static let skAdNetworkPath = "/.well-known/skadnetwork/report-attribution/"

    let directory: URL
    let statePath: String
    let archivePath: String
    let metrics: ReceiverMetrics
    var configuration: ReceiverConfiguration

    /// The test process's `MetricsSystem`, where Hummingbird's `MetricsMiddleware` records (as the executable
    /// bootstraps its own): every receiver a test makes with it feeds the same request series.
    static let processMetrics: ReceiverMetrics = {
        let metrics = ReceiverMetrics()
        metrics.bootstrapMetricsSystem()
        return metrics
    }()

    init(invalidQuota: Int = 10_000, metrics: ReceiverMetrics = ReceiverMetrics()) throws {
        self.metrics = metrics
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("receiver-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        statePath = directory.appendingPathComponent("state.sqlite").path
        archivePath = directory.appendingPathComponent("received.sqlite").path
        var ring = KeyRing(allowingDevelopmentKeys: true)
        try ring.add(ECPublicKey(keyFile: Self.fixture("keys/fixture-apple-identifier-0.pem").path),
                     keyID: "fixture-apple-identifier/0")
        configuration = ReceiverConfiguration(verifier: AttributionVerifier(keyRing: ring))
        configuration.storage = .durable(state: .sqlite(path: statePath), archive: archivePath)
        configuration.invalidQuotaPerHour = invalidQuota
    }

    static func fixture(_ path: String) -> URL {
        repository.appendingPathComponent("Fixtures").appendingPathComponent(path)
    }

    static func body(_ path: String) throws -> ByteBuffer {
        ByteBuffer(bytes: try Data(contentsOf: fixture(path)))
    }

    func application() async throws -> some ApplicationProtocol {
        var logger = Logger(label: "receiver-tests")
        logger.logLevel = .critical
        return try await PostbackReceiver.application(configuration, metrics: metrics, logger: logger)
    }

    /// The application with its log lines, as `--log-format` writes them, collected in `lines`.
    func application(loggingTo lines: LogLines, format: ReceiverLogHandler.Format) async throws
        -> some ApplicationProtocol {
        let logger = Logger(label: "receiver-tests") { _ in
            ReceiverLogHandler(format: format, level: .info, output: LineOutput {
                lines.append(String(decoding: $0, as: UTF8.self))
            })
        }
        return try await PostbackReceiver.application(configuration, metrics: metrics, logger: logger)
    }

    /// One stored row: what the archive says of a request.
    struct Row: Equatable {
        var verdict: String
        var code: String?
        var body: [UInt8]
        var record: String
        /// `body` or `differences` (what `body` holds).
        var kept: String
    }

    /// The archive could not be read: no rows is then no answer, never an empty archive.
    struct UnreadableArchive: Error {
        let reason: String
    }

    /// Every row of the archive, in insertion order; throws when the archive or its table cannot be read.
    func rows() throws -> [Row] {
        var database: OpaquePointer?
        guard sqlite3_open_v2(archivePath, &database, SQLITE_OPEN_READONLY, nil) == SQLITE_OK else {
            sqlite3_close(database)
            throw UnreadableArchive(reason: "cannot open \(archivePath)")
        }
        defer { sqlite3_close(database) }
        // The application may still be closing the archive (folding its log): wait for its lock rather than fail
        // with "database is locked" (seen once in a parallel run).
        sqlite3_busy_timeout(database, 10_000)
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(database,
                                 "SELECT verdict, code, body, record, kept FROM received_postbacks ORDER BY id",
                                 -1, &statement, nil) == SQLITE_OK else {
            throw UnreadableArchive(reason: String(cString: sqlite3_errmsg(database)))
        }
        defer { sqlite3_finalize(statement) }
        var rows: [Row] = []
        while sqlite3_step(statement) == SQLITE_ROW {
            func text(_ column: Int32) -> String? {
                sqlite3_column_text(statement, column).map { String(cString: $0) }
            }
            let count = Int(sqlite3_column_bytes(statement, 2))
            let bytes = sqlite3_column_blob(statement, 2).map {
                Array(UnsafeRawBufferPointer(start: $0, count: count))
            } ?? []
            rows.append(Row(verdict: text(0) ?? "", code: text(1), body: bytes, record: text(3) ?? "",
                            kept: text(4) ?? ""))
        }
        return rows
    }

    /// Runs `sql` on the SQLite file at `path` through a connection of the test's own (the receiver's stay open):
    /// how a test makes the real files fail, with a trigger that raises what a full disk would.
    static func execute(_ sql: String, in path: String) throws {
        var database: OpaquePointer?
        defer { sqlite3_close(database) }
        guard sqlite3_open_v2(path, &database, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nil) == SQLITE_OK else {
            throw UnreadableArchive(reason: "cannot open \(path)")
        }
        sqlite3_busy_timeout(database, 10_000)
        guard sqlite3_exec(database, sql, nil, nil, nil) == SQLITE_OK else {
            throw UnreadableArchive(reason: String(cString: sqlite3_errmsg(database)))
        }
    }

    /// The integer `sql` selects (one row, one column) from the SQLite file at `path`, read-only.
    static func count(_ sql: String, in path: String) throws -> Int {
        var database: OpaquePointer?
        defer { sqlite3_close(database) }
        guard sqlite3_open_v2(path, &database, SQLITE_OPEN_READONLY, nil) == SQLITE_OK else {
            throw UnreadableArchive(reason: "cannot open \(path)")
        }
        sqlite3_busy_timeout(database, 10_000)
        var statement: OpaquePointer?
        defer { sqlite3_finalize(statement) }
        guard sqlite3_prepare_v2(database, sql, -1, &statement, nil) == SQLITE_OK,
              sqlite3_step(statement) == SQLITE_ROW else {
            throw UnreadableArchive(reason: String(cString: sqlite3_errmsg(database)))
        }
        return Int(sqlite3_column_int64(statement, 0))
    }

    /// The value of one series of the metrics, 0 when absent.
    func metric(_ name: String, _ labels: [String: String] = [:]) -> Double {
        let text = String(decoding: metrics.render(), as: UTF8.self)
        for line in text.split(separator: "\n") where line.hasPrefix(name) && !line.hasPrefix("#") {
            let parts = line.split(separator: " ")
            guard let series = parts.first, let value = parts.last.flatMap({ Double($0) }) else { continue }
            let seriesName = series.split(separator: "{").first.map(String.init) ?? ""
            guard seriesName == name else { continue }
            var found: [String: String] = [:]
            if let open = series.firstIndex(of: "{") {
                for pair in series[series.index(after: open)...].dropLast().split(separator: ",") {
                    let halves = pair.split(separator: "=", maxSplits: 1)
                    found[String(halves[0])] = String(halves[1].dropFirst().dropLast())
                }
            }
            if found == labels { return value }
        }
        return 0
    }
}

/// Log lines collected by a test.
final class LogLines: Sendable {
    private let lines = Mutex<[String]>([])

    func append(_ line: String) {
        lines.withLock { $0.append(line) }
    }

    var all: [String] { lines.withLock { $0 } }
}
