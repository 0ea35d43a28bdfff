/// A delivery an outbox handed to one receiver under a lease: the stored postback and what to send it as. The
/// lease keeps every other receiver off it until the holder records its outcome or the lease runs out (the holder
/// died), when the delivery is owed again.
@_spi(CommandLine) @_spi(Servers) public struct OwedDelivery: Sendable {
    /// The outbox row's id (what `postback-verify outbox --requeue` names).
    public let id: Int64
    /// The destination's name.
    public let destination: String
    /// Attempts made so far, this one included.
    public let attempts: Int
    /// When the delivery became owed (the postback stored), in milliseconds since 1970, by the outbox's clock.
    public let owedSince: Int64
    /// True when an earlier holder's lease ran out with this delivery in its hands (a receiver that died or lost
    /// its database mid-delivery): the destination may have received it already.
    public let wasReclaimed: Bool
    /// The stored request's id (the record's `source`).
    public let request: String
    /// The route it arrived on (`appattribution`, `skadnetwork`).
    public let route: String
    /// The deduplication key's UTF-8 bytes, when it has one.
    public let key: [UInt8]?
    /// The bytes Apple sent, exactly.
    public let body: [UInt8]
    /// The JSON Lines record of its verdict.
    public let record: [UInt8]
}

/// What became of one attempt, as its holder records it in the outbox.
@_spi(CommandLine) @_spi(Servers) public struct DeliveryOutcome: Sendable {
    /// The three fates of an attempt.
    @_spi(CommandLine) @_spi(Servers) public enum Fate: Sendable, Equatable {
        /// The destination answered 2xx: the row is deleted.
        case delivered
        /// Try again no sooner than this many milliseconds from now; past the horizon the row is dead instead.
        case retry(afterMilliseconds: Int64)
        /// Never again (a 4xx other than 408 and 429): the row is kept as dead, with the answer.
        case dead
    }

    /// The outbox row's id.
    public let id: Int64
    /// What happened to it.
    public let fate: Fate
    /// The destination's answer, or why there was none, kept on the row (at most 500 bytes are kept).
    public let answer: String

    /// An outcome for the delivery `id`.
    /// - Parameters:
    ///   - id: the outbox row's id.
    ///   - fate: what happened.
    ///   - answer: the destination's answer (status and the start of its body) or the transport's error.
    public init(id: Int64, fate: Fate, answer: String) {
        self.id = id
        self.fate = fate
        self.answer = String(decoding: answer.utf8.prefix(500), as: UTF8.self)
    }
}

/// A delivery as `postback-verify outbox` lists it.
@_spi(CommandLine) @_spi(Servers) public struct OutboxEntry: Sendable, Equatable {
    /// The outbox row's id.
    public let id: Int64
    /// The destination's name.
    public let destination: String
    /// `owed` or `dead`.
    public let status: String
    /// Attempts made.
    public let attempts: Int
    /// When it became owed, in milliseconds since 1970.
    public let owedSince: Int64
    /// The last answer, when there was an attempt.
    public let answer: String?
    /// The stored request's id.
    public let request: String

    @_spi(CommandLine)
    public init(id: Int64, destination: String, status: String, attempts: Int, owedSince: Int64, answer: String?,
                 request: String) {
        self.id = id
        self.destination = destination
        self.status = status
        self.attempts = attempts
        self.owedSince = owedSince
        self.answer = answer
        self.request = request
    }
}

/// How far behind a destination is: the deliveries owed and the oldest one's age.
@_spi(CommandLine) @_spi(Servers) public struct OutboxBacklog: Sendable, Equatable {
    /// Deliveries owed (not dead).
    public let owed: Int
    /// When the oldest owed delivery became owed (milliseconds since 1970), nil when none is owed.
    public let oldestOwedSince: Int64?
}
