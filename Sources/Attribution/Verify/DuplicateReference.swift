/// Where the first valid occurrence of a duplicated postback was read.
public struct DuplicateReference: Sendable, Hashable {
    /// The source (path, or `-`) of the first occurrence.
    public let source: String
    /// Its 1-based line.
    public let line: Int

    public init(source: String, line: Int) {
        self.source = source
        self.line = line
    }
}
