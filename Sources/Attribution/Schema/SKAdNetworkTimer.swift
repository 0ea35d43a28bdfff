import Foundation

/// How SKAdNetwork 1.0-3.0 times its one postback (spec section 13), and the install times that allows: the one
/// definition the decoding and the documentation use.
///
/// [Apple: "updateConversionValue(_:)"; "updatePostbackConversionValue(_:completionHandler:)"]: the first launch
/// registers the install and starts a 24-hour timer; each update to a greater conversion value (before 4.0 values
/// may only increase) restarts it; when it expires the value is final, and the device sends the postback within
/// the following 0-24 hours.
enum SKAdNetworkTimer {
    /// The timer, restarted by every increase of the value.
    public static let timerHours = 24
    /// The random delay after the timer expires.
    public static let minimumDelayHours = 0
    /// The longest random delay after the timer expires.
    public static let maximumDelayHours = 24

    /// The first-launch times consistent with a postback sent at `sent` that carries `finalValue` (nil: none, or
    /// withheld; then the largest, 63, bounds it):
    ///
    /// - latest: no update after the first launch; the timer ran once and the shortest delay followed:
    ///   `sent − 24 h`;
    /// - earliest: the value rose one step at a time, each step just before the timer ran out, so the last of at
    ///   most `finalValue` increases came before `finalValue × 24 h`; its timer and the longest delay followed:
    ///   `sent − (finalValue + 1) × 24 h − 24 h`.
    /// - Parameters:
    ///   - sent: when the postback was sent (in practice: when it arrived).
    ///   - finalValue: the postback's conversion value (0-63), or nil.
    /// - Returns: the earliest and latest first-launch times.
    public static func installRange(sentAt sent: Date, finalValue: Int?) -> ClosedRange<Date> {
        let hour = 3600.0
        let increases = Double(min(max(finalValue ?? 63, 0), 63))
        let earliest = sent.addingTimeInterval(
            -((increases + 1) * Double(timerHours) + Double(maximumDelayHours)) * hour)
        let latest = sent.addingTimeInterval(-Double(timerHours + minimumDelayHours) * hour)
        return earliest...latest
    }
}
