import Foundation

/// What one store's owner knows of its lease, shared by the thread that claims and the heartbeat that renews on a
/// connection of its own: when it last *showed* a renewal (by the monotonic clock, never the wall clock), whether
/// a renewal found the lease had lapsed (claims may have been taken over meanwhile), and how many renewals failed.
///
/// A renewal counts from the instant its statement was sent, so the lease it shows lasts at least until that
/// instant plus the lease. An owner whose last shown renewal is older than the lease minus ``margin`` must renew
/// before it writes or confirms anything more from its claims (``isStale(at:)``).
@_spi(Stores) public final class LeaseRecord: @unchecked Sendable {
    // @unchecked: every stored variable is read and written with `lock` held.
    /// Guards every variable below.
    private let lock = NSLock()
    /// The lease.
    @_spi(CommandLine) @_spi(Stores) public let lease: Duration
    /// How long before the lease runs out an owner stops trusting it: a third of the lease.
    @_spi(CommandLine) @_spi(Stores) public let margin: Duration
    /// What the failure messages name (a path, a server; never a password).
    private let target: String
    /// The lease, in seconds, as given.
    private let leaseSeconds: Double
    /// When the last renewal shown was sent (nil before the first claim).
    private var lastRenewal: ContinuousClock.Instant?
    /// A renewal found the lease lapsed, and the owner has not checked its claims since.
    private var lapsedClaims = false
    /// Renewals that failed since the store opened.
    private var failures = 0
    /// The last renewal failed (a streak is told once).
    private var failing = false
    /// The owner holds claims (set by the claiming side).
    private var holding = false
    /// The store is closing.
    private var closed = false

    /// A record for a lease of `leaseSeconds`, of the store at `target`.
    @_spi(Stores) public init(leaseSeconds: Double, target: String) {
        lease = .milliseconds(max(1, Int64(leaseSeconds * 1000)))
        margin = lease / 3
        self.target = target
        self.leaseSeconds = leaseSeconds
    }

    /// How often the heartbeat renews: a sixth of the lease (at least 50 ms), so renewals stay at most a third
    /// of the lease apart even when one of them is late.
    @_spi(Stores) public var heartbeatInterval: Double {
        max(0.05, leaseSeconds / 6)
    }

    /// A renewal sent at `instant` succeeded (a heartbeat, or a claim that renewed in its transaction); `lapsed`
    /// when it found the lease had already run out, so that another owner may have taken claims over.
    @_spi(CommandLine) @_spi(Stores) public func renewed(at instant: ContinuousClock.Instant, lapsed: Bool = false) {
        lock.withLock {
            if lastRenewal.map({ $0 < instant }) ?? true { lastRenewal = instant }
            if lapsed { lapsedClaims = true }
            failing = false
        }
    }

    /// A renewal failed with `message`: counted, and told on standard error once per streak of failures (the
    /// message escaped to one line of plain text).
    @_spi(CommandLine) @_spi(Stores) public func failed(_ message: String) {
        let first = lock.withLock { () -> Bool in
            failures += 1
            defer { failing = true }
            return !failing
        }
        guard first else { return }
        let line = "postback-verify: cannot renew the lease on the claims in \(target) (retrying every "
            + "\(Int(heartbeatInterval * 1000)) ms; told once until a renewal succeeds): "
            + "\(TerminalText.escaped(message))\n"
        FileHandle.standardError.write(Data(line.utf8))
    }

    /// Renews the lease by `renewal` (a statement on the store's renewal connection, under its lock; true when it
    /// found the lease lapsed) when claims are held, or, `forced`, in any case until the store closes, and records
    /// the outcome (``renewed(at:lapsed:)`` or ``failed(_:)``).
    /// - Parameters:
    ///   - forced: renew even without claims (an owner about to claim or confirm with a stale lease).
    ///   - renewal: the renewal.
    ///   - describing: a failure's message.
    /// - Returns: the failure's message, or nil when it renewed or had nothing to renew.
    @discardableResult
    @_spi(Stores) public func renew<Failure: Error>(forced: Bool, by renewal: () throws(Failure) -> Bool,
                                       describing: (Failure) -> String) -> String? {
        guard forced ? !isClosed : holdsClaims else { return nil }
        let started = ContinuousClock.now
        do throws(Failure) {
            renewed(at: started, lapsed: try renewal())
            return nil
        } catch {
            let message = describing(error)
            failed(message)
            return message
        }
    }

    /// Before an owner's claims are written or confirmed: renews at once by `renew` (``renew(forced:by:describing:)``
    /// forced) when the last renewal shown is older than the lease minus the margin, and after a renewal that found
    /// the lease lapsed runs `checkClaims` (finding the claims other owners took over meanwhile).
    /// - Parameters:
    ///   - renew: a forced renewal; the failure's message, or nil.
    ///   - checkClaims: the store's check of its claims after a lapse.
    /// - Throws: ``AttributionError`` (`unavailable`) when the lease could not be renewed: nothing more is to be
    ///   written or confirmed from the claims until it is; what `checkClaims` throws.
    @_spi(CommandLine) @_spi(Stores)
    public func keep(renewing renew: () -> String?, checkingClaims checkClaims: () throws(AttributionError) -> Void)
        throws(AttributionError) {
        if isStale(), let failure = renew() {
            throw AttributionError(.unavailable, "cannot renew the lease on the claims in \(target) (\(failure)): "
                                   + "nothing more is written or confirmed from them until it is")
        }
        if takeLapse() { try checkClaims() }
    }

    /// How many renewals failed since the store opened (a receiver exports it as a metric).
    @_spi(Stores) public var failureCount: Int { lock.withLock { failures } }

    /// True when the last renewal shown is older than the lease minus the margin at `now`: the owner renews before
    /// it writes or confirms more from its claims. False before its first claim (it holds nothing).
    func isStale(at now: ContinuousClock.Instant = .now) -> Bool {
        lock.withLock { lastRenewal.map { now - $0 > lease - margin } ?? false }
    }

    /// Whether a renewal found the lease lapsed since the owner last checked its claims; clears it.
    func takeLapse() -> Bool {
        lock.withLock {
            defer { lapsedClaims = false }
            return lapsedClaims
        }
    }

    /// Whether the owner holds claims (the heartbeat renews only then); set by the claiming side.
    @_spi(Stores) public var holdsClaims: Bool {
        get { lock.withLock { holding && !closed } }
        set { lock.withLock { holding = newValue } }
    }

    /// True once the store is closing.
    @_spi(Stores) public var isClosed: Bool { lock.withLock { closed } }

    /// The store is closing: the heartbeat renews nothing more.
    @_spi(CommandLine) @_spi(Stores) public func close() {
        lock.withLock { closed = true }
    }
}
