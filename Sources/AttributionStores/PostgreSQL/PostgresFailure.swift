@_spi(Stores) import Attribution
/// A libpq call that did not succeed: what the server or libpq said, before ``PostgresStateDatabase`` says what it
/// means for the state. Messages never quote the connection string (see ``PostgresConnectionString``).
struct PostgresFailure: Error {
    /// The server's SQLSTATE (`23505`, `40P01`, ...); nil when the failure came from libpq or the connection.
    let sqlState: String?
    /// libpq's or the server's message, on one line, the password scrubbed.
    let message: String
    /// The connection is gone (server stopped or restarted, network down): the next call reconnects.
    let connectionLost: Bool

    init(sqlState: String? = nil, message: String, connectionLost: Bool = false) {
        self.sqlState = sqlState
        self.message = message
        self.connectionLost = connectionLost
    }

    /// A deadlock or serialisation failure: the statement had no effect, and running it again may succeed.
    var isTransient: Bool {
        sqlState == "40P01" || sqlState == "40001"
    }

    /// The server refused who we are or what we may do (wrong password, no such role or database, no privilege).
    var isAccessDenied: Bool {
        guard let sqlState else { return false }
        return sqlState.hasPrefix("28") || sqlState == "3D000" || sqlState == "42501"
    }
}
