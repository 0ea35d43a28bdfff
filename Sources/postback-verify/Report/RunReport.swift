@_spi(CommandLine) import Attribution
import Foundation

/// The run report's counts beyond the summary's (`--report`, docs/cli.md section 8): crowd-anonymity tiers, values
/// per conversion window, fine and coarse value histograms and, with a schema, conversions and revenue per
/// campaign. Counts only: its size does not grow with the number of items (campaigns are bounded by the apps and
/// 4-digit source identifiers a run meets).
struct RunReport {
    /// Valid AdAttributionKit postbacks by tier (0-3).
    private(set) var tiers = [Int](repeating: 0, count: 4)
    /// Per window (1, 2, 3 at 0, 1, 2): valid postbacks, and those of them that carry no conversion value.
    private(set) var windowPostbacks = [Int](repeating: 0, count: 3)
    private(set) var windowWithoutValue = [Int](repeating: 0, count: 3)
    /// How often each fine value (0-63) and coarse value (low, medium, high) was carried.
    private(set) var fineValues = [Int](repeating: 0, count: 64)
    private(set) var coarseValues = [Int](repeating: 0, count: CoarseConversionValue.allCases.count)
    /// With a schema: per app and source identifier, what its postbacks decoded to.
    private(set) var campaigns: [CampaignKey: CampaignTotals] = [:]
    /// A period's report (`export --report`): per UTC day the rows were received on (days since 1970), what
    /// they were; nil for a run, whose items carry no time of their own.
    private(set) var days: [Int64: DayTotals]?

    /// An empty report; one that `countsDays` counts ``days`` too (``count(receivedAt:verdict:decoded:)``).
    init(countsDays: Bool = false) {
        days = countsDays ? [:] : nil
    }

    /// An app's campaign: by `source-identifier`, or (SKAdNetwork 1.0-3.0) by `campaign-id`, and by the signed ad
    /// network, which picks its own identifiers (two networks' `1234` are two campaigns).
    struct CampaignKey: Hashable {
        let app: UInt64
        let sourceIdentifier: String?
        let campaignID: UInt64?
        let adNetworkIdentifier: ExactString?

        /// How a person reads the source: the identifier, or `campaign-id N`.
        var sourceLabel: String {
            sourceIdentifier ?? campaignID.map { "campaign-id \($0)" } ?? ""
        }
    }

    /// What a campaign's valid postbacks decoded to.
    struct CampaignTotals {
        var name: String?
        var currency: String?
        /// The schema's names of the network and the app (version 2), when it gives them.
        var networkName: String?
        var appName: String?
        /// Valid postbacks, and those of window 1 (one per attributed install or re-engagement).
        var postbacks = 0
        var firstWindow = 0
        /// Postbacks whose value the schema gives a meaning, and those of them with a revenue range.
        var decodedValues = 0
        var withRevenue = 0
        var revenueLow: Decimal = 0
        var revenueHigh: Decimal = 0
        /// Valid postbacks of windows 2 and 3 (window 1's are ``firstWindow``).
        var secondWindow = 0
        var thirdWindow = 0
        /// Postbacks whose app the schema does not have at their arrival: nothing of them could be decoded.
        var appNotInSchema = 0
        /// How many postbacks' values stand for each event (a postback counts once per event its value names),
        /// by the name's exact code points: two names that only look alike are two events.
        var events: [ExactString: Int] = [:]

        /// Valid postbacks per conversion window, 1 to 3 at 0 to 2.
        var windows: [Int] { [firstWindow, secondWindow, thirdWindow] }
    }

    /// Counts one valid postback's facts, and its decoding when a schema is given.
    mutating func count(_ facts: ConversionFacts, decoded: DecodedConversion?) {
        if let tier = facts.tier, tiers.indices.contains(tier) { tiers[tier] += 1 }
        if let window = facts.window {
            windowPostbacks[window.number - 1] += 1
            if facts.hasNoValue { windowWithoutValue[window.number - 1] += 1 }
        }
        if let fine = facts.fineValue, fineValues.indices.contains(fine) { fineValues[fine] += 1 }
        if let coarse = facts.coarseValue, let position = CoarseConversionValue.allCases.firstIndex(of: coarse) {
            coarseValues[position] += 1
        }
        guard let decoded else { return }
        let key = CampaignKey(app: facts.advertisedItemIdentifier, sourceIdentifier: facts.sourceIdentifier,
                              campaignID: facts.campaignID, adNetworkIdentifier: facts.adNetworkIdentifier)
        // Updated in place: one hash of the key, and the totals never copied.
        Self.add(decoded, to: &campaigns[key, default: CampaignTotals()])
    }

    private static func add(_ decoded: DecodedConversion, to totals: inout CampaignTotals) {
        totals.name = totals.name ?? decoded.campaign
        totals.currency = totals.currency ?? decoded.currency
        totals.networkName = totals.networkName ?? decoded.network
        totals.appName = totals.appName ?? decoded.appName
        totals.postbacks += 1
        switch decoded.window.number {
        case 1: totals.firstWindow += 1
        case 2: totals.secondWindow += 1
        default: totals.thirdWindow += 1
        }
        if !decoded.appKnown { totals.appNotInSchema += 1 }
        if let meaning = decoded.meaning {
            totals.decodedValues += 1
            var named: Set<ExactString> = []
            for event in meaning.events where named.insert(ExactString(event)).inserted {
                totals.events[ExactString(event), default: 0] += 1
            }
            if let revenue = meaning.revenue {
                totals.withRevenue += 1
                totals.revenueLow += revenue.low
                totals.revenueHigh += revenue.high
            }
        }
    }

    /// The campaigns in a stable order: by app, then source identifier (byte order), then SKAdNetwork 1.0-3.0's
    /// campaign ids (in number order), then ad network (byte order).
    var sortedCampaigns: [(key: CampaignKey, totals: CampaignTotals)] {
        campaigns.map { ($0.key, $0.value) }.sorted { first, second in
            let (a, b) = (first.key, second.key)
            if a.app != b.app { return a.app < b.app }
            switch (a.sourceIdentifier, b.sourceIdentifier) {
            case (let x?, let y?) where !x.utf8.elementsEqual(y.utf8): return x.utf8.lexicographicallyPrecedes(y.utf8)
            case (.some, nil): return true
            case (nil, .some): return false
            default:
                if a.campaignID != b.campaignID { return (a.campaignID ?? 0) < (b.campaignID ?? 0) }
                return (a.adNetworkIdentifier?.utf8 ?? []).lexicographicallyPrecedes(b.adNetworkIdentifier?.utf8 ?? [])
            }
        }
    }

    /// Counts one row of a period, received at `received`, on its UTC day (a report made to count ``days``).
    mutating func count(receivedAt received: Date, verdict: Verdict, decoded: DecodedConversion?) {
        guard days != nil else { return }
        let day = Int64((received.timeIntervalSince1970 / 86_400).rounded(.down))
        var totals = days?[day] ?? DayTotals()
        totals.items += 1
        if verdict == .valid { totals.valid += 1 }
        if let revenue = decoded?.meaning?.revenue {
            totals.revenue.add(currency: decoded?.currency, postbacks: 1, low: revenue.low, high: revenue.high)
        }
        days?[day] = totals
    }

    /// A window's share of postbacks without a value, 0 when it has none.
    func nullRate(window: Int) -> Double {
        windowPostbacks[window] == 0 ? 0 : Double(windowWithoutValue[window]) / Double(windowPostbacks[window])
    }
}

/// What the report says about the run beside the counts.
struct ReportContext {
    /// The label standard input's items go by.
    let label: String
    /// What the report counts: the inputs of a run, or the state a period was exported from.
    let inputs: ReportInputs
    let started: Date
    let seconds: Double
    let schemaPath: String?
    let interrupted: String?
}

extension RunReport {
    /// The report as JSON (docs/cli.md section 8): one object, members in a fixed order.
    func json(summary: RunSummary, context: ReportContext) -> [UInt8] {
        var out = JSONWriter()
        out.open()
        out.member("report-version") { $0.integer(1) }
        out.member("label") { $0.string(context.label) }
        out.member("started") { $0.string(RFC3339Timestamp.string(context.started)) }
        out.member("seconds") { $0.raw(String(format: "%.3f", context.seconds)) }
        out.member("interrupted") { writer in context.interrupted.map { writer.string($0) } ?? writer.null() }
        out.member("schema") { writer in context.schemaPath.map { writer.string($0) } ?? writer.null() }
        out.member("items") { $0.integer(summary.items) }
        out.member("valid") { $0.integer(summary.valid) }
        out.member("invalid") { $0.integer(summary.invalid) }
        out.member("duplicates") { $0.integer(summary.duplicates) }
        out.member("warnings") { $0.integer(summary.warnings) }
        out.member("invalid-reasons") { $0.counts(summary.invalidByCode) }
        out.member("warnings-by-rule") { $0.counts(summary.warningsByRule) }
        out.member("valid-by-environment") { writer in
            writer.counts(Dictionary(uniqueKeysWithValues: [KeyEnvironment.production, .development, .custom]
                .map { ($0.rawValue, summary.validByEnvironment[$0] ?? 0) }))
        }
        out.member("tiers") { writer in
            writer.counts(Dictionary(uniqueKeysWithValues: tiers.enumerated().map { (String($0.offset), $0.element) }))
        }
        out.member("windows") { writer in
            writer.array(0..<3) { writer, window in
                writer.open()
                writer.member("window") { $0.integer(window + 1) }
                writer.member("postbacks") { $0.integer(windowPostbacks[window]) }
                writer.member("without-value") { $0.integer(windowWithoutValue[window]) }
                writer.member("null-rate") { $0.raw(String(format: "%.4f", nullRate(window: window))) }
                writer.close()
            }
        }
        out.member("fine-values") { writer in writer.array(fineValues) { $0.integer($1) } }
        out.member("coarse-values") { writer in
            writer.counts(Dictionary(uniqueKeysWithValues: CoarseConversionValue.allCases.enumerated()
                .map { ($0.element.rawValue, coarseValues[$0.offset]) }), order: CoarseConversionValue.allCases
                .map(\.rawValue))
        }
        out.member("campaigns") { writer in
            guard context.schemaPath != nil else { return writer.null() }
            writer.array(sortedCampaigns) { writer, campaign in
                let totals = campaign.totals
                writer.open()
                writer.member("advertised-item-identifier") { $0.raw(String(campaign.key.app)) }
                writer.member("source-identifier") { writer in
                    campaign.key.sourceIdentifier.map { writer.string($0) } ?? writer.null()
                }
                writer.member("campaign-id") { writer in
                    campaign.key.campaignID.map { writer.raw(String($0)) } ?? writer.null()
                }
                writer.member("campaign") { writer in totals.name.map { writer.string($0) } ?? writer.null() }
                writer.member("postbacks") { $0.integer(totals.postbacks) }
                writer.member("window-1-postbacks") { $0.integer(totals.firstWindow) }
                writer.member("decoded-values") { $0.integer(totals.decodedValues) }
                writer.member("with-revenue") { $0.integer(totals.withRevenue) }
                writer.member("revenue-low") { $0.raw(totals.revenueLow.description) }
                writer.member("revenue-high") { $0.raw(totals.revenueHigh.description) }
                writer.member("currency") { writer in totals.currency.map { writer.string($0) } ?? writer.null() }
                writer.member("window-2-postbacks") { $0.integer(totals.secondWindow) }
                writer.member("window-3-postbacks") { $0.integer(totals.thirdWindow) }
                writer.member("app-not-in-schema") { $0.integer(totals.appNotInSchema) }
                writer.member("events") { $0.counts(Self.sortedEvents(totals.events)) }
                writer.member("ad-network-id") { writer in
                    campaign.key.adNetworkIdentifier.map { writer.string($0.description) } ?? writer.null()
                }
                writer.member("network") { writer in totals.networkName.map { writer.string($0) } ?? writer.null() }
                writer.member("app-name") { writer in totals.appName.map { writer.string($0) } ?? writer.null() }
                writer.close()
            }
        }
        out.member("inputs") { writer in writer.array(context.inputs.names) { $0.string($1) } }
        out.member("totals") { writer in
            guard context.schemaPath != nil else { return writer.null() }
            writeTotals(to: &writer)
        }
        out.member("events") { writer in
            guard context.schemaPath != nil else { return writer.null() }
            writeEvents(to: &writer)
        }
        out.member("days") { writer in
            guard days != nil else { return writer.null() }
            writeDays(to: &writer)
        }
        out.close()
        out.bytes.append(UInt8(ascii: "\n"))
        return out.bytes
    }
}

/// A small writer of compact JSON for the report (strings quoted as the records quote them).
struct JSONWriter {
    var bytes: [UInt8] = []
    private var needsComma = false

    mutating func open() { comma(); bytes.append(UInt8(ascii: "{")); needsComma = false }
    mutating func close() { bytes.append(UInt8(ascii: "}")); needsComma = true }

    mutating func member(_ name: String, _ value: (inout JSONWriter) -> Void) {
        comma()
        JSONValue.appendQuoted(name, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        needsComma = false
        value(&self)
        needsComma = true
    }

    mutating func string(_ text: String) { comma(); JSONValue.appendQuoted(text, to: &bytes); needsComma = true }
    mutating func integer(_ value: Int) { raw(String(value)) }
    mutating func null() { raw("null") }
    mutating func raw(_ text: String) { comma(); bytes += Array(text.utf8); needsComma = true }

    mutating func array<Elements: Sequence>(
        _ elements: Elements, _ body: (inout JSONWriter, Elements.Element) -> Void
    ) {
        comma()
        bytes.append(UInt8(ascii: "["))
        needsComma = false
        for element in elements { body(&self, element) }
        bytes.append(UInt8(ascii: "]"))
        needsComma = true
    }

    /// An object of counts, by name in byte order unless `order` gives it.
    mutating func counts(_ counts: [String: Int], order: [String]? = nil) {
        open()
        let names = order ?? counts.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        for name in names { member(name) { $0.integer(counts[name] ?? 0) } }
        close()
    }

    /// An object of counts in the order given, names as they are (two that only look alike stay two members).
    mutating func counts(_ counts: [(name: String, count: Int)]) {
        open()
        for (name, count) in counts { member(name) { $0.integer(count) } }
        close()
    }

    private mutating func comma() {
        if needsComma { bytes.append(UInt8(ascii: ",")) }
    }
}
