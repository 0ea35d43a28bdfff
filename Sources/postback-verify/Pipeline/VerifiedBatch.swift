import Attribution

/// A batch of items on its way through the pipeline: read, then prepared, checked, completed and rendered,
/// by whichever threads the ``StageLayout`` gives those steps.
///
/// A class, so each stage updates the batch in place: as a struct, the worker's copy of 256 prepared items would be
/// duplicated on its first write (copy-on-write with the pipeline still holding the original).
/// `@unchecked Sendable`: the pipeline hands a batch from stage to stage under its lock, and only one stage holds it
/// at a time.
final class VerifiedBatch: @unchecked Sendable {
    var items: [InputItem]
    /// Paths that could not be read while this batch was being read.
    var failures: [InputFailure]
    /// After step 1, where each item went: the fast path or, where that declined, the general path; the index is
    /// the item's place in ``fastPrepared`` or ``generalPrepared``.
    var routes: [Route] = []
    /// The fast path's items and the general path's after step 1 (and 2), each in input order: kept apart so step
    /// 2 checks each path's signatures in place, as one batch.
    var fastPrepared: [FastPostbackPath.Prepared] = []
    var generalPrepared: [PreparedItem] = []

    enum Route {
        case fast(Int)
        case general(Int)
    }
    /// The finished items, once step 3 ran.
    var outcomes: [Outcome] = []
    /// Each record rendered as if the item were not a duplicate (workers render when they complete items).
    var records: [[UInt8]] = []

    /// How an item was decided.
    enum Outcome {
        /// By ``FastPostbackPath``: a valid postback with no finding, whose record is ready; its identifier is
        /// still to be checked for a repeat (D1).
        case fast(postbackIdentifier: String)
        /// By the general path.
        case general(VerificationResult)
    }

    init(items: [InputItem], failures: [InputFailure]) {
        self.items = items
        self.failures = failures
    }

    /// Adds the next item's outcome and its record.
    func append(_ outcome: Outcome, record: [UInt8]) {
        outcomes.append(outcome)
        records.append(record)
    }
}
