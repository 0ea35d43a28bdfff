/// A valid postback seen at one place (a file's line, a request): what a ``DeduplicationStore`` decides on.
public struct PostbackSighting: Sendable, Hashable {
    public let key: DeduplicationKey
    /// Where it was read: a path, `-` for standard input, or whatever names a request to you.
    public let source: String
    /// Its 1-based line within `source` (1 for a request).
    public let line: Int

    public init(key: DeduplicationKey, source: String, line: Int) {
        self.key = key
        self.source = source
        self.line = line
    }

    /// The sighting of `result`'s postback at `source`:`line`; nil unless the verdict is valid and the item has a
    /// deduplication key. Only valid postbacks count as seen, so a forgery cannot shadow a genuine one (D1).
    public init?(_ result: VerificationResult, source: String, line: Int) {
        guard result.verdict == .valid, let key = result.deduplicationKey else { return nil }
        self.init(key: DeduplicationKey(key), source: source, line: line)
    }
}
