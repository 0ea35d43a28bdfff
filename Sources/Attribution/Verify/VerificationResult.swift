/// Everything known about one verified item: a value, safe to hand across threads and to log.
///
/// The verdict is derived from `errors`: valid exactly when there are none. Signed and unsigned data are kept
/// apart (`fields` versus `unsigned`): only `fields` is vouched for by the signature.
public struct VerificationResult: Sendable {
    /// What the item turned out to be (the record's `kind`).
    public internal(set) var kind: ItemKind = .unknown
    /// How far signature checking got (the record's `signature`).
    public internal(set) var signature: SignatureStatus = .notChecked
    /// The kid that named the key (SKAdNetwork: `skadnetwork-p256` or `skadnetwork-p192`).
    public internal(set) var keyID: String?
    /// The trusted key's environment, once a key was found.
    public internal(set) var environment: KeyEnvironment?
    /// Errors in catalogue order; the first decided the verdict.
    public internal(set) var errors: [Finding] = []
    /// Warnings in catalogue order: they never change the verdict unless strict mode made them errors.
    public internal(set) var warnings: [Finding] = []
    /// The signed payload as decoded, only once its signature verified.
    @_spi(CommandLine) @_spi(Servers) @_spi(Stores) public internal(set) var fields: JSONObject?
    /// The body's unsigned members (`jws-string` left out); nil for a bare JWS.
    @_spi(CommandLine) @_spi(Servers) @_spi(Stores) public internal(set) var unsigned: JSONObject?
    /// The lowest crowd-anonymity tier consistent with a postback's fields.
    public internal(set) var tier: Int?
    /// The decoded postback payload, when it verified and passed P1-P2.
    public internal(set) var postback: PostbackPayload?
    /// The decoded unsigned body members, when the item is a postback body that got that far.
    public internal(set) var body: PostbackBody?
    /// The decoded impression payload, when it verified and passed I1.
    public internal(set) var impression: ImpressionPayload?
    /// The SKAdNetwork postback's signed members as decoded, once its signature verified (for the 2.2 fallback,
    /// without `fidelity-type`, which then was not signed).
    public internal(set) var skAdNetwork: SKAdNetworkPostback?
    /// The exact string an SKAdNetwork signature was checked over (values joined by U+2063, spec §9): the one
    /// that verified (for the 2.2 fallback, the 2.0/2.1 order), or the version's own order when none did.
    /// Nil when S1 (version) or S2 (signed members) stopped verification first.
    public internal(set) var signedString: String?
    /// The byte-exact key under which repeats of this item are duplicates; set only on verified postbacks
    /// (`postback-identifier`; SKAdNetwork: `transaction-id`, U+001F, `postback-sequence-index` or `0`, ...).
    public internal(set) var deduplicationKey: ExactString?
    /// Set by ``markDuplicate(of:content:)`` when an earlier valid item had the same key.
    public internal(set) var duplicateOf: DuplicateReference?
    /// The SHA-256 of what the signature covers (a JWS's signing input), once it verified: names the signed
    /// content in a ``ContentFingerprint``.
    var signedDigest: SHA256Digest?
    /// What this duplicate's content changed against its first sighting's (rule D2); nil unless it is a duplicate
    /// whose content differs.
    @_spi(Servers) public internal(set) var duplicateDifferences: ContentFingerprint.Differences?

    @_spi(CommandLine) public init() {}

    /// Valid exactly when there are no errors.
    public var verdict: Verdict { errors.isEmpty ? .valid : .invalid }

    /// The error that decided an invalid verdict.
    public var firstError: Finding? { errors.first }
}

/// Rules D1 and D2, worded once for every deduplication (in memory, a SQLite or PostgreSQL state, a store of
/// your own).
extension VerificationResult {
    /// Makes this valid result a `duplicate` of `first` (rule D1): sets ``duplicateOf`` and adds the D1 error.
    /// When `first` carries its content's fingerprint and this result's content differs, also sets
    /// `duplicateDifferences` and adds the D2 warning naming what differs. Does nothing to a result that is not
    /// valid or has no deduplication key (only valid postbacks are duplicates).
    /// - Parameters:
    ///   - first: where and when the postback was first seen, as a ``DeduplicationStore`` answered.
    ///   - content: this result's fingerprint when the caller has it already (its sighting's); nil (the
    ///     default) computes it from the result, only when `first` has one to compare with.
    public mutating func markDuplicate(of first: DuplicateReference, content: ContentFingerprint? = nil) {
        guard verdict == .valid, let key = deduplicationKey else { return }
        let marking = DuplicateMarking(subject: duplicateSubject(key), first: first) {
            content ?? ContentFingerprint(self)
        }
        duplicateOf = first
        errors.append(marking.error)
        duplicateDifferences = marking.differences
        if let warning = marking.warning { warnings.append(warning) }
    }

    /// What D1 and D2 name: the postback by its identifier (SKAdNetwork: transaction and index).
    private func duplicateSubject(_ key: ExactString) -> String {
        skAdNetwork.map {
            "\(SKAdNetworkField.transactionID.rawValue) \($0.transactionID) at "
                + "\(SKAdNetworkField.postbackSequenceIndex.rawValue) \($0.postbackSequenceIndex ?? 0)"
        } ?? DuplicateMarking.postback(key)
    }
}

/// The one-word outcome of verifying an item.
public enum Verdict: String, Sendable, Hashable, CaseIterable, ExactlySpelled {
    @_spi(CommandLine) @_spi(Stores) public static let spellings = makeSpellings()

    /// Signature verified and no rule rejected the item.
    case valid
    /// At least one error; the first error says why.
    case invalid
}

/// How far signature checking got, as the record's `signature` member reports it (docs/cli.md section 3).
public enum SignatureStatus: String, Sendable, Hashable {
    /// The signature verified against a trusted key.
    case verified
    /// A trusted key was found and the signature did not verify (or was not a well-formed signature).
    case failed
    /// Checking was not reached: malformed input, unsupported algorithm, unknown or untrusted key.
    case notChecked = "not-checked"
}

/// What an input item turned out to be, as the record's `kind` member names it (docs/cli.md section 3).
public enum ItemKind: String, Sendable, Hashable, CaseIterable, ExactlySpelled {
    @_spi(CommandLine) @_spi(Stores) public static let spellings = makeSpellings()

    /// An AdAttributionKit postback: a body with `jws-string`, or a bare postback JWS.
    case postback
    /// An ad network's impression JWS (payload has `impression-identifier`, no `postback-identifier`).
    case impression
    /// A legacy SKAdNetwork postback body (has `attribution-signature`).
    case skadnetwork
    /// Not recognisable as any of the above.
    case unknown
}

extension VerificationResult {
    /// Whether this invalid body may still be a genuine postback that a later attempt would accept: well-formed,
    /// and either its signature verified against a trusted key (a field rule or strict mode refused it, which a
    /// later release or another policy may not), or checking stopped at something only this installation lacks (a
    /// kid not loaded, a development key not allowed, an SKAdNetwork version this release does not know). False
    /// for a valid body, a duplicate, and whatever is proven forged (a signature that failed) or malformed (J1,
    /// even validly signed; an algorithm Apple does not use): the one definition a server (the receiver's invalid
    /// quota) decides on.
    public var couldStillBeGenuine: Bool {
        guard verdict == .invalid, duplicateOf == nil, let code = firstError?.code,
              code != .malformedInput, code != .unsupportedAlgorithm else { return false }
        return signature == .verified || code == .unknownKey || code == .untrustedKey || code == .unsupportedVersion
    }
}
