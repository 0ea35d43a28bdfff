import Foundation

/// The state keeps times as whole milliseconds since 1970 (UTC); these convert exactly both ways.
extension Date {
    /// Whole milliseconds since 1970-01-01T00:00:00Z, rounded down.
    @_spi(Stores) public var millisecondsSince1970: Int64 {
        let milliseconds = timeIntervalSince1970 * 1000
        // A Date made from whole milliseconds can read back a hair below them (binary fractions, and Date
        // counting from 2001): within a microsecond of a whole millisecond is that millisecond.
        let nearest = milliseconds.rounded()
        return Int64(abs(milliseconds - nearest) < 0.001 ? nearest : milliseconds.rounded(.down))
    }

    @_spi(CommandLine) @_spi(Stores) public init(milliseconds: Int64) {
        self.init(timeIntervalSince1970: Double(milliseconds) / 1000)
    }
}
