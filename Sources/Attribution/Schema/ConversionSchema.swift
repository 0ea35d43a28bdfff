import Foundation

/// What a network's conversion values mean (docs/schema.md): per app and validity period, each conversion
/// window's fine values (0-63, first window only) and coarse values (low, medium, high) as event names and a
/// revenue range, and each `source-identifier` as a campaign name (from version 2 also per ad network, with the
/// network's name, and per date range).
///
/// Read strictly, as the postbacks are: the text through `StrictJSONParser` (duplicate members refused), then
/// every member checked; unknown members are refused so a misspelt one cannot be ignored silently. A refusal
/// names the line and the reason (an ``AttributionError`` with the code ``AttributionError/Code/invalidSchema``).
public struct ConversionSchema: Sendable {
    /// The newest format version this reader knows (`"schema-version"`); it reads every version from 1 up.
    public static let version = 2
    /// The largest schema file read.
    public static let maximumBytes = 1 << 20

    /// What one conversion value means.
    @_spi(CommandLine) @_spi(Servers) public struct Meaning: Sendable, Hashable {
        /// The events the value stands for, in the schema's order.
        public let events: [String]
        /// The revenue the value stands for, in the app's currency; nil when the schema gives none.
        public let revenue: RevenueRange?
    }

    /// A revenue range, low to high inclusive.
    @_spi(CommandLine) @_spi(Servers) public struct RevenueRange: Sendable, Hashable {
        /// The lowest revenue, inclusive.
        public let low: Decimal
        /// The highest revenue, inclusive.
        public let high: Decimal
    }

    /// The meanings of one conversion window's values.
    @_spi(CommandLine) @_spi(Servers) public struct WindowMeanings: Sendable {
        /// By fine value, 0-63 (empty but for the first window).
        public let fine: [Int: Meaning]
        /// By coarse value (`low`, `medium`, `high`).
        public let coarse: [CoarseConversionValue: Meaning]
    }

    /// One app's schema for one validity period.
    @_spi(CommandLine) @_spi(Servers) public struct App: Sendable {
        /// The App Store ID a postback's `advertised-item-identifier` carries.
        public let advertisedItemIdentifier: UInt64
        /// The app's display name (version 2), when given.
        public let name: String?
        /// The period, as whole UTC days: from the start of `valid-from` up to (not including) the start of the
        /// day after `valid-until` (open-ended without it).
        public let validFrom: Date
        /// The start of the day after `valid-until`, excluded; nil when the entry is open-ended.
        public let validUntil: Date?
        /// The currency of the revenue ranges (an ISO 4217 code), when given.
        public let currency: String?
        /// The app's own campaign names, whichever network a postback is for: by `source-identifier` and by
        /// SKAdNetwork 1.0-3.0's `campaign-id`.
        public let campaigns: Campaigns
        /// The ad networks the entry names (version 2), in the schema's order.
        public let networks: [Network]
        /// Windows 1, 2 and 3, at positions 0, 1 and 2 (a window the schema omits means nothing).
        public let windows: [WindowMeanings]
        /// Positions in `networks` by signed identifier: exact bytes, so two ids differing in code points only
        /// (canonically equivalent) are two networks.
        private let networkPositions: [ExactString: Int]

        init(advertisedItemIdentifier: UInt64, name: String?, validFrom: Date, validUntil: Date?, currency: String?,
             campaigns: Campaigns, networks: [Network], windows: [WindowMeanings]) {
            self.advertisedItemIdentifier = advertisedItemIdentifier
            self.name = name
            self.validFrom = validFrom
            self.validUntil = validUntil
            self.currency = currency
            self.campaigns = campaigns
            self.networks = networks
            self.windows = windows
            networkPositions = Dictionary(uniqueKeysWithValues: networks.enumerated().map {
                ($0.element.adNetworkIdentifier, $0.offset)
            })
        }

        /// True when `date` falls in the validity period.
        ///
        /// - Parameter date: the time a postback is decoded as of.
        /// - Returns: whether the entry applies at `date`.
        public func isValid(at date: Date) -> Bool {
            date >= validFrom && validUntil.map { date < $0 } ?? true
        }

        /// The network the entry names by this signed identifier.
        ///
        /// - Parameter adNetworkIdentifier: a postback's signed ad network identifier.
        /// - Returns: the network, or nil when the entry does not name it.
        public func network(_ adNetworkIdentifier: ExactString) -> Network? {
            networkPositions[adNetworkIdentifier].map { networks[$0] }
        }

        /// The campaign name of a postback as of `date`: its network's name for the identifier when the network
        /// has one that applies at `date`, else the app's own (docs/schema.md, "Which name applies").
        ///
        /// - Parameters:
        ///   - facts: the postback's facts (its identifiers and signed ad network).
        ///   - date: the time the postback is decoded as of.
        /// - Returns: the campaign name, or nil when neither the network nor the app names it at `date`.
        public func campaign(of facts: ConversionFacts, at date: Date) -> String? {
            campaign(of: facts, network: facts.adNetworkIdentifier.flatMap(network), at: date)
        }

        /// ``campaign(of:at:)`` with the network already looked up.
        func campaign(of facts: ConversionFacts, network: Network?, at date: Date) -> String? {
            network?.campaigns.name(of: facts, at: date) ?? campaigns.name(of: facts, at: date)
        }
    }

    /// The file's `"schema-version"`: 1 or 2. From 2 a record's `decoded` also names the network and the app.
    public let version: Int
    /// The app entries, in the schema's order.
    @_spi(CommandLine) @_spi(Servers) public let apps: [App]

    /// Why a schema was refused: the line (1-based) and the reason. Public callers receive it as an
    /// ``AttributionError`` with the code ``AttributionError/Code/invalidSchema`` and the reason `line N: reason`.
    struct Refusal: Error, Sendable, CustomStringConvertible {
        /// The line of the schema's text that is wrong, 1-based.
        let line: Int
        /// What is wrong, in words.
        let reason: String
        /// `line N: reason`.
        var description: String { "line \(line): \(reason)" }
    }

    /// The app's schema valid at `date`, if any (periods of one app never overlap).
    /// - Parameters:
    ///   - advertisedItemIdentifier: the app's App Store ID.
    ///   - date: the time the entry must be valid at.
    /// - Returns: the app's entry for `date`, or nil.
    @_spi(CommandLine) @_spi(Servers) public func app(_ advertisedItemIdentifier: UInt64, at date: Date) -> App? {
        apps.first { $0.advertisedItemIdentifier == advertisedItemIdentifier && $0.isValid(at: date) }
    }

    /// Reads a schema from its JSON text.
    /// - Parameter bytes: the schema's JSON text, UTF-8, at most ``maximumBytes``.
    /// - Throws: ``AttributionError`` with the code ``AttributionError/Code/invalidSchema`` for a schema that is not
    ///   exactly the format; its reason names the line and what is wrong (`line N: reason`).
    public init(parsing bytes: [UInt8]) throws(AttributionError) {
        do {
            try self.init(refusing: bytes)
        } catch {
            throw AttributionError(.invalidSchema, error.description)
        }
    }

    /// ``init(parsing:)``, refusing with the line and the reason apart.
    init(refusing bytes: [UInt8]) throws(Refusal) {
        guard bytes.count <= Self.maximumBytes else {
            throw Refusal(line: 1, reason: "the schema is larger than \(Self.maximumBytes) bytes")
        }
        let root: JSONValue
        do {
            root = try StrictJSONParser.parse(bytes, options: .init(valueBudget: nil))
        } catch {
            throw Refusal(line: JSONTextLines.line(ofByte: Self.byteOffset(in: error.reason) ?? 0, in: bytes),
                          reason: error.reason)
        }
        let reader = Reader(lines: JSONTextLines(bytes))
        (version, apps) = try reader.schema(root)
    }

    /// The offset a parser message names (`... at byte N`), if any.
    private static func byteOffset(in reason: String) -> Int? {
        guard let range = reason.range(of: "at byte ", options: .backwards) else { return nil }
        return Int(reason[range.upperBound...].prefix { $0.isASCII && $0.isNumber })
    }
}

extension ConversionSchema {
    /// Checks each value against the format, refusing with the value's line.
    struct Reader {
        let lines: JSONTextLines

        func refuse(_ path: [String], _ reason: String) -> Refusal {
            Refusal(line: lines.line(of: path), reason: reason)
        }

        /// The members of the object at `path`, refusing one not in `known` (names compared by code points).
        func object(_ value: JSONValue, _ path: [String], what: String, known: [String]) throws(Refusal)
            -> [(name: String, value: JSONValue)] {
            guard let object = value.objectValue else {
                throw refuse(path, "\(what) must be an object, not \(value.typeName)")
            }
            for member in object.members where !known.contains(where: { $0.utf8.elementsEqual(member.name.utf8) }) {
                throw refuse(path + [member.name], "unknown member \(JSONValue.quoted(member.name)) in \(what) "
                    + "(known: \(known.joined(separator: ", ")))")
            }
            return object.members.map { ($0.name, $0.value) }
        }

        func member(_ members: [(name: String, value: JSONValue)], _ name: String) -> JSONValue? {
            members.first { $0.name.utf8.elementsEqual(name.utf8) }?.value
        }

        func schema(_ root: JSONValue) throws(Refusal) -> (version: Int, apps: [App]) {
            let members = try object(root, [], what: "the schema", known: ["schema-version", "apps"])
            guard let versionValue = member(members, "schema-version") else {
                throw refuse([], "the schema has no \"schema-version\" (this reader knows versions 1 to "
                    + "\(ConversionSchema.version))")
            }
            guard let number = versionValue.numberValue?.uint64Value, (1...2).contains(number) else {
                throw refuse(["schema-version"], "\"schema-version\" must be 1 or 2, not "
                    + "\(versionValue.numberValue?.literal ?? versionValue.typeName)")
            }
            let version = Int(number)
            guard let appsValue = member(members, "apps") else { throw refuse([], "the schema has no \"apps\"") }
            guard case .array(let list) = appsValue else {
                throw refuse(["apps"], "\"apps\" must be an array, not \(appsValue.typeName)")
            }
            var apps: [App] = []
            for (position, value) in list.enumerated() {
                let path = ["apps", String(position)]
                let app = try self.app(value, path, version: version)
                if let other = apps.first(where: { $0.advertisedItemIdentifier == app.advertisedItemIdentifier
                    && $0.validFrom < (app.validUntil ?? .distantFuture)
                    && app.validFrom < ($0.validUntil ?? .distantFuture) }) {
                    throw refuse(path, "the validity period of app \(app.advertisedItemIdentifier) overlaps an "
                        + "earlier entry's (from \(RFC3339Timestamp.string(other.validFrom)))")
                }
                apps.append(app)
            }
            return (version, apps)
        }

        func app(_ value: JSONValue, _ path: [String], version: Int) throws(Refusal) -> App {
            let members = try object(value, path, what: "an app", known: [
                "advertised-item-identifier", "valid-from", "valid-until", "currency", "campaigns", "campaign-ids",
                "windows", "name", "networks"])
            for name in ["name", "networks"] where version < 2 && member(members, name) != nil {
                throw refuse(path + [name], "\"\(name)\" needs \"schema-version\": 2")
            }
            guard let item = member(members, "advertised-item-identifier")?.numberValue?.uint64Value else {
                throw refuse(path + ["advertised-item-identifier"],
                             "\"advertised-item-identifier\" must be a whole number (the App Store ID)")
            }
            guard let fromValue = member(members, "valid-from") else {
                throw refuse(path, "an app needs \"valid-from\" (YYYY-MM-DD)")
            }
            let from = try day(fromValue, path + ["valid-from"])
            var until: Date?
            if let untilValue = member(members, "valid-until") {
                let last = try day(untilValue, path + ["valid-until"])
                guard last >= from else {
                    throw refuse(path + ["valid-until"], "\"valid-until\" is before \"valid-from\"")
                }
                until = last.addingTimeInterval(86_400)
            }
            var currency: String?
            if let value = member(members, "currency") {
                guard let text = value.stringValue, text.utf8.count == 3,
                      text.utf8.allSatisfy({ (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) }) else {
                    throw refuse(path + ["currency"], "\"currency\" must be three capital letters (ISO 4217)")
                }
                currency = text
            }
            let period = Campaign(name: "", validFrom: from, validUntil: until)
            let campaigns = try self.campaigns(members, path, version: version, app: period)
            var windows = [WindowMeanings](repeating: WindowMeanings(fine: [:], coarse: [:]), count: 3)
            if let value = member(members, "windows") {
                for (name, window) in try object(value, path + ["windows"], what: "\"windows\"",
                                                 known: ["1", "2", "3"]) {
                    let number = Int(name)!
                    windows[number - 1] = try meanings(window, path + ["windows", name], window: number)
                }
            }
            let name = try displayName(member(members, "name"), path + ["name"], what: "an app's \"name\"")
            let networks = try self.networks(member(members, "networks"), path + ["networks"], app: period)
            return App(advertisedItemIdentifier: item, name: name, validFrom: from, validUntil: until,
                       currency: currency, campaigns: campaigns, networks: networks, windows: windows)
        }

        /// The member names of a `campaigns` object that are source identifiers: 2 to 4 ASCII digits. Any other
        /// name is then refused as unknown.
        static func sourceIdentifiers(in value: JSONValue) -> [String] {
            (value.objectValue?.members ?? []).map(\.name).filter { name in
                (2...4).contains(name.utf8.count)
                    && name.utf8.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
            }
        }

        /// The member names of a `campaign-ids` object that are SKAdNetwork campaign ids: 1 to
        /// 100 in decimal without a leading zero [Apple: "Identifying the parameters in install-validation
        /// postbacks"]. Any other name is then refused as unknown.
        static func campaignIDs(in value: JSONValue) -> [String] {
            (value.objectValue?.members ?? []).map(\.name).filter { name in
                let digits = name.utf8
                return (1...3).contains(digits.count) && digits.first != UInt8(ascii: "0")
                    && digits.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
                    && (1...100).contains(UInt64(name) ?? 0)
            }
        }

        func meanings(_ value: JSONValue, _ path: [String], window: Int) throws(Refusal) -> WindowMeanings {
            let members = try object(value, path, what: "window \(window)", known: ["fine", "coarse"])
            var fine: [Int: Meaning] = [:]
            if let fineValue = member(members, "fine") {
                guard window == 1 else {
                    throw refuse(path + ["fine"], "only window 1's postback carries a fine conversion value "
                        + "(postback-sequence-index 0)")
                }
                let names = (fineValue.objectValue?.members ?? []).map(\.name)
                for (name, meaningValue) in try object(fineValue, path + ["fine"], what: "\"fine\"", known: names) {
                    guard let values = Self.fineRange(name) else {
                        throw refuse(path + ["fine", name], "a fine value must be N or N-M with 0 <= N <= M <= 63 "
                            + "(decimal, no leading zero), not \(JSONValue.quoted(name))")
                    }
                    let meaning = try self.meaning(meaningValue, path + ["fine", name])
                    for fineValue in values {
                        guard fine[fineValue] == nil else {
                            throw refuse(path + ["fine", name], "fine value \(fineValue) is given twice")
                        }
                        fine[fineValue] = meaning
                    }
                }
            }
            var coarse: [CoarseConversionValue: Meaning] = [:]
            if let coarseValue = member(members, "coarse") {
                for (name, meaningValue) in try object(coarseValue, path + ["coarse"], what: "\"coarse\"",
                                                       known: CoarseConversionValue.allCases.map(\.rawValue)) {
                    let value = CoarseConversionValue.allCases.first { $0.rawValue.utf8.elementsEqual(name.utf8) }!
                    coarse[value] = try meaning(meaningValue, path + ["coarse", name])
                }
            }
            return WindowMeanings(fine: fine, coarse: coarse)
        }

        /// `N` or `N-M` (0 <= N <= M <= 63, decimal without leading zeros) as the values it covers.
        static func fineRange(_ name: String) -> ClosedRange<Int>? {
            func number(_ text: Substring) -> Int? {
                guard !text.isEmpty, text.utf8.count <= 2, text.utf8.allSatisfy({ (48...57).contains($0) }),
                      text.utf8.count == 1 || text.utf8.first != UInt8(ascii: "0"),
                      let value = Int(text), (0...63).contains(value) else { return nil }
                return value
            }
            let parts = name.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
            guard let low = number(parts[0]) else { return nil }
            guard parts.count == 2 else { return low...low }
            guard let high = number(parts[1]), low <= high else { return nil }
            return low...high
        }

        func meaning(_ value: JSONValue, _ path: [String]) throws(Refusal) -> Meaning {
            let members = try object(value, path, what: "a value's meaning", known: ["events", "revenue"])
            guard let eventsValue = member(members, "events"), case .array(let list) = eventsValue else {
                throw refuse(path, "a value's meaning needs \"events\", an array of event names")
            }
            var events: [String] = []
            for (position, event) in list.enumerated() {
                guard let name = event.stringValue, !name.isEmpty else {
                    throw refuse(path + ["events", String(position)], "an event name must be a non-empty string")
                }
                events.append(name)
            }
            var revenue: RevenueRange?
            if let revenueValue = member(members, "revenue") {
                let bounds = try object(revenueValue, path + ["revenue"], what: "\"revenue\"", known: ["low", "high"])
                let low = try amount(member(bounds, "low"), path + ["revenue", "low"], name: "low")
                let high = try amount(member(bounds, "high"), path + ["revenue", "high"], name: "high")
                guard low <= high else { throw refuse(path + ["revenue"], "revenue \"low\" is above \"high\"") }
                revenue = RevenueRange(low: low, high: high)
            }
            return Meaning(events: events, revenue: revenue)
        }

        func amount(_ value: JSONValue?, _ path: [String], name: String) throws(Refusal) -> Decimal {
            guard let value else { throw refuse(Array(path.dropLast()), "\"revenue\" needs \"\(name)\"") }
            guard let literal = value.numberValue?.literal, !literal.hasPrefix("-"),
                  let amount = Decimal(string: literal, locale: Locale(identifier: "en_US_POSIX")),
                  amount <= 1_000_000_000 else {
                throw refuse(path, "revenue \"\(name)\" must be a number from 0 to 1000000000")
            }
            return amount
        }

        /// A `YYYY-MM-DD` string as the start of that UTC day.
        func day(_ value: JSONValue, _ path: [String]) throws(Refusal) -> Date {
            let bytes = Array((value.stringValue ?? "").utf8)
            func digits(_ range: Range<Int>) -> Int? {
                guard bytes[range].allSatisfy({ (48...57).contains($0) }) else { return nil }
                return bytes[range].reduce(0) { $0 * 10 + Int($1 - 48) }
            }
            guard bytes.count == 10, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"),
                  let year = digits(0..<4), let month = digits(5..<7), let day = digits(8..<10),
                  (1...12).contains(month), (1...Self.daysIn(month: month, year: year)).contains(day) else {
                throw refuse(path, "\(path.last!) must be a date written YYYY-MM-DD")
            }
            return Date(timeIntervalSince1970: Double(Self.daysSince1970(year: year, month: month, day: day)) * 86_400)
        }

        static func daysIn(month: Int, year: Int) -> Int {
            let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
            return [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]
        }

        /// Days from 1970-01-01 to a date of the proleptic Gregorian calendar (H. Hinnant's days_from_civil).
        static func daysSince1970(year: Int, month: Int, day: Int) -> Int {
            let y = month <= 2 ? year - 1 : year
            let era = (y >= 0 ? y : y - 399) / 400
            let yearOfEra = y - era * 400
            let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
            let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
            return era * 146_097 + dayOfEra - 719_468
        }
    }
}
