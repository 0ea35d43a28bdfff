import CAttributionPostgres
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One libpq connection to a PostgreSQL server, closed when the last reference goes.
///
/// Every statement is sent with its parameters apart from its text, in binary format (``PostgresParameter``), and
/// answers in binary format. Not thread-safe: one caller at a time, which ``PostgresStateDatabase``'s owners
/// guarantee. When the connection is lost (the server restarted), the failing call says so
/// (``PostgresFailure/connectionLost``) and the next one reconnects, with the same parameters.
final class PostgresConnection {
    private let handle: OpaquePointer
    /// What a message may quote of the connection string: never its password.
    let target: PostgresConnectionString
    /// Run on every new connection (first and after reconnecting): session settings.
    private let onConnect: (PostgresConnection) throws(PostgresFailure) -> Void

    /// Connects to `target`; the password comes from the string, `PGPASSWORD` or the password file (`PGPASSFILE`,
    /// default `~/.pgpass`), as libpq looks for it.
    init(_ target: PostgresConnectionString,
         onConnect: @escaping (PostgresConnection) throws(PostgresFailure) -> Void) throws(PostgresFailure) {
        self.target = target
        self.onConnect = onConnect
        // Defaults first, then the caller's string (expanded from "dbname"), which overrides them; then what we
        // need whatever it says: UTF-8 between us and the server.
        let settings: [(String, String)] = [
            ("connect_timeout", "10"),
            ("keepalives_idle", "30"),
            ("keepalives_interval", "10"),
            ("keepalives_count", "3"),
            ("fallback_application_name", "postback-verify"),
            ("dbname", target.value),
            ("client_encoding", "UTF8"),
        ]
        let connection = Self.connect(settings)
        guard let connection else {
            throw PostgresFailure(message: "libpq could not allocate a connection", connectionLost: true)
        }
        handle = connection
        // NOTICE and WARNING messages would go to standard error: the store says what matters itself.
        PQsetNoticeProcessor(handle, { _, _ in }, nil)
        // Every property is set: a throw from here on runs deinit, which closes the connection.
        guard PQstatus(handle) == CONNECTION_OK else { throw connectionFailure() }
        try onConnect(self)
    }

    deinit {
        PQfinish(handle)
    }

    private static func connect(_ settings: [(String, String)]) -> OpaquePointer? {
        var keywords = settings.map { strdup($0.0) }
        var values = settings.map { strdup($0.1) }
        defer {
            keywords.forEach { free($0) }
            values.forEach { free($0) }
        }
        keywords.append(nil)
        values.append(nil)
        return keywords.withUnsafeBufferPointer { keywordsPointer in
            values.withUnsafeBufferPointer { valuesPointer in
                keywordsPointer.baseAddress!.withMemoryRebound(to: UnsafePointer<CChar>?.self,
                                                               capacity: keywords.count) { keywordArray in
                    valuesPointer.baseAddress!.withMemoryRebound(to: UnsafePointer<CChar>?.self,
                                                                 capacity: values.count) { valueArray in
                        PQconnectdbParams(keywordArray, valueArray, 1)
                    }
                }
            }
        }
    }

    /// True while the connection is up, as far as libpq knows (a server that went away is noticed by the next call).
    var isConnected: Bool { PQstatus(handle) == CONNECTION_OK }

    /// The server's version, as `PQserverVersion` gives it (150018 for 15.18).
    var serverVersion: Int { Int(PQserverVersion(handle)) }

    /// Where the connection went, for messages: host (or socket directory), port, database and user; no password.
    var description: String {
        func string(_ pointer: UnsafeMutablePointer<CChar>?) -> String { pointer.map { String(cString: $0) } ?? "" }
        let host = string(PQhost(handle))
        let place = host.hasPrefix("/") ? "socket \(host)" : host
        return "database \(string(PQdb(handle))) as \(string(PQuser(handle))) at \(place) port \(string(PQport(handle)))"
    }

    /// A call failed for want of a connection: the next one starts a new session, whatever PQstatus says.
    private var broken = false

    /// Reconnects when the connection was lost; a no-op otherwise.
    func reconnectIfNeeded() throws(PostgresFailure) {
        guard broken || PQstatus(handle) != CONNECTION_OK else { return }
        PQreset(handle)
        prepared.removeAll()  // a new session knows none of them
        broken = true  // until the session is set up
        guard PQstatus(handle) == CONNECTION_OK else { throw connectionFailure() }
        try onConnect(self)
        broken = false
    }

    /// Statements prepared on this session, by their text: the name each was prepared under.
    private var prepared: [String: String] = [:]

    /// Runs one statement (no `;`-separated list) with `parameters` bound to `$1`, `$2`, ..., and returns its rows.
    /// With `prepare`, the statement is parsed and planned once per session and only executed after that (the
    /// store's claim and confirm, run once per batch).
    @discardableResult
    func execute(_ sql: String, _ parameters: [PostgresParameter] = [], prepare: Bool = false)
        throws(PostgresFailure) -> PostgresResult {
        let encoded = parameters.map(\.encoded)
        let types = parameters.map(\.typeOID)
        let lengths = encoded.map { Int32($0.count) }
        let formats = [Int32](repeating: 1, count: parameters.count)
        // Each value's bytes, copied into one buffer that stays put during the call.
        let total = encoded.reduce(0) { $0 + $1.count }
        let buffer = UnsafeMutablePointer<CChar>.allocate(capacity: max(total, 1))
        defer { buffer.deallocate() }
        var pointers: [UnsafePointer<CChar>?] = []
        var offset = 0
        for value in encoded {
            value.withUnsafeBytes { raw in
                if let base = raw.baseAddress {
                    UnsafeMutableRawPointer(buffer + offset).copyMemory(from: base, byteCount: raw.count)
                }
            }
            pointers.append(UnsafePointer(buffer + offset))
            offset += value.count
        }
        if prepare {
            let name: String
            if let known = prepared[sql] {
                name = known
            } else {
                name = "postback_verify_\(prepared.count + 1)"
                try check(PQprepare(handle, name, sql, Int32(parameters.count), types))
                prepared[sql] = name
            }
            return try check(PQexecPrepared(handle, name, Int32(parameters.count), pointers, lengths, formats, 1))
        }
        return try check(PQexecParams(handle, sql, Int32(parameters.count), types, pointers, lengths, formats, 1))
    }

    /// `result`, or the failure it reports (cleared).
    private func check(_ result: OpaquePointer?) throws(PostgresFailure) -> PostgresResult {
        guard let result else {
            broken = true
            throw connectionFailure()
        }
        switch PQresultStatus(result) {
        case PGRES_TUPLES_OK, PGRES_COMMAND_OK:
            return PostgresResult(handle: result)
        default:
            let sqlState = PQresultErrorField(result, Int32(UInt8(ascii: "C"))).map { String(cString: $0) }
            let primary = PQresultErrorField(result, Int32(UInt8(ascii: "M"))).map { String(cString: $0) }
            let detail = PQresultErrorMessage(result).map { String(cString: $0) } ?? ""
            PQclear(result)
            // libpq's own failures carry no SQLSTATE (the server's always do): the connection broke, or could not
            // be used. So do class 08 (connection exception) and 57P01-57P03 (the server shutting down or starting).
            let lost = PQstatus(handle) != CONNECTION_OK || sqlState == nil
                || sqlState.map { $0.hasPrefix("08") || ["57P01", "57P02", "57P03"].contains($0) } == true
            if lost { broken = true }
            let message = primary ?? (detail.isEmpty ? String(cString: PQerrorMessage(handle)) : detail)
            throw PostgresFailure(sqlState: sqlState, message: target.scrub(message), connectionLost: lost)
        }
    }

    /// The connection's last error, on one line and scrubbed.
    private func connectionFailure() -> PostgresFailure {
        PostgresFailure(message: target.scrub(String(cString: PQerrorMessage(handle))), connectionLost: true)
    }
}
