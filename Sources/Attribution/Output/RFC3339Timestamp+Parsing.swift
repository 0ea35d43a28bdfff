extension RFC3339Timestamp {
    /// Why a text is not a time ``milliseconds(_:)`` reads: what is wrong, in words a user can act on.
    @_spi(CommandLine) @_spi(Servers) @_spi(Stores) public struct Refusal: Error, Sendable, CustomStringConvertible {
        /// What is wrong with the text, e.g. `November has 30 days`.
        public let reason: String

        /// The reason, as messages quote it.
        public var description: String { reason }
    }

    /// Reads a UTC date (`2026-11-26`, its midnight) or an RFC 3339 date-time (section 5.6:
    /// `2026-11-26T12:00:00Z`, `2026-11-26T12:00:00.5+01:00`) strictly, as milliseconds since 1970 (UTC).
    ///
    /// Every field is checked against the calendar: no 30 February, no 31 November, no hour 24, no minute 60.
    /// Foundation's ISO 8601 parsing rolls such texts over into the next day or hour, so a bound a user mistyped
    /// would quietly move; here it is refused. A leap second (`23:59:60`) is refused too: times here are POSIX
    /// milliseconds, which have no instant for it. A fraction beyond the millisecond rounds up, so a bound never
    /// admits a millisecond before the instant given. `T` and `Z` may be lower case (RFC 3339, section 5.6, note);
    /// nothing else is optional: seconds and an offset (`Z`, `+hh:mm`, `-hh:mm`) are required.
    /// - Parameter text: The date or date-time, ASCII only.
    /// - Returns: Milliseconds since 1970-01-01T00:00:00Z (negative before it).
    /// - Throws: `Refusal` naming the first field that is wrong.
    public static func milliseconds(_ text: String) throws(Refusal) -> Int64 {
        var reader = TimeTextReader(Array(text.utf8))
        let year = try reader.digits(4, "the year (4 digits)")
        try reader.expect(UInt8(ascii: "-"), "a '-' after the year")
        let month = try reader.digits(2, "the month (2 digits)")
        try reader.expect(UInt8(ascii: "-"), "a '-' after the month")
        let day = try reader.digits(2, "the day (2 digits)")
        guard (1...12).contains(month) else { throw Refusal(reason: "month \(month) does not exist (01-12)") }
        let monthDays = daysInMonth(month, year: year)
        guard (1...monthDays).contains(day) else {
            let leap = month == 2 && monthDays == 28 ? " (\(year) is not a leap year)" : ""
            throw Refusal(reason: day == 0 ? "day 00 does not exist"
                          : "\(monthNames[Int(month) - 1]) \(year) has \(monthDays) days\(leap), not \(day)")
        }
        let midnight = daysSince1970(year: year, month: month, day: day) * 86_400_000
        if reader.isAtEnd { return midnight }
        guard reader.take(UInt8(ascii: "T")) || reader.take(UInt8(ascii: "t")) else {
            throw Refusal(reason: "a date is followed by nothing or by T and a time (2026-11-26T12:00:00Z)")
        }
        let hour = try reader.digits(2, "the hour (2 digits)")
        try reader.expect(UInt8(ascii: ":"), "a ':' after the hour")
        let minute = try reader.digits(2, "the minute (2 digits)")
        try reader.expect(UInt8(ascii: ":"), "a ':' and the seconds after the minute")
        let second = try reader.digits(2, "the second (2 digits)")
        guard hour <= 23 else {
            throw Refusal(reason: "hour \(hour) is not a time of day (00-23); midnight ending a day is the next "
                          + "day's 00:00:00")
        }
        guard minute <= 59 else { throw Refusal(reason: "minute \(minute) does not exist (00-59)") }
        guard second <= 59 else {
            throw Refusal(reason: second == 60
                          ? "second 60 (a leap second) is refused: times here are POSIX milliseconds, which have no "
                              + "instant for it; give 23:59:59.999 or the next minute's :00"
                          : "second \(second) does not exist (00-59)")
        }
        var fraction: Int64 = 0
        if reader.take(UInt8(ascii: ".")) {
            let digits = reader.digitRun()
            guard !digits.isEmpty else { throw Refusal(reason: "a '.' is followed by at least one digit") }
            for position in 0..<3 {
                fraction = fraction * 10 + (position < digits.count ? Int64(digits[position]) : 0)
            }
            if digits.dropFirst(3).contains(where: { $0 != 0 }) { fraction += 1 }
        }
        var offset: Int64 = 0
        if reader.take(UInt8(ascii: "Z")) || reader.take(UInt8(ascii: "z")) {
            offset = 0
        } else if let sign = reader.takeSign() {
            let offsetHour = try reader.digits(2, "the offset's hours (2 digits)")
            try reader.expect(UInt8(ascii: ":"), "a ':' in the offset (+hh:mm)")
            let offsetMinute = try reader.digits(2, "the offset's minutes (2 digits)")
            guard offsetHour <= 23, offsetMinute <= 59 else {
                throw Refusal(reason: "offset \(offsetHour):\(offsetMinute) is not one (hours 00-23, minutes 00-59)")
            }
            offset = sign * (offsetHour * 60 + offsetMinute) * 60_000
        } else {
            throw Refusal(reason: "a time needs its offset: Z for UTC, or +hh:mm or -hh:mm")
        }
        guard reader.isAtEnd else { throw Refusal(reason: "nothing may follow the offset") }
        return midnight + ((hour * 60 + minute) * 60 + second) * 1000 + fraction - offset
    }

    private static let monthNames = ["January", "February", "March", "April", "May", "June", "July", "August",
                                     "September", "October", "November", "December"]

    private static func daysInMonth(_ month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// The day count of a proleptic Gregorian date (Howard Hinnant's `days_from_civil`, the inverse of the
    /// writer's `civil_from_days`).
    private static func daysSince1970(year: Int64, month: Int64, day: Int64) -> Int64 {
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}

/// The bytes of a time's text, read left to right by `RFC3339Timestamp.milliseconds(_:)`.
private struct TimeTextReader {
    private let bytes: [UInt8]
    private var position = 0

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    var isAtEnd: Bool { position == bytes.count }

    /// Exactly `count` ASCII digits as a number; refuses anything else, naming `what` was expected.
    mutating func digits(_ count: Int, _ what: String) throws(RFC3339Timestamp.Refusal) -> Int64 {
        var value: Int64 = 0
        for _ in 0..<count {
            guard position < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[position]) else {
                throw RFC3339Timestamp.Refusal(reason: "expected \(what) at position \(position + 1)")
            }
            value = value * 10 + Int64(bytes[position] - UInt8(ascii: "0"))
            position += 1
        }
        return value
    }

    /// The digits from here to the first byte that is not one, as values 0-9.
    mutating func digitRun() -> [UInt8] {
        var run: [UInt8] = []
        while position < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[position]) {
            run.append(bytes[position] - UInt8(ascii: "0"))
            position += 1
        }
        return run
    }

    mutating func expect(_ byte: UInt8, _ what: String) throws(RFC3339Timestamp.Refusal) {
        guard take(byte) else {
            throw RFC3339Timestamp.Refusal(reason: "expected \(what) at position \(position + 1)")
        }
    }

    /// Consumes `byte` when it is next.
    mutating func take(_ byte: UInt8) -> Bool {
        guard position < bytes.count, bytes[position] == byte else { return false }
        position += 1
        return true
    }

    /// Consumes `+` (1) or `-` (-1) when one is next.
    mutating func takeSign() -> Int64? {
        if take(UInt8(ascii: "+")) { return 1 }
        if take(UInt8(ascii: "-")) { return -1 }
        return nil
    }
}
