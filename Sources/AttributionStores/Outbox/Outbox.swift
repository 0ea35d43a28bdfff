@_spi(Stores) import Attribution
import Dispatch

/// The deliveries a receiver owes its destinations, kept beside the stored postbacks (`SQLiteOutbox` in a
/// SQLite archive, `PostgresOutbox` in a PostgreSQL state): what the relay takes work from and records outcomes
/// in, and what `postback-verify outbox` lists and re-queues.
///
/// A delivery is handed to one holder at a time, under a lease:
/// ``claim(destination:limit:holder:leaseMilliseconds:horizonMilliseconds:)`` takes due rows no live lease covers
/// (PostgreSQL: `FOR UPDATE SKIP LOCKED`, so receivers sharing the state never take the same row); a holder that dies
/// hands them back when the lease runs out. A row owed longer than the horizon is never attempted again: it is
/// marked dead, with its last answer.
@_spi(CommandLine) @_spi(Servers) public protocol Outbox: Sendable {
    /// Takes at most `limit` due deliveries of `destination` for `holder`, leased for `leaseMilliseconds`, never one
    /// owed longer than `horizonMilliseconds`; first marks those dead (at most once a second per destination and
    /// store: a scan of the owed rows that a claim per batch must not pay).
    /// - Parameters:
    ///   - destination: the destination's name.
    ///   - limit: most deliveries taken.
    ///   - holder: the taking receiver's id (random per process).
    ///   - leaseMilliseconds: how long other holders keep off them.
    ///   - horizonMilliseconds: how long a delivery may stay owed.
    /// - Returns: the deliveries, oldest due first.
    /// - Throws: ``/Attribution/AttributionError`` when the store fails; nothing was taken then.
    func claim(destination: String, limit: Int, holder: Int64, leaseMilliseconds: Int64,
               horizonMilliseconds: Int64) throws(AttributionError) -> [OwedDelivery]

    /// Records what became of deliveries `holder` took; a retry whose next attempt would fall past the horizon is
    /// marked dead instead. A delivered row is deleted whoever holds it now.
    /// - Parameters:
    ///   - outcomes: one per attempt.
    ///   - holder: the receiver that made the attempts.
    ///   - horizonMilliseconds: how long a delivery may stay owed.
    /// - Throws: ``/Attribution/AttributionError`` when the store fails; nothing was recorded then.
    func record(_ outcomes: [DeliveryOutcome], holder: Int64, horizonMilliseconds: Int64) throws(AttributionError)

    /// Hands back deliveries `holder` took and did not attempt (a relay stopping): due again at once for any holder,
    /// their attempt not counted. Rows another holder has taken since are left alone.
    /// - Parameters:
    ///   - ids: the deliveries' ids.
    ///   - holder: the receiver that took them.
    /// - Throws: ``/Attribution/AttributionError`` when the store fails; their leases give them back then.
    func release(_ ids: [Int64], holder: Int64) throws(AttributionError)

    /// How far behind each destination with owed deliveries is.
    /// - Returns: by destination name.
    /// - Throws: ``/Attribution/AttributionError`` when the store fails.
    func backlog() throws(AttributionError) -> [String: OutboxBacklog]

    /// The deliveries with status `dead` (or every one, owed too, when `deadOnly` is false), in id order.
    /// - Parameter deadOnly: only the dead ones.
    /// - Returns: the rows.
    /// - Throws: ``/Attribution/AttributionError`` when the store fails.
    func entries(deadOnly: Bool) throws(AttributionError) -> [OutboxEntry]

    /// Makes dead deliveries owed again, due now, their horizon counted from now: the one `id`, or every dead one
    /// when `id` is nil.
    /// - Parameter id: the row, or nil for all.
    /// - Returns: how many were re-queued.
    /// - Throws: ``/Attribution/AttributionError`` when the store fails.
    func requeue(_ id: Int64?) throws(AttributionError) -> Int
}

/// What a delivery's `answer` column says when its horizon passed: one phrase for both stores.
enum OutboxAnswers {
    static let horizonPassed = "gave up: owed longer than the horizon"
}

/// When an outbox last marked each destination's expired deliveries dead: that scan of every owed row runs at most
/// once a second per destination (and horizon), not with every claim (a claim never takes an expired row either way).
struct OutboxExpiry {
    private var last: [String: (horizon: Int64, at: Int64)] = [:]

    /// This process's monotonic clock in milliseconds.
    static func now() -> Int64 { Int64(DispatchTime.now().uptimeNanoseconds / 1_000_000) }

    /// Whether `destination`'s rows expired under `horizon` are to be marked now (noting that they are): a second
    /// after the last marking, at once when the horizon changed or the clock went back.
    mutating func isDue(_ destination: String, horizon: Int64, now: Int64 = OutboxExpiry.now()) -> Bool {
        if let previous = last[destination], previous.horizon == horizon, now >= previous.at,
           now - previous.at < 1_000 {
            return false
        }
        last[destination] = (horizon, now)
        return true
    }
}
