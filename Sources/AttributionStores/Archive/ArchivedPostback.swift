@_spi(Stores) import Attribution

/// One received postback as an archive keeps it: when and where it arrived, its verdict, the bytes received and
/// its JSON Lines record. A receiver stores one per request it answers (`SQLiteReceivedArchive`, or with a
/// PostgreSQL state ``PostgreSQLDeduplicationStore/claim(_:at:synchronousCommit:owing:archiving:)``);
/// `postback-verify export` reads them.
@_spi(CommandLine) @_spi(Servers) public struct ArchivedPostback: Sendable, Equatable {
    /// What ``body`` holds.
    @_spi(CommandLine) @_spi(Servers) public enum Kept: String, Sendable {
        /// The bytes received, exactly.
        case body
        /// A changed-content duplicate over the receiver's invalid quota: its content fingerprint and the unsigned
        /// members that differ from its first sighting's, as JSON.
        case differences
    }

    /// When the request arrived, in milliseconds since 1970 (UTC).
    public var received: Int64
    /// The request's id (the record's `source`).
    public var request: String
    /// The route it arrived on (`appattribution`, `skadnetwork`).
    public var route: String
    /// `valid` or `invalid`, as in the record.
    public var verdict: String
    /// The first error's code, for an invalid postback.
    public var code: String?
    /// The deduplication key's UTF-8 bytes, for a postback that has one.
    public var key: [UInt8]?
    /// The bytes received, or what ``kept`` says stands for them.
    public var body: [UInt8]
    /// The JSON Lines record (one JSON object, no line end).
    public var record: [UInt8]
    /// What ``body`` holds: the bytes received, or a duplicate's differences.
    public var kept: Kept

    /// A row with these fields.
    /// - Parameters:
    ///   - received: when the request arrived, in milliseconds since 1970.
    ///   - request: the request's id.
    ///   - route: the route it arrived on.
    ///   - verdict: `valid` or `invalid`.
    ///   - code: the first error's code, for an invalid postback.
    ///   - key: the deduplication key's UTF-8 bytes, when it has one.
    ///   - body: the bytes received (or the differences, with `kept` `.differences`).
    ///   - record: the JSON Lines record.
    ///   - kept: what `body` holds; the bytes received by default.
    public init(received: Int64, request: String, route: String, verdict: String, code: String?, key: [UInt8]?,
                body: [UInt8], record: [UInt8], kept: Kept = .body) {
        self.received = received
        self.request = request
        self.route = route
        self.verdict = verdict
        self.code = code
        self.key = key
        self.body = body
        self.record = record
        self.kept = kept
    }

    /// Equal when every field is, strings by their UTF-8 bytes (never by canonical equivalence).
    /// - Parameters:
    ///   - left: a row.
    ///   - right: another row.
    /// - Returns: true when every field is equal.
    public static func == (left: ArchivedPostback, right: ArchivedPostback) -> Bool {
        func same(_ a: String?, _ b: String?) -> Bool {
            switch (a, b) {
            case (nil, nil): true
            case (let a?, let b?): a.utf8.elementsEqual(b.utf8)
            default: false
            }
        }
        return left.received == right.received && same(left.request, right.request) && same(left.route, right.route)
            && same(left.verdict, right.verdict) && same(left.code, right.code) && left.key == right.key
            && left.body == right.body && left.record == right.record && left.kept == right.kept
    }
}
