import Foundation

/// The same pipeline for a caller that runs its steps on threads of its own and writes the records itself: the
/// command line's reader, workers and writer. It verifies with ``steps`` (prepare, check signatures, complete; or
/// finish), counts with ``claim(_:through:at:renaming:)`` and ``mark(_:_:keepingTime:)``, and keeps its claims in
/// a ``ClaimLedger`` until its records are stored: the steps `verify(_:)` and
/// `count(_:through:at:store:)` run.
extension PostbackPipeline {
    /// A pipeline writing `records` (JSON Lines, or the command line's text records), decoding valid postbacks
    /// with `schema` when given.
    @_spi(CommandLine) public init(keyRing: KeyRing, policy: VerificationPolicy, records: BatchVerifier.Records,
                 schema: ConversionSchema? = nil) {
        verifier = BatchVerifier(keyRing: keyRing, policy: policy, records: records)
        self.schema = schema
    }

    /// Item `index` of a verified (and marked) batch: its conversion facts when it is a valid postback and, with
    /// the pipeline's schema, its decoding as of `arrival` (the command line's run start), as
    /// `verify(_:)` over `(body:source:arrival:)` items fills in ``VerifiedPostback/decoded``. Nil for anything but
    /// a valid postback (a duplicate included).
    @_spi(CommandLine) public func conversion(_ batch: VerifiedBatch, at index: Int, arrival: Date)
        -> (facts: ConversionFacts, decoded: DecodedConversion?)? {
        conversion(decision: batch.outcomes[index].decision, record: batch.records[index], arrival: arrival)
    }

    /// The verification steps `verify(_:)` runs on one thread, for a caller that runs them
    /// on several.
    @_spi(CommandLine) @_spi(Stores) public var steps: BatchVerifier { verifier }

    /// What rule D1 answered for one item of a claimed batch.
    @_spi(CommandLine) public enum BatchAnswer: Sendable {
        /// Not a valid postback: nothing was claimed.
        case none
        /// The first sighting: its key is claimed, to confirm once its record is stored
        /// (``ClaimLedger/written(_:through:)``).
        case first(ExactString)
        /// A repeat of `first`; `content` is this sighting's fingerprint (for D2).
        case duplicate(DuplicateReference, content: ContentFingerprint?)
    }

    /// Step one of counting for batches: claims the valid postbacks of `batches` through `ledger` at `time` in one
    /// call (which also confirms the claims whose records are stored, where the store can), and answers each item
    /// of each batch. `renaming` gives the source a sighting is remembered by instead of its own (nil keeps it).
    @_spi(CommandLine) @_spi(Stores) public func claim(
        _ batches: [VerifiedBatch], through ledger: ClaimLedger, at time: Date,
        renaming: (String) -> String? = { _ in nil }
    ) throws -> [[BatchAnswer]] {
        var sightings: [PostbackSighting] = []
        var positions: [(batch: Int, item: Int)] = []
        for (number, batch) in batches.enumerated() {
            for index in batch.items.indices {
                guard var sighting = batch.sighting(at: index) else { continue }
                if let source = renaming(sighting.source) {
                    sighting = PostbackSighting(key: sighting.key, source: source, line: sighting.line,
                                                content: sighting.content)
                }
                sightings.append(sighting)
                positions.append((number, index))
            }
        }
        var answers = batches.map { [BatchAnswer](repeating: .none, count: $0.items.count) }
        let claimed = try ledger.claim(sightings, at: time)
        for (position, (sighting, answer)) in zip(positions, zip(sightings, claimed)) {
            answers[position.batch][position.item] = answer.duplicateOf.map {
                .duplicate($0, content: sighting.content)
            } ?? .first(sighting.key)
        }
        return answers
    }

    /// Step two, just before a claimed batch's records are written: `answers` (its answers from
    /// ``claim(_:through:at:renaming:)``) once `ledger`'s store has shown that it still holds their claims
    /// (``DeduplicationStore/reaffirm(_:)``: a clock read while its lease was renewed lately). A claim another
    /// owner took over while this owner's lease had lapsed makes its item a duplicate of that owner's record.
    /// Throws when the lease could not be renewed: write nothing more from these claims then.
    @_spi(CommandLine) @_spi(Stores)
    public func reaffirm(_ batch: VerifiedBatch, _ answers: [BatchAnswer], through ledger: ClaimLedger) throws
        -> [BatchAnswer] {
        var keys: [ExactString] = []
        for case .first(let key) in answers { keys.append(key) }
        guard !keys.isEmpty else { return answers }
        let lost = try ledger.store.reaffirm(keys)
        guard !lost.isEmpty else { return answers }
        return answers.enumerated().map { index, answer in
            guard case .first(let key) = answer, let reference = lost[key] else { return answer }
            return .duplicate(reference, content: batch.sighting(at: index)?.content)
        }
    }

    /// Marks the duplicates among `batch`'s items as ``claim(_:through:at:renaming:)`` answered them, rewriting
    /// their records, as `mark(_:_:answers:)` does for received postbacks. Without `keepingTime` a duplicate's
    /// record does not say when its first sighting was seen (a run without a state: records from input alone).
    @_spi(CommandLine) public func mark(_ batch: VerifiedBatch, _ answers: [BatchAnswer], keepingTime: Bool) {
        for (index, answer) in answers.enumerated() {
            guard case .duplicate(let first, let content) = answer else { continue }
            let item = batch.items[index]
            verifier.markDuplicate(&batch.records[index], &batch.outcomes[index], source: item.source,
                                   line: item.line, of: keepingTime ? first : first.withoutTime, content: content)
        }
    }
}
