import Foundation

/// Where and when the first valid occurrence of a duplicated postback was seen.
public struct DuplicateReference: Sendable, Hashable {
    /// The source (path, or `-`) of the first occurrence.
    public let source: String
    /// Its 1-based line.
    public let line: Int
    /// When it was first seen: the start of the run that read it (a request's time, for a server); whole
    /// milliseconds, as the state keeps it. Nil only where a caller did not say.
    public let firstSeen: Date?

    package init(source: String, line: Int, firstSeen: Date? = nil) {
        self.source = source
        self.line = line
        self.firstSeen = firstSeen.map(Self.wholeMilliseconds)
    }

    /// `date` rounded down to a whole millisecond, so an answer from memory equals one read back from SQLite.
    static func wholeMilliseconds(_ date: Date) -> Date {
        Date(milliseconds: date.millisecondsSince1970)
    }
}
