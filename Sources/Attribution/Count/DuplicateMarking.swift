/// Rules D1 and D2 for one sighting of a postback seen before: the D1 error, and the D2 warning naming what
/// differs when the content changed. Worded once, for a ``VerificationResult``
/// (``VerificationResult/markDuplicate(of:content:)``) and for a record the fast path wrote from the received bytes
/// (``FastPostbackPath/duplicateRecord(_:of:source:line:marking:)``), so that a duplicate reads the same whichever
/// path decided it.
struct DuplicateMarking: Sendable {
    /// The first sighting.
    let first: DuplicateReference
    /// Rule D1: the error that makes the sighting `invalid` with code `duplicate`.
    let error: Finding
    /// What this sighting's content changed against the first's; nil when nothing differs or either fingerprint is
    /// unknown.
    let differences: ContentFingerprint.Differences?
    /// Rule D2: the warning naming ``differences``; nil when there are none.
    let warning: Finding?

    /// - Parameters:
    ///   - subject: what D1 and D2 name: the postback by its identifier (``postback(_:)``), or an SKAdNetwork
    ///     transaction and index.
    ///   - content: this sighting's fingerprint; asked for only when `first` has one to compare with.
    init(subject: String, first: DuplicateReference, content: () -> ContentFingerprint?) {
        self.first = first
        let when = first.firstSeen.map { " (first seen by the run started \(RFC3339Timestamp.string($0)))" } ?? ""
        error = Finding(.d1, "\(subject) was already seen valid at \(first.source):\(first.line)\(when)")
        guard let firstContent = first.firstContent, let content = content() else {
            differences = nil
            warning = nil
            return
        }
        let found = content.differences(from: firstContent)
        guard !found.isEmpty else {
            differences = nil
            warning = nil
            return
        }
        differences = found
        let named = (found.signedPayload ? ["the signed payload"] : []) + found.unsignedMembers
        warning = Finding(.d2, "this sighting's content differs from its first sighting at "
                          + "\(first.source):\(first.line): \(named.joined(separator: ", "))")
    }

    /// The subject of an AdAttributionKit postback: `postback-identifier` and its value.
    static func postback(_ identifier: ExactString) -> String {
        "\(PostbackPayloadMember.postbackIdentifier.name) \(identifier.description)"
    }
}
