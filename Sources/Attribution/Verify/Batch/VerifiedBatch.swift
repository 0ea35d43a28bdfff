/// A batch of items on its way through a pipeline: read, then prepared, checked, completed and rendered, by
/// whichever threads the caller gives those steps (``BatchWorker``).
///
/// A class, so each stage updates the batch in place: as a struct, the worker's copy of 256 prepared items would be
/// duplicated on its first write (copy-on-write with the pipeline still holding the original).
/// `@unchecked Sendable`: the pipeline hands a batch from stage to stage under its lock, and only one stage holds it
/// at a time.
package final class VerifiedBatch: @unchecked Sendable {
    package var items: [InputItem]
    /// After step 1, where each item went: the fast path or, where that declined, the general path; the index is
    /// the item's place in ``fastPrepared`` or ``generalPrepared``.
    package var routes: [Route] = []
    /// The fast path's items and the general path's after step 1 (and 2), each in input order: kept apart so step
    /// 2 checks each path's signatures in place, as one batch.
    package var fastPrepared: [FastPostbackPath.Prepared] = []
    package var generalPrepared: [PreparedItem] = []

    package enum Route {
        case fast(Int)
        case general(Int)
    }
    /// The finished items, once step 3 ran.
    package var outcomes: [Outcome] = []
    /// Each record rendered as if the item were not a duplicate (workers render when they complete items).
    package var records: [[UInt8]] = []

    /// How an item was decided.
    package enum Outcome {
        /// By ``FastPostbackPath``: a valid postback with no finding, whose record is ready; its identifier is
        /// still to be checked for a repeat (D1), with its content's fingerprint (D2).
        case fast(postbackIdentifier: ExactString, content: ContentFingerprint)
        /// By the general path.
        case general(VerificationResult)
    }

    /// A batch of items read, to be verified: their count is announced to the key tables, for which items read
    /// ahead of the checks are the known near future (``P256KeyTables/announce(_:)``).
    package init(items: [InputItem]) {
        self.items = items
        P256KeyTables.shared.announce(items.count)
    }

    /// Adds the next item's outcome and its record.
    package func append(_ outcome: Outcome, record: [UInt8]) {
        outcomes.append(outcome)
        records.append(record)
    }
}
