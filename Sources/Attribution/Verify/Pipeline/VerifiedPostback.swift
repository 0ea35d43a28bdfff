/// One received item once ``PostbackPipeline`` verified it (and, after a store's answer, marked it a duplicate):
/// its verdict, its JSON Lines record, and what a server stores and counts, whichever path decided it (the fast
/// path for the usual valid postback, the general path for everything else).
public struct VerifiedPostback: Sendable {
    /// The label the record names (a request id, a file), and the line (1 for a request).
    public let source: String
    /// The line the record names, 1-based (1 for a request).
    public let line: Int
    /// The JSON Lines record (docs/cli.md section 3), without a line terminator: byte for byte the command line's
    /// for the same item at the same `source` and `line`.
    public internal(set) var record: [UInt8]
    /// How it was decided.
    var outcome: VerifiedBatch.Outcome
    /// The fast path's answer, kept after a duplicate marking (which replaces it in ``outcome``).
    let answer: FastPostbackPath.Answer?
    /// The environment of the key a fast answer verified with.
    let answerEnvironment: KeyEnvironment?
    /// A valid postback's facts, read when it was verified; nil once it is a duplicate.
    public internal(set) var facts: ConversionFacts?

    /// `valid` exactly when there is no error; a duplicate is `invalid` (rule D1).
    public var verdict: Verdict { outcome.verdict }

    /// The verdict, typed: what a server counts, pays or keeps.
    public enum Status: Sendable {
        /// Genuine and counted once: a postback's conversion facts (signed fields and the unsigned values; nil
        /// for an impression).
        case valid(ConversionFacts?)
        /// A repeat of a postback already counted (rule D1): where it was first seen.
        case duplicate(of: DuplicateReference)
        /// Not genuine, or not acceptable: the error that decided it (its stable code, its rule, a message).
        case invalid(Finding)
    }

    /// The verdict with what it carries.
    public var status: Status {
        switch outcome.decision {
        case .fast:
            return .valid(facts)
        case .fastDuplicate(let marking):
            return .duplicate(of: marking.first)
        case .general(let result):
            if let first = result.duplicateOf { return .duplicate(of: first) }
            if let error = result.firstError { return .invalid(error) }
            return .valid(facts)
        }
    }

    /// The error that decided an invalid verdict.
    public var firstError: Finding? { outcome.firstError }

    /// The rules of the record's warnings, in order.
    public var warningRules: [RuleID] { outcome.warningRules }

    /// True once marked a duplicate of an earlier sighting.
    public var isDuplicate: Bool { outcome.isDuplicate }

    /// The general path's result: nil for an item the fast path decided (a valid AdAttributionKit postback
    /// without findings, and its duplicate).
    public var result: VerificationResult? {
        if case .general(let result) = outcome.decision { return result }
        return nil
    }

    /// What the item is.
    public var kind: ItemKind { result?.kind ?? .postback }

    /// True when a trusted key's signature verified (a duplicate's too).
    public var signatureVerified: Bool { result.map { $0.signature == .verified } ?? true }

    /// The environment of the trusted key named, once one was found.
    public var environment: KeyEnvironment? {
        if let result { return result.environment }
        return answerEnvironment
    }

    /// The byte-exact key repeats of this postback share, once it verified.
    public var deduplicationKey: ExactString? {
        if let result { return result.deduplicationKey }
        return answer?.postbackIdentifier
    }

    /// What a ``DeduplicationStore`` decides on: nil unless the item is a valid postback (not yet a duplicate).
    public var sighting: PostbackSighting? {
        switch outcome.decision {
        case .fast(let answer):
            PostbackSighting(key: answer.postbackIdentifier, source: source, line: line, content: answer.content)
        case .general(let result):
            PostbackSighting(result, source: source, line: line)
        case .fastDuplicate:
            nil
        }
    }

    /// What a duplicate's content changed against its first sighting's (rule D2); nil otherwise.
    public var duplicateDifferences: ContentFingerprint.Differences? {
        switch outcome.decision {
        case .fast: nil
        case .fastDuplicate(let marking): marking.differences
        case .general(let result): result.duplicateDifferences
        }
    }

    /// The body's unsigned members (`jws-string` left out), as the record holds them; nil for a bare JWS or an
    /// item that got no further than its bytes.
    public var unsignedMembers: JSONObject? {
        if let result { return result.unsigned }
        // The fast path's record, which it wrote: its `unsigned` member is the body's unsigned members.
        return (try? StrictJSONParser.parse(record, options: .init(valueBudget: nil)))?
            .objectValue?["unsigned"]?.objectValue
    }
}
