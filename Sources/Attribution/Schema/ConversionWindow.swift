import Foundation

/// One of AdAttributionKit's three conversion windows, as a postback's `postback-sequence-index` names it, with
/// the delay Apple adds before sending its postback (spec section 13): the one definition the decoding, the report
/// and the documentation use.
@_spi(CommandLine) @_spi(Servers) public struct ConversionWindow: Sendable, Hashable {
    /// 1, 2 or 3: `postback-sequence-index` plus one, as Apple's pages number the windows.
    public let number: Int
    /// The window's first and last day after the first launch (day 0 is the first 24 hours).
    public let firstDay: Int
    /// The window's last day after the first launch, inclusive.
    public let lastDay: Int
    /// The random delay between the window's end and the postback's sending, in hours.
    public let minimumDelayHours: Int
    /// The longest random delay between the window's end and the postback's sending, in hours.
    public let maximumDelayHours: Int

    /// The three windows [Apple: "Receiving postbacks in multiple conversion windows"]: days 0-2, 3-7 and 8-35;
    /// the first postback follows its window by 24 to 48 hours, the second and third by 24 to 144.
    public static let all: [ConversionWindow] = [
        ConversionWindow(number: 1, firstDay: 0, lastDay: 2, minimumDelayHours: 24, maximumDelayHours: 48),
        ConversionWindow(number: 2, firstDay: 3, lastDay: 7, minimumDelayHours: 24, maximumDelayHours: 144),
        ConversionWindow(number: 3, firstDay: 8, lastDay: 35, minimumDelayHours: 24, maximumDelayHours: 144),
    ]

    /// The window a `postback-sequence-index` names; nil outside 0...2.
    /// - Parameter index: the postback's `postback-sequence-index`.
    public init?(postbackSequenceIndex index: Int) {
        guard Self.all.indices.contains(index) else { return nil }
        self = Self.all[index]
    }

    private init(number: Int, firstDay: Int, lastDay: Int, minimumDelayHours: Int, maximumDelayHours: Int) {
        self.number = number
        self.firstDay = firstDay
        self.lastDay = lastDay
        self.minimumDelayHours = minimumDelayHours
        self.maximumDelayHours = maximumDelayHours
    }

    /// Only the first postback can carry a fine conversion value (0-63); every one can carry a coarse value.
    public var carriesFineValue: Bool { number == 1 }

    /// The range of first-launch (install) times consistent with a postback sent at `sent` (spec section 13):
    ///
    /// - latest: the app locked the window's value at the earliest moment, the start of day `firstDay`, and the
    ///   shortest delay followed: `sent − firstDay days − minimumDelayHours`;
    /// - earliest: the window ran to its end, the end of day `lastDay` (`lastDay + 1` days after the first
    ///   launch), and the longest delay followed: `sent − (lastDay + 1) days − maximumDelayHours`.
    ///
    /// A postback that arrived after Apple's retries, or was read later than it arrived, was sent earlier than
    /// `sent`: the install can then be earlier than this range says.
    /// - Parameter sent: when the postback was sent (in practice: when it arrived).
    /// - Returns: the earliest and latest first-launch times.
    public func installRange(sentAt sent: Date) -> ClosedRange<Date> {
        let hour = 3600.0
        let day = 24 * hour
        let earliest = sent.addingTimeInterval(-(Double(lastDay + 1) * day + Double(maximumDelayHours) * hour))
        let latest = sent.addingTimeInterval(-(Double(firstDay) * day + Double(minimumDelayHours) * hour))
        return earliest...latest
    }
}
