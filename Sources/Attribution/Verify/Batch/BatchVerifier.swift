/// The one way the command line verifies: batches of items in, each item's outcome and record out, in order.
///
/// Behind it, and nowhere else: the fast path for the usual postback (``FastPostbackPath``, JSON Lines only), the
/// general path (``AttributionVerifier``), the token cache that lets Apple's exact retries skip the ECDSA
/// (``VerifiedTokenCache``) and the three steps a batch goes through, split by cost so that a pipeline can give
/// each its own thread: ``prepare(_:)`` (JSON, base64url, header, key, digest; on the fast path also payload, rules
/// and the record), ``checkSignatures(_:)`` (the ECDSA, the batch's signatures checked together) and
/// ``complete(_:)`` (the general path's payload and rules, and records). ``finish(_:)`` runs the three on one
/// thread. Deduplication stays the caller's (a ``DeduplicationStore`` decides on ``VerifiedBatch/sighting(at:)``);
/// ``markDuplicate(_:at:of:content:)`` then words a duplicate's record, from what the item's outcome carries,
/// never verifying the item again.
@_spi(CommandLine) public struct BatchVerifier: Sendable {
    private let verifier: AttributionVerifier
    /// Nil when the fast path is off (text records, or asked off).
    private let fastPath: FastPostbackPath?
    /// Renders a general result as a record, on the thread that completes.
    private let render: @Sendable (VerificationResult, _ source: String, _ line: Int) -> [UInt8]

    /// How records are written.
    @_spi(CommandLine) @_spi(Stores) public enum Records: Sendable {
        /// JSON Lines (`JSONLinesRecord`), `explain` adding `"signed-string"`. With `fastPath`, the usual valid
        /// postback is verified and written by the fast path (the same bytes, in a fraction of the time); without,
        /// every item takes the general path (for comparing the two).
        case jsonLines(explain: Bool, fastPath: Bool)
        /// Records rendered by the caller from each result (the command line's text records).
        case rendered(@Sendable (VerificationResult, _ source: String, _ line: Int) -> [UInt8])
    }

    /// A verifier for `keyRing` under `policy` that writes `records`, with its own token cache: an exact repeat of
    /// a token that verified skips the ECDSA (its record is recomputed from the bytes, duplicate marking aside).
    @_spi(CommandLine) public init(keyRing: KeyRing, policy: VerificationPolicy, records: Records) {
        verifier = AttributionVerifier(keyRing: keyRing, policy: policy, cache: VerifiedTokenCache())
        switch records {
        case .jsonLines(let explain, let usesFastPath):
            fastPath = usesFastPath ? FastPostbackPath(verifier) : nil
            render = { JSONLinesRecord.render($0, source: $1, line: $2, explain: explain) }
        case .rendered(let render):
            fastPath = nil
            self.render = render
        }
    }

    /// From its parts: for tests that give the fast path and the general path verifiers of their own.
    init(
        verifier: AttributionVerifier, fastPath: FastPostbackPath?,
        render: @escaping @Sendable (VerificationResult, _ source: String, _ line: Int) -> [UInt8]
    ) {
        self.verifier = verifier
        self.fastPath = fastPath
        self.render = render
    }

    /// All three steps on one thread, each over the whole batch before the next, so the
    /// batch's signatures are checked together (one inversion for the batch: `ECPublicKey.areValidES256Signatures`).
    @_spi(CommandLine) @_spi(Stores) public func finish(_ batch: VerifiedBatch) {
        prepare(batch)
        checkSignatures(batch)
        complete(batch)
    }

    // MARK: - Split steps

    /// Step 1 (reader): the fast path's preparation where it applies, the general path's elsewhere.
    @_spi(CommandLine) @_spi(Stores) public func prepare(_ batch: VerifiedBatch) {
        batch.routes.reserveCapacity(batch.items.count)
        for item in batch.items {
            if let fastPath, case .bytes(let bytes) = item.content,
               let prepared = fastPath.prepare(bytes, source: item.source, line: item.line) {
                batch.routes.append(.fast(batch.fastPrepared.count))
                batch.fastPrepared.append(prepared)
            } else {
                batch.routes.append(.general(batch.generalPrepared.count))
                batch.generalPrepared.append(verifier.prepare(item))
            }
        }
    }

    /// Step 2 (worker): the ECDSA, nothing else; the fast path's items checked together in one batch, the general
    /// path's in another.
    @_spi(CommandLine) public func checkSignatures(_ batch: VerifiedBatch) {
        fastPath?.checkSignatures(&batch.fastPrepared)
        verifier.checkSignatures(&batch.generalPrepared)
    }

    /// Step 3 (writer): payloads, rules and records.
    @_spi(CommandLine) @_spi(Stores) public func complete(_ batch: VerifiedBatch) {
        batch.outcomes.reserveCapacity(batch.items.count)
        batch.records.reserveCapacity(batch.items.count)
        // By index, and the fast path's records moved out rather than copied: a valid item costs no reference
        // counting of its input or its prepared parts here (this step runs once per item on a busy core).
        for position in batch.items.indices {
            switch batch.routes[position] {
            case .fast(let index):
                if let fastPath, let (answer, record) = fastPath.takeRecord(from: &batch.fastPrepared[index]) {
                    batch.append(VerifiedBatch.Outcome(.fast(answer)), record: record)
                } else if let rejected = fastPath?.rejectedCheck(of: batch.fastPrepared[index]) {
                    // The signature failed the fast path's check: the general path words it, with that answer (no
                    // second ECDSA: a forgery costs one signature check).
                    let item = batch.items[position]
                    append(verifier.verify(item, rejected: rejected), of: item, to: batch)
                } else {
                    let item = batch.items[position]
                    append(verifier.verify(item), of: item, to: batch)
                }
            case .general(let index):
                append(verifier.complete(batch.generalPrepared[index]), of: batch.items[position], to: batch)
            }
        }
    }

    // MARK: - Duplicates

    /// The one marking of a duplicate (rules D1 and D2, worded by ``DuplicateMarking``): makes the item at
    /// `source`:`line`, whose record and outcome these are, a duplicate of `first` (D2 when `first` carries a
    /// fingerprint and `content`, this sighting's, differs), and rewrites its record to say so: a fast-path item's
    /// from the bytes of its valid record (``FastPostbackPath/duplicateRecord(_:of:source:line:marking:)``), a
    /// general one's from its result (``VerificationResult/markDuplicate(of:content:)``). Nothing is verified
    /// again. A batch's items (``PostbackPipeline``'s `mark(_:_:keepingTime:)`) and a received postback
    /// (``PostbackPipeline/markDuplicate(_:of:content:)``) are marked through it.
    /// - Returns: false, changing nothing, when the item is not a valid postback.
    @discardableResult
    func markDuplicate(
        _ record: inout [UInt8], _ outcome: inout VerifiedBatch.Outcome, source: String, line: Int,
        of first: DuplicateReference, content: ContentFingerprint?
    ) -> Bool {
        switch outcome.decision {
        case .fast(let answer):
            guard let fastPath else { return false }  // a fast answer comes from the fast path: never taken
            let marking = DuplicateMarking(subject: DuplicateMarking.postback(answer.postbackIdentifier),
                                           first: first) { content ?? answer.content }
            record = fastPath.duplicateRecord(record, of: answer, source: source, line: line, marking: marking)
            outcome = VerifiedBatch.Outcome(.fastDuplicate(marking))
        case .general(var result):
            result.markDuplicate(of: first, content: content)
            guard result.duplicateOf != nil else { return false }
            record = render(result, source, line)
            outcome = VerifiedBatch.Outcome(.general(result))
        case .fastDuplicate:
            return false
        }
        return true
    }

    /// The conversion facts of one item's decision and record.
    func conversionFacts(decision: VerifiedBatch.Outcome.Decision, record: [UInt8]) -> ConversionFacts? {
        switch decision {
        case .fast(let answer):
            fastPath?.conversionFacts(record: record, answer: answer)
        case .general(let result):
            ConversionFacts(result)
        case .fastDuplicate:
            nil
        }
    }

    /// The environment of the key that verified item `index`, when the item is valid (nil otherwise).
    @_spi(CommandLine) public func validEnvironment(_ batch: VerifiedBatch, at index: Int) -> KeyEnvironment? {
        switch batch.outcomes[index].decision {
        case .fast(let answer):
            fastPath?.keys[answer.key].trusted.environment
        case .general(let result):
            result.verdict == .valid ? result.environment : nil
        case .fastDuplicate:
            nil
        }
    }

    /// The environment of the key a fast answer's signature verified with.
    func environment(of answer: FastPostbackPath.Answer) -> KeyEnvironment? {
        fastPath?.keys[answer.key].trusted.environment
    }

    // MARK: - Helpers

    /// A general result and its record (rendered as if the item were not a duplicate).
    private func append(_ result: VerificationResult, of item: InputItem, to batch: VerifiedBatch) {
        batch.append(VerifiedBatch.Outcome(.general(result)), record: render(result, item.source, item.line))
    }
}
