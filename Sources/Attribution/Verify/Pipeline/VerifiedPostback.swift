/// One received item once ``PostbackPipeline`` verified it (and, after a store's answer, marked it a duplicate):
/// its verdict, its JSON Lines record, and what a server stores and counts, whichever path decided it (the fast
/// path for the usual valid postback, the general path for everything else).
///
/// Every member answers alike on either path: the same body gives equal ``record``, ``status``, ``facts``,
/// ``decoded``, ``kind``, ``environment``, ``deduplicationKey``, ``sighting`` and `unsignedMembers`. There is no
/// general ``VerificationResult`` among them on purpose: the fast path (the hot path) builds none, and building one
/// per item would cost it a JSON tree per postback, so the few things a server asks of a result beyond these are
/// answered here instead (``couldStillBeGenuine``, ``hasConversionValue``). For the whole result, verify the body
/// with ``AttributionVerifier``.
public struct VerifiedPostback: Sendable {
    /// The label the record names (a request id, a file), and the line (1 for a request).
    public let source: String
    /// The line the record names, 1-based (1 for a request).
    public let line: Int
    /// The JSON Lines record (docs/cli.md section 3), without a line terminator: byte for byte the command line's
    /// for the same item at the same `source` and `line` without `--schema`. With a schema, the command line's
    /// record of a valid postback also has ``decoded``'s member: `DecodedConversion.adding(to:times:)` adds it.
    public internal(set) var record: [UInt8]
    /// How it was decided.
    var outcome: VerifiedBatch.Outcome
    /// The fast path's answer, kept after a duplicate marking (which replaces it in ``outcome``).
    let answer: FastPostbackPath.Answer?
    /// The environment of the key a fast answer verified with.
    let answerEnvironment: KeyEnvironment?
    /// A valid postback's facts, read when it was verified; nil once it is a duplicate.
    public internal(set) var facts: ConversionFacts?
    /// A valid postback's conversion as the pipeline's schema reads it, as of the item's arrival, decoded once by
    /// the pipeline when it verified the item (``PostbackPipeline/init(keyRing:policy:explain:fastPath:schema:)``):
    /// nil without a schema, for anything but a valid postback, and once it is a duplicate (a duplicate is not a
    /// conversion).
    public internal(set) var decoded: DecodedConversion?

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
    /// without findings, and its duplicate). Not public: what it answers is answered alike on both paths by the
    /// members here.
    var result: VerificationResult? {
        if case .general(let result) = outcome.decision { return result }
        return nil
    }

    /// True when the fast path decided the item (for the tests comparing the two paths).
    var isFastPathDecided: Bool { result == nil }

    /// Whether this invalid item may still be a genuine postback that a later attempt would accept, as
    /// ``VerificationResult/couldStillBeGenuine`` (the one definition) answers; false for a valid item, so for
    /// every item the fast path decided, and for a duplicate.
    public var couldStillBeGenuine: Bool { result?.couldStillBeGenuine ?? false }

    /// Whether the item carries a fine or coarse conversion value: from ``facts`` for a valid postback, else from
    /// the body's members as verification read them (a duplicate's too; false for an item that got no further
    /// than its bytes).
    public var hasConversionValue: Bool {
        if let facts { return !facts.hasNoValue }
        if let body = result?.body { return body.hasConversionValue }
        // The fast path's duplicate reads its record back here, as `unsignedMembers` does (the fast path read
        // the body's values when it decided, so those members hold valid values).
        guard let unsigned = unsignedMembers else { return false }
        return unsigned.contains("conversion-value") || unsigned.contains("coarse-conversion-value")
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
    @_spi(Servers) public var duplicateDifferences: ContentFingerprint.Differences? {
        switch outcome.decision {
        case .fast: nil
        case .fastDuplicate(let marking): marking.differences
        case .general(let result): result.duplicateDifferences
        }
    }

    /// The body's unsigned members (`jws-string` left out), as the record holds them; nil for a bare JWS or an
    /// item that got no further than its bytes.
    @_spi(CommandLine) @_spi(Servers) @_spi(Stores) public var unsignedMembers: JSONObject? {
        if let result { return result.unsigned }
        // The fast path's record, which it wrote: its `unsigned` member is the body's unsigned members.
        return (try? StrictJSONParser.parse(record, options: .init(valueBudget: nil)))?
            .objectValue?["unsigned"]?.objectValue
    }
}
