#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization
import Testing
@_spi(CommandLine) @_spi(Servers) @_spi(Stores) @testable import Attribution
@_spi(CommandLine) @_spi(Servers) @testable import AttributionStores

/// The real PostgreSQL server the PostgreSQL tests run against (never a mock).
///
/// `POSTBACK_VERIFY_TEST_POSTGRES` (a libpq connection string, as `.ci/postgres start` prints it) names a running
/// server; without it, the tests start a throw-away one with `.ci/postgres start --watch <this process>`, which
/// stops once the test process has ended. Where neither works (no PostgreSQL installed), the PostgreSQL tests are
/// skipped with the reason on standard error, unless `POSTBACK_VERIFY_REQUIRE_POSTGRES=1` (CI sets it): then
/// they fail. Each test gets a database of its own (``database()``).
enum TestPostgres {
    struct Server: Sendable {
        /// Over the Unix socket, trusted: a superuser without a password.
        let connectionString: String
        /// Over TCP on 127.0.0.1, where the server asks for ``password``.
        let tcpURL: String
        let password: String
        /// The `.ci/postgres` directory (for `halt`, `resume`, `stop`).
        let directory: String
    }

    static let required = ProcessInfo.processInfo.environment["POSTBACK_VERIFY_REQUIRE_POSTGRES"] == "1"

    /// The server, or why there is none.
    static let server: Result<Server, TestPostgresUnavailable> = {
        let environment = ProcessInfo.processInfo.environment
        if let given = environment["POSTBACK_VERIFY_TEST_POSTGRES"], !given.isEmpty {
            return .success(Server(
                connectionString: given, tcpURL: environment["POSTBACK_VERIFY_TEST_POSTGRES_TCP"] ?? "",
                password: environment["POSTBACK_VERIFY_TEST_POSTGRES_PASSWORD"] ?? "",
                directory: environment["POSTBACK_VERIFY_TEST_POSTGRES_DIR"] ?? ""))
        }
        do throws(TestPostgresUnavailable) {
            return .success(try start(watching: getpid()))
        } catch {
            return .failure(error)
        }
    }()

    /// For `.enabled(if:)`: true when there is a server, or when one is required (the tests then fail saying why).
    static var enabled: Bool {
        switch server {
        case .success:
            return true
        case .failure(let reason):
            if !required {
                skipNotice.withLock { said in
                    if !said {
                        let notice = "PostgreSQL tests skipped: \(reason.reason) (set POSTBACK_VERIFY_TEST_POSTGRES "
                            + "to a server's connection string, or install PostgreSQL; "
                            + "POSTBACK_VERIFY_REQUIRE_POSTGRES=1 makes this a failure)\n"
                        FileHandle.standardError.write(Data(notice.utf8))
                        said = true
                    }
                }
            }
            return required
        }
    }

    private static let skipNotice = Mutex(false)

    /// A new, empty database on the server, and its connection string (socket, trusted).
    static func database() throws -> String {
        let server = try server.get()
        let name = "pbv_test_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        try execute("CREATE DATABASE \(name)", on: server.connectionString)
        return server.connectionString + " dbname=\(name)"
    }

    /// Runs `sql` (statements without parameters) on `connectionString`.
    @discardableResult
    static func execute(_ sql: String, on connectionString: String, _ parameters: [PostgresParameter] = [])
        throws -> PostgresResult {
        let connection = try PostgresConnection(try PostgresConnectionString(connectionString)) { _ in }
        return try connection.execute(sql, parameters)
    }

    /// Starts a cluster of its own (for a test that stops and restarts its server), stopped when this process ends.
    static func start(watching process: pid_t) throws(TestPostgresUnavailable) -> Server {
        let script = TestPaths.packageRoot.appendingPathComponent(".ci/postgres")
        let shell = Process()
        shell.executableURL = URL(fileURLWithPath: "/bin/bash")
        shell.arguments = [script.path, "start", "--watch", String(process)]
        let output = Pipe(), error = Pipe()
        shell.standardOutput = output
        shell.standardError = error
        shell.standardInput = FileHandle.nullDevice
        do {
            try shell.run()
        } catch {
            throw TestPostgresUnavailable(reason: "cannot run .ci/postgres: \(error)")
        }
        let printed = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let message = String(decoding: error.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        shell.waitUntilExit()
        guard shell.terminationStatus == 0 else {
            throw TestPostgresUnavailable(reason: message.split(separator: "\n").last.map(String.init)
                                          ?? "no server could be started")
        }
        var values: [String: String] = [:]
        for line in printed.split(separator: "\n") where line.hasPrefix("export ") {
            let assignment = line.dropFirst("export ".count)
            guard let equals = assignment.firstIndex(of: "=") else { continue }
            values[String(assignment[..<equals])] = String(assignment[assignment.index(after: equals)...])
                .trimmingCharacters(in: CharacterSet(charactersIn: "'"))
        }
        guard let connectionString = values["POSTBACK_VERIFY_TEST_POSTGRES"] else {
            throw TestPostgresUnavailable(reason: ".ci/postgres start printed no connection string")
        }
        return Server(connectionString: connectionString, tcpURL: values["POSTBACK_VERIFY_TEST_POSTGRES_TCP"] ?? "",
                      password: values["POSTBACK_VERIFY_TEST_POSTGRES_PASSWORD"] ?? "",
                      directory: values["POSTBACK_VERIFY_TEST_POSTGRES_DIR"] ?? "")
    }

    /// Runs `.ci/postgres COMMAND directory` (`halt`, `resume`, `stop`).
    static func control(_ command: String, _ directory: String) throws {
        let shell = Process()
        shell.executableURL = URL(fileURLWithPath: "/bin/bash")
        shell.arguments = [TestPaths.packageRoot.appendingPathComponent(".ci/postgres").path, command, directory]
        shell.standardOutput = FileHandle.nullDevice
        try shell.run()
        shell.waitUntilExit()
        try #require(shell.terminationStatus == 0, ".ci/postgres \(command) failed")
    }
}

struct TestPostgresUnavailable: Error, CustomStringConvertible {
    let reason: String
    var description: String { "no PostgreSQL server for the tests: \(reason)" }
}

extension TestPostgres {
    /// Everything in the schema and the rows of its tables, to show a refused database was left as it was.
    static func snapshot(_ connectionString: String) throws -> [String] {
        let described = try TestPostgres.execute(PostgresSchema.describe, on: connectionString)
        var lines = (0..<described.rowCount).map { described.text($0, 0) }
        let tables = try TestPostgres.execute(
            "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            + "WHERE n.nspname = 'postback_verify' AND c.relkind = 'r' ORDER BY 1", on: connectionString)
        for row in 0..<tables.rowCount {
            let table = tables.text(row, 0)
            let rows = try TestPostgres.execute(
                "SELECT coalesce(string_agg(t::text, '|' ORDER BY t::text), '') FROM postback_verify.\(table) t",
                on: connectionString)
            lines.append("\(table): \(rows.text(0, 0))")
        }
        return lines
    }
}
