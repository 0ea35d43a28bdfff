import Foundation

/// Verifies received postbacks and counts each once: the one way in for a server (the receiver, yours) and the
/// command line alike.
///
/// - **Verify** (`verify(_:)`): a batch of received bodies, each with its source label, into one
///   ``VerifiedPostback`` per body, in order. The usual valid AdAttributionKit postback takes the fast path (one
///   pass over its bytes, its record written as it is read); everything else the general path
///   (``AttributionVerifier``). The batch's signatures are checked together, and a token cache lets exact repeats
///   (Apple's retries) skip the ECDSA. The command line runs the same steps on threads of its own.
/// - **Count** (rule D1) through a ``ClaimLedger`` over a ``DeduplicationStore``: claim the batch's
///   ``VerifiedPostback/sighting``s, mark the duplicates (``markDuplicate(_:of:content:)``), write or store the
///   records, then confirm the first sightings (or release them if storing failed; a release that fails blocks
///   the ledger until it succeeds). `count(_:through:at:store:)` does the three.
///
/// ```swift
/// let pipeline = PostbackPipeline(keyRing: KeyRing())
/// let ledger = ClaimLedger(store: MemoryDeduplicationStore())  // one per store, shared by every request
/// let verified = pipeline.verify([(body, source: requestID)])
/// let counted = try pipeline.count(verified, through: ledger, at: Date()) { postbacks in
///     for postback in postbacks { try save(postback.record) }  // stored before the claims are confirmed
/// }
/// ```
public struct PostbackPipeline: Sendable {
    let verifier: BatchVerifier
    /// The conversion-value schema valid postbacks are decoded with, once, as they are verified.
    let schema: ConversionSchema?

    /// A pipeline verifying against `keyRing` under `policy`, writing JSON Lines records (`explain` adds the
    /// SKAdNetwork signed string). `fastPath: false` sends every item the general path (to compare the two). With
    /// `schema`, each valid postback is decoded as it is verified, on either path
    /// (``VerifiedPostback/decoded``): the one place conversion values are decoded.
    /// - Parameters:
    ///   - keyRing: the trusted keys.
    ///   - policy: strictness and the impression clock.
    ///   - explain: add each SKAdNetwork record's signed string.
    ///   - fastPath: false to send every item the general path.
    ///   - schema: what conversion values mean (docs/schema.md); nil decodes nothing.
    public init(keyRing: KeyRing, policy: VerificationPolicy = VerificationPolicy(), explain: Bool = false,
                fastPath: Bool = true, schema: ConversionSchema? = nil) {
        verifier = BatchVerifier(keyRing: keyRing, policy: policy,
                                 records: .jsonLines(explain: explain, fastPath: fastPath))
        self.schema = schema
    }

    /// About `count` items are coming (the command line's guess from its files' sizes): when that is enough for
    /// tables of multiples to pay, G's table starts building now, beside the rest of start-up
    /// (``P256KeyTables/anticipate(signatures:)``).
    @_spi(CommandLine) public static func anticipate(items count: Int) {
        P256KeyTables.shared.anticipate(signatures: count)
    }

    /// Verifies `items` (bodies, each with the label its record names; line 1), one result each, in order; with a
    /// schema, valid postbacks are decoded as of now (a server that knows when each body arrived gives it:
    /// `verify(_:)` over `(body:source:arrival:)` items).
    /// - Parameter items: the received bodies, each with its source label (a request id, say).
    /// - Returns: one ``VerifiedPostback`` per item, in order.
    public func verify(_ items: [(body: [UInt8], source: String)]) -> [VerifiedPostback] {
        let now = Date()
        return verify(items.map { (body: $0.body, source: $0.source, arrival: now) })
    }

    /// Verifies `items` (bodies, each with the label its record names, line 1, and when it arrived), one result
    /// each, in order; with a schema, each valid postback is decoded as of its arrival (which picks the app's
    /// schema and dated campaigns, and bounds the install times).
    /// - Parameter items: the received bodies, each with its source label (a request id, say) and its arrival.
    /// - Returns: one ``VerifiedPostback`` per item, in order, its ``VerifiedPostback/decoded`` filled in on
    ///   either path.
    public func verify(_ items: [(body: [UInt8], source: String, arrival: Date)]) -> [VerifiedPostback] {
        let batch = VerifiedBatch(items: items.map {
            InputItem(source: $0.source, line: 1, content: .bytes(ArraySlice($0.body)))
        })
        verifier.finish(batch)
        return batch.items.indices.map { index in
            let decision = batch.outcomes[index].decision
            var answer: FastPostbackPath.Answer?
            if case .fast(let fast) = decision { answer = fast }
            let conversion = conversion(decision: decision, record: batch.records[index],
                                        arrival: items[index].arrival)
            return VerifiedPostback(
                source: batch.items[index].source, line: batch.items[index].line, record: batch.records[index],
                outcome: batch.outcomes[index], answer: answer,
                answerEnvironment: answer.flatMap { verifier.environment(of: $0) },
                facts: conversion?.facts, decoded: conversion?.decoded)
        }
    }

    /// A valid item's conversion facts and, with a schema, its decoding as of `arrival`: the one place the pipeline
    /// (and so the receiver and the command line) decodes a conversion value. Nil for anything but a valid
    /// postback.
    func conversion(decision: VerifiedBatch.Outcome.Decision, record: [UInt8], arrival: Date)
        -> (facts: ConversionFacts, decoded: DecodedConversion?)? {
        guard let facts = verifier.conversionFacts(decision: decision, record: record) else { return nil }
        return (facts, schema?.decode(facts, arrival: arrival))
    }

    /// Marks a valid postback a duplicate of `first` (rule D1; D2 when `first` carries a fingerprint and
    /// `content`, this sighting's, differs) and rewrites its record to say so, verifying nothing again. Does
    /// nothing to an item that is not a valid postback.
    /// - Parameters:
    ///   - postback: the postback to mark, in place.
    ///   - first: where and when its first sighting was, as the store answered.
    ///   - content: this sighting's fingerprint, compared with `first`'s for D2.
    public func markDuplicate(_ postback: inout VerifiedPostback, of first: DuplicateReference,
                              content: ContentFingerprint? = nil) {
        let (source, line) = (postback.source, postback.line)
        if verifier.markDuplicate(&postback.record, &postback.outcome, source: source, line: line, of: first,
                                  content: content) {
            postback.facts = nil
            postback.decoded = nil
        }
    }

    /// Counts `postbacks` once through `ledger` (claim, store, confirm): claims their sightings at `time` (and has
    /// the store show that it still holds the first sightings' claims, ``DeduplicationStore/reaffirm(_:)``: one
    /// another owner took over while this owner's lease had lapsed is a duplicate of that owner's record), marks
    /// the duplicates, runs `store` with the final postbacks (write or store their records there), then confirms
    /// the first sightings. If `store` throws, their claims are released and its error rethrown; if that release
    /// fails too, the ledger keeps them and is blocked (``ClaimLedger/isBlocked``): every later count throws
    /// ``AttributionError`` (``AttributionError/Code/unavailable``) until they are released, so Apple's retry is
    /// refused (answer 500) rather than answered a duplicate of a record nobody stored. A group with no valid
    /// postback (forgeries) claims nothing: `store` runs without the store being asked, unless the ledger is
    /// blocked and still cannot release.
    ///
    /// Safe to call concurrently with one shared `ledger` (a server's requests): the ledger takes its lock for
    /// each claim, confirmation and release, never while `store` runs. A postback whose first sighting another
    /// count is storing at that moment (Apple's retry racing its first delivery) is refused with
    /// ``AttributionError/Code/unavailable`` (answer 500: it is sent again) rather than answered a duplicate of a
    /// record whose storing may still fail.
    /// - Parameters:
    ///   - postbacks: the verified postbacks of a group, in order.
    ///   - ledger: the claims of this store's owner, shared by every call (make one per store at start-up).
    ///   - time: when they were seen (a request's arrival).
    ///   - store: writes or stores the marked postbacks' records.
    /// - Returns: what `store` returned.
    /// - Throws: ``AttributionError`` (``AttributionError/Code/unavailable``) while the ledger is blocked or another
    ///   count is storing one of these postbacks' first sighting, what the
    ///   store's claim, reaffirm (after the release) or confirm throws (a failed confirmation is kept and goes with
    ///   the next claim: the records are stored, so a retry is their duplicate), or what `store` threw (after the
    ///   release).
    public func count<Outcome>(
        _ postbacks: [VerifiedPostback], through ledger: ClaimLedger, at time: Date,
        store: ([VerifiedPostback]) throws -> Outcome
    ) throws -> Outcome {
        let sighted = Sightings(postbacks)
        guard !sighted.sightings.isEmpty else {
            try ledger.releaseUnreleased()
            return try store(postbacks)
        }
        let (answers, claimed) = try Self.claimReaffirmed(sighted.sightings, through: ledger, at: time)
        var marked = postbacks
        mark(&marked, sighted, answers: answers)
        let outcome: Outcome
        do {
            outcome = try store(marked)
        } catch {
            ledger.release(claimed)
            throw error
        }
        ledger.stored(claimed)
        try ledger.confirmStored()
        return outcome
    }

    /// `count(_:through:at:store:)` for async code (a server's request handlers): the ledger's calls run on a
    /// dispatch queue of their own, off Swift's cooperative pool, and `store` is awaited. Safe to call
    /// concurrently with one shared `ledger`, as the synchronous count is.
    /// (`verify(_:)` is computation only, no waiting: call it from a task as it is.)
    /// - Parameters:
    ///   - postbacks: the verified postbacks of a group, in order.
    ///   - ledger: the claims of this store's owner, shared by every call (make one per store at start-up).
    ///   - time: when they were seen (a request's arrival).
    ///   - store: writes or stores the marked postbacks' records.
    /// - Returns: what `store` returned.
    /// - Throws: what the synchronous count throws: ``AttributionError`` (``AttributionError/Code/unavailable``)
    ///   while the ledger is blocked or another count is storing one of these first sightings, what the store's
    ///   claim, reaffirm or confirm throws, or what `store` threw (after the release).
    public func count<Outcome>(
        _ postbacks: [VerifiedPostback], through ledger: ClaimLedger, at time: Date,
        store: ([VerifiedPostback]) async throws -> Outcome
    ) async throws -> Outcome {
        let sighted = Sightings(postbacks)
        guard !sighted.sightings.isEmpty else {
            try await BlockingStoreCall.run { try ledger.releaseUnreleased() }
            return try await store(postbacks)
        }
        let sightings = sighted.sightings
        let (answers, claimed) = try await BlockingStoreCall.run {
            try Self.claimReaffirmed(sightings, through: ledger, at: time)
        }
        var marked = postbacks
        mark(&marked, sighted, answers: answers)
        let outcome: Outcome
        do {
            outcome = try await store(marked)
        } catch {
            try? await BlockingStoreCall.run { ledger.release(claimed) }
            throw error
        }
        try await BlockingStoreCall.run {
            ledger.stored(claimed)
            try ledger.confirmStored()
        }
        return outcome
    }

    /// Step one of a count: claims `sightings` through `ledger`, then has the store show that it still holds the
    /// first sightings' claims before their records are stored (``DeduplicationStore/reaffirm(_:)``: a clock read
    /// while its lease was renewed lately, as the command line does before it writes). A claim another owner took
    /// over while this owner's lease had lapsed answers a duplicate of that owner's record. When the store cannot
    /// show it, the claims are released and its error rethrown: nothing is stored from them.
    private static func claimReaffirmed(_ sightings: [PostbackSighting], through ledger: ClaimLedger, at time: Date)
        throws -> (answers: [DeduplicationAnswer], claimed: [ExactString]) {
        var answers = try ledger.claimForStoring(sightings, at: time)
        let claimed = firstSightings(sightings, answers)
        guard !claimed.isEmpty else { return (answers, []) }
        let lost: [ExactString: DuplicateReference]
        do {
            lost = try ledger.store.reaffirm(claimed)
        } catch {
            ledger.release(claimed)
            throw error
        }
        guard !lost.isEmpty else { return (answers, claimed) }
        for index in answers.indices where answers[index] == .firstSeen {
            if let first = lost[sightings[index].key] { answers[index] = .duplicate(of: first) }
        }
        ledger.notBeingStored(Array(lost.keys))
        return (answers, firstSightings(sightings, answers))
    }

    /// The keys the store claimed for this owner: those of the sightings answered ``DeduplicationAnswer/firstSeen``.
    private static func firstSightings(_ sightings: [PostbackSighting], _ answers: [DeduplicationAnswer])
        -> [ExactString] {
        zip(sightings, answers).compactMap { $1 == .firstSeen ? $0.key : nil }
    }

    /// The valid postbacks among a batch, as a store sights them, with their places in the batch.
    @_spi(Servers) public struct Sightings: Sendable {
        /// The sightings of the batch's valid postbacks, in batch order.
        public private(set) var sightings: [PostbackSighting] = []
        /// The index in the batch of each sighting's postback.
        public private(set) var indices: [Int] = []

        /// The sightings of `postbacks`, skipping those that are not valid postbacks.
        /// - Parameter postbacks: a verified batch, in order.
        public init(_ postbacks: [VerifiedPostback]) {
            for (index, postback) in postbacks.enumerated() {
                if let sighting = postback.sighting {
                    sightings.append(sighting)
                    indices.append(index)
                }
            }
        }
    }

    /// Marks the duplicates among `postbacks` as a store answered their `sighted` sightings (for a store whose
    /// claim takes its answers to a closure, as PostgreSQL's one-transaction claim-and-archive does).
    /// - Parameters:
    ///   - postbacks: the batch, marked in place.
    ///   - sighted: the batch's sightings, as claimed.
    ///   - answers: the store's answers, one per sighting, in order.
    @_spi(Servers)
    public func mark(_ postbacks: inout [VerifiedPostback], _ sighted: Sightings, answers: [DeduplicationAnswer]) {
        for ((sighting, index), answer) in zip(zip(sighted.sightings, sighted.indices), answers) {
            if let first = answer.duplicateOf {
                markDuplicate(&postbacks[index], of: first, content: sighting.content)
            }
        }
    }
}
