/// A batch of items on its way through a pipeline: read, then prepared, checked, completed and rendered by a
/// ``BatchVerifier``, on whichever threads the caller gives those steps; then each item's ``outcomes`` and
/// ``records``, in input order.
///
/// A class, so each stage updates the batch in place: as a struct, the worker's copy of 256 prepared items would be
/// duplicated on its first write (copy-on-write with the pipeline still holding the original).
/// `@unchecked Sendable`: the pipeline hands a batch from stage to stage under its lock, and only one stage holds it
/// at a time.
@_spi(CommandLine) public final class VerifiedBatch: @unchecked Sendable {
    /// The items, in input order.
    @_spi(CommandLine) public let items: [InputItem]
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

    /// Each item's outcome, once the batch was completed (``BatchVerifier/complete(_:)``); a duplicate's once
    /// ``BatchVerifier/markDuplicate(_:_:source:line:of:content:)`` marked it.
    @_spi(CommandLine) @_spi(Stores) public internal(set) var outcomes: [Outcome] = []
    /// Each item's record (no line terminator): rendered as if the item were not a duplicate when the batch was
    /// completed, rewritten when it is marked one.
    @_spi(CommandLine) @_spi(Stores) public internal(set) var records: [[UInt8]] = []

    /// A batch of items read, to be verified: their count is announced to the key tables, for which items read
    /// ahead of the checks are the known near future (``P256KeyTables/announce(_:)``).
    @_spi(CommandLine) public init(items: [InputItem]) {
        self.items = items
        P256KeyTables.shared.announce(items.count)
    }

    /// Adds the next item's outcome and its record.
    func append(_ outcome: Outcome, record: [UInt8]) {
        outcomes.append(outcome)
        records.append(record)
    }

    /// The sighting of item `index` that D1 decides on (through a ``DeduplicationStore``), with its content's
    /// fingerprint for D2; nil unless the item is a valid postback. After ``BatchVerifier/complete(_:)``.
    @_spi(CommandLine) @_spi(Stores) public func sighting(at index: Int) -> PostbackSighting? {
        let item = items[index]
        switch outcomes[index].decision {
        case .fast(let answer):
            return PostbackSighting(key: answer.postbackIdentifier, source: item.source, line: item.line,
                                    content: answer.content)
        case .general(let result):
            return PostbackSighting(result, source: item.source, line: item.line)
        case .fastDuplicate:
            return nil
        }
    }
}

extension VerifiedBatch {
    /// How one item was decided: what a caller counts and reports beside its record. Which path decided it is the
    /// verifier's business; nothing here depends on it.
    @_spi(CommandLine) public struct Outcome: Sendable {
        /// Three words for a fast answer, the usual case: the larger payloads are boxed (`indirect`), so an
        /// outcome is cheap to append, copy and read once per item on the hot path (a `VerificationResult` inline
        /// made every copy a few hundred bytes and one value-witness call).
        enum Decision {
            /// By the fast path: a valid postback with no finding (and what its duplicate's record needs).
            case fast(FastPostbackPath.Answer)
            /// The fast path's valid postback, then found a duplicate by D1.
            indirect case fastDuplicate(DuplicateMarking)
            /// By the general path (a duplicate's result marked).
            indirect case general(VerificationResult)
        }

        var decision: Decision

        init(_ decision: Decision) {
            self.decision = decision
        }

        /// `valid` exactly when the item has no error (a duplicate is `invalid`, rule D1).
        @_spi(CommandLine) @_spi(Stores) public var verdict: Verdict {
            switch decision {
            case .fast: .valid
            case .fastDuplicate: .invalid
            case .general(let result): result.verdict
            }
        }

        /// The error that decided an invalid verdict.
        @_spi(CommandLine) public var firstError: Finding? {
            switch decision {
            case .fast: nil
            case .fastDuplicate(let marking): marking.error
            case .general(let result): result.firstError
            }
        }

        /// How many warnings the record holds.
        @_spi(CommandLine) public var warningCount: Int {
            switch decision {
            case .fast: 0
            case .fastDuplicate(let marking): marking.warning == nil ? 0 : 1
            case .general(let result): result.warnings.count
            }
        }

        /// The rules of the record's warnings, in the record's order.
        @_spi(CommandLine) public var warningRules: [RuleID] {
            switch decision {
            case .fast: []
            case .fastDuplicate(let marking): marking.warning.map { [$0.rule] } ?? []
            case .general(let result): result.warnings.map(\.rule)
            }
        }

        /// True once the item was marked a duplicate of an earlier sighting (D1).
        @_spi(CommandLine) public var isDuplicate: Bool {
            switch decision {
            case .fast: false
            case .fastDuplicate: true
            case .general(let result): result.duplicateOf != nil
            }
        }
    }
}
