@_spi(Stores) import Attribution
internal import CAttributionPostgres
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
        try LibPQ.load()
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

    /// Reconnects when the connection was lost; a no-op otherwise. A statement sent without waiting whose outcome
    /// the lost connection never told (a confirm: run twice, it changes nothing more) is run again on the new one.
    func reconnectIfNeeded() throws(PostgresFailure) {
        guard broken || PQstatus(handle) != CONNECTION_OK else { return }
        PQreset(handle)
        prepared.removeAll()  // a new session knows none of them
        let unfinished = awaiting
        awaiting = nil
        broken = true  // until the session is set up
        guard PQstatus(handle) == CONNECTION_OK else {
            awaiting = unfinished
            throw connectionFailure()
        }
        do throws(PostgresFailure) {
            try onConnect(self)
            broken = false
            if let unfinished { try execute(unfinished.sql, unfinished.parameters, prepare: true) }
        } catch {
            if error.connectionLost { awaiting = unfinished }
            throw error
        }
    }

    /// Statements prepared on this session, by their text: the name each was prepared under.
    private var prepared: [String: String] = [:]

    /// A statement sent without waiting for its result (``send(_:_:)``): read before the next one is sent, and
    /// run again (waiting) should it have failed on a deadlock, which leaves no effect.
    private var awaiting: (sql: String, parameters: [PostgresParameter])?

    /// Runs one statement (no `;`-separated list) with `parameters` bound to `$1`, `$2`, ..., and returns its rows.
    /// With `prepare`, the statement is parsed and planned once per session and only executed after that (the
    /// store's claim and confirm, run once per batch). A statement sent earlier without waiting is finished first,
    /// and its failure, if it failed, is thrown here.
    @discardableResult
    func execute(_ sql: String, _ parameters: [PostgresParameter] = [], prepare: Bool = false)
        throws(PostgresFailure) -> PostgresResult {
        try finishSent()
        let name = prepare ? try preparedName(sql, parameters) : nil
        let result = withEncoded(parameters) { types, values, lengths, formats in
            if let name {
                return PQexecPrepared(handle, name, Int32(parameters.count), values, lengths, formats, 1)
            }
            return PQexecParams(handle, sql, Int32(parameters.count), types, values, lengths, formats, 1)
        }
        return try check(result)
    }

    /// Runs `sql`, one or several `;`-separated statements without parameters, in one round trip (`BEGIN; SET
    /// LOCAL ...`). A statement sent earlier without waiting is finished first.
    func executeSimple(_ sql: String) throws(PostgresFailure) {
        try finishSent()
        try check(PQexec(handle, sql))
    }

    /// Sends a prepared statement and returns without waiting for its result: the server runs it while the
    /// caller goes on, and the next call (``execute(_:_:prepare:)``, or ``finishSent()``) reads the outcome. Once
    /// sent, the statement runs even if this process ends before reading it.
    func send(_ sql: String, _ parameters: [PostgresParameter]) throws(PostgresFailure) {
        try finishSent()
        let name = try preparedName(sql, parameters)
        let sent = withEncoded(parameters) { _, values, lengths, formats in
            PQsendQueryPrepared(handle, name, Int32(parameters.count), values, lengths, formats, 1)
        }
        guard sent == 1 else {
            broken = true
            throw connectionFailure()
        }
        awaiting = (sql, parameters)
    }

    /// Reads the outcome of a statement sent without waiting, if any; throws its failure.
    func finishSent() throws(PostgresFailure) {
        guard let sent = awaiting else { return }
        awaiting = nil
        var failure: PostgresFailure?
        while let result = PQgetResult(handle) {
            do throws(PostgresFailure) {
                try check(result)
            } catch {
                failure = failure ?? error
            }
        }
        guard let failure else { return }
        // Its outcome is unknown: sent again once reconnected (``reconnectIfNeeded()``).
        if failure.connectionLost { awaiting = sent }
        guard failure.isTransient else { throw failure }
        for attempt in 1...3 {
            do throws(PostgresFailure) {
                try execute(sent.sql, sent.parameters, prepare: true)
                return
            } catch where error.isTransient && attempt < 3 {
                continue
            }
        }
    }

    /// The name `sql` is prepared under in this session, preparing it the first time.
    private func preparedName(_ sql: String, _ parameters: [PostgresParameter]) throws(PostgresFailure) -> String {
        if let known = prepared[sql] { return known }
        let name = "postback_verify_\(prepared.count + 1)"
        try check(PQprepare(handle, name, sql, Int32(parameters.count), parameters.map(\.typeOID)))
        prepared[sql] = name
        return name
    }

    /// Calls `body` with the parameters' types, values (binary), lengths and formats as libpq takes them.
    private func withEncoded<Value>(
        _ parameters: [PostgresParameter],
        _ body: ([UInt32], [UnsafePointer<CChar>?], [Int32], [Int32]) -> Value
    ) -> Value {
        let encoded = parameters.map(\.encoded)
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
        return body(parameters.map(\.typeOID), pointers, lengths, formats)
    }

    /// `result`, or the failure it reports (cleared).
    @discardableResult
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
