import Foundation

/// A time as RFC 3339 text in UTC with milliseconds (`2026-11-24T11:36:05.123Z`), as records give a duplicate's
/// first run (`duplicate-of-run`).
///
/// Written out by hand: no formatter, locale or calendar can change it, and equal instants always give equal
/// text (the fixed width also sorts as time does). Public so that every program built on the library writes its
/// times the same way, and cheaply (the receiver stamps a log line per request with it).
@_spi(CommandLine) @_spi(Servers) @_spi(Stores) public enum RFC3339Timestamp {
    /// The RFC 3339 text of `date`, in UTC with milliseconds (`2026-11-24T11:36:05.123Z`).
    /// - Parameter date: the instant.
    /// - Returns: its text, fixed width.
    public static func string(_ date: Date) -> String {
        let milliseconds = date.millisecondsSince1970
        let (days, dayMilliseconds) = floorDivision(milliseconds, 86_400_000)
        let (year, month, day) = civilDate(daysSince1970: days)
        let seconds = dayMilliseconds / 1000
        return pad(year, 4) + "-" + pad(month, 2) + "-" + pad(day, 2) + "T" + pad(seconds / 3600, 2) + ":"
            + pad(seconds / 60 % 60, 2) + ":" + pad(seconds % 60, 2) + "." + pad(dayMilliseconds % 1000, 3) + "Z"
    }

    private static func floorDivision(_ value: Int64, _ divisor: Int64) -> (Int64, Int64) {
        let quotient = value >= 0 ? value / divisor : -((-value + divisor - 1) / divisor)
        return (quotient, value - quotient * divisor)
    }

    /// The proleptic Gregorian date of a day count (Howard Hinnant's `civil_from_days`).
    private static func civilDate(daysSince1970 days: Int64) -> (Int64, Int64, Int64) {
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    private static func pad(_ value: Int64, _ width: Int) -> String {
        let digits = String(value)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }
}
