/// A valid postback seen at one place (a file's line, a request): what a ``DeduplicationStore`` decides on.
public struct PostbackSighting: Sendable, Hashable {
    /// The byte-exact key (rule D1).
    public let key: ExactString
    /// Where it was read: a path, `-` for standard input, or whatever names a request to you (a request id).
    public let source: String
    /// Its 1-based line within `source` (1 for a request).
    public let line: Int
    /// What it held; a store keeps the first sighting's and returns it with a duplicate
    /// (``DuplicateReference/firstContent``), so a later sighting with other content can say what differs.
    public let content: ContentFingerprint?

    /// A sighting of the postback with `key` (a store's tests, a caller that keeps its own keys).
    /// - Parameters:
    ///   - key: the byte-exact deduplication key.
    ///   - source: where it was read (a path, `-`, a request's label).
    ///   - line: its 1-based line within `source` (1 for a request).
    ///   - content: what it held; nil when unknown.
    public init(key: ExactString, source: String, line: Int, content: ContentFingerprint? = nil) {
        self.key = key
        self.source = source
        self.line = line
        self.content = content
    }

    /// The sighting of `result`'s postback at `source`:`line`, with its content fingerprint; nil unless the
    /// verdict is valid and the item has a deduplication key. Only valid postbacks count as seen, so a forgery
    /// cannot shadow a genuine one (D1).
    /// - Parameters:
    ///   - result: the item's result.
    ///   - source: where it was read (a path, `-`, a request's label).
    ///   - line: its 1-based line within `source` (1 for a request).
    public init?(_ result: VerificationResult, source: String, line: Int) {
        guard result.verdict == .valid, let key = result.deduplicationKey else { return nil }
        self.init(key: key, source: source, line: line, content: ContentFingerprint(result))
    }
}
