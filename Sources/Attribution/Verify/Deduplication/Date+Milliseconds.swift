import Foundation

/// The state keeps times as whole milliseconds since 1970 (UTC); these convert exactly both ways.
extension Date {
    /// Whole milliseconds since 1970-01-01T00:00:00Z, rounded down.
    var millisecondsSince1970: Int64 {
        Int64((timeIntervalSince1970 * 1000).rounded(.down))
    }

    init(milliseconds: Int64) {
        self.init(timeIntervalSince1970: Double(milliseconds) / 1000)
    }
}
