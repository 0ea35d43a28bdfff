/// Where verified postbacks go before they are answered: a group at a time (group commit).
protocol PostbackSink: Sendable {
    /// Deduplicates and durably stores `group`, in order, and returns each one's fate (``SinkOutcome``): stored
    /// with its final result (a retry of a postback stored earlier marked duplicate), or left out by the invalid
    /// quota. Throws when the group could not be stored: then none of it counts as stored or seen.
    func store(_ group: [ReceivedPostback]) async throws -> [SinkOutcome]

    /// Finishes what `store` left for later (confirmations), once no more groups come: before the receiver exits.
    func finish() async

    /// Throws when the store cannot answer now (its database down, its file unreadable): `GET /readyz` is then
    /// 503. Blocks for one round trip at most; called off the cooperative pool, under a deadline.
    func probe() throws

    /// How many renewals of the deduplication state's lease failed since the receiver started (each streak also
    /// told on standard error by the store): `postback_receiver_lease_renewal_failures_total`.
    var leaseRenewalFailures: Int { get }
}

extension PostbackSink {
    func finish() async {}

    func probe() throws {}

    var leaseRenewalFailures: Int { 0 }
}

/// What became of one postback given to a ``PostbackSink``.
enum SinkOutcome: Sendable {
    /// Stored (durably, for a durable sink) with this final verdict.
    case stored(ReceivedPostback)
    /// Not stored: an invalid body over the hourly quota, proven worthless (counted in metrics only; 200).
    case overQuota(ReceivedPostback)
    /// Not stored: an invalid body over the hourly quota that could still be genuine; answered 503, so that Apple
    /// sends it again.
    case retryLater(ReceivedPostback)

    var postback: ReceivedPostback {
        switch self {
        case .stored(let postback), .overQuota(let postback), .retryLater(let postback): postback
        }
    }
}

/// Stores nothing (`--no-storage`, for benchmarks): every postback is answered as the verifier judged it, without
/// deduplication or a row. Never in production: a 200 tells Apple not to send the postback again.
struct DiscardingSink: PostbackSink {
    func store(_ group: [ReceivedPostback]) async throws -> [SinkOutcome] {
        group.map { .stored($0) }
    }
}
