import Foundation
import Testing
@_spi(CommandLine) @_spi(Servers) @_spi(Stores) @testable import Attribution
@testable import postback_verify

/// Issue 33 item 3, the parts of the report page that need no browser: text from input made safe and short,
/// numbers in one fixed format, the `.html` suffix in any case, legends from the library's definitions, and
/// counts that tell names apart by their code points.
@Suite("The report page's text, numbers and counts")
struct ReportPageTests {
    /// Every kind of scalar that draws nothing or moves other text, as a name could carry it.
    static let hiddenScalars: [Unicode.Scalar] = [
        "\u{202A}", "\u{202B}", "\u{202C}", "\u{202D}", "\u{202E}",  // embeddings, pop, overrides
        "\u{2066}", "\u{2067}", "\u{2068}", "\u{2069}",              // isolates
        "\u{200B}", "\u{200C}", "\u{200D}", "\u{200E}", "\u{200F}",  // zero-width, marks
        "\u{061C}", "\u{FEFF}", "\u{00AD}", "\u{2060}", "\u{E0041}",  // Arabic mark, BOM, soft hyphen, joiner, tag
        "\u{2028}", "\u{2029}",                                      // line and paragraph separators
        "\u{01}", "\u{09}", "\u{0A}", "\u{7F}", "\u{85}", "\u{9B}",  // C0, DEL, C1
        "\u{3164}", "\u{115F}",                                      // Hangul fillers
    ]

    @Test("A hidden or bidirectional scalar in a name never reaches the page raw: it is shown as its \\u{…} marker",
          arguments: hiddenScalars)
    func hiddenScalarShownAsMarker(_ scalar: Unicode.Scalar) {
        let name = "Spring" + String(Character(scalar)) + "sale"
        let hex = String(scalar.value, radix: 16, uppercase: true)
        for shown in [PageText.html(name), PageText.attribute(name)] {
            #expect(!shown.unicodeScalars.contains(scalar), "U+\(hex) raw in \(shown.debugDescription)")
            #expect(shown.contains("\\u{\(hex)}"), "\(shown.debugDescription)")
            #expect(shown.contains("Spring") && shown.contains("sale"))
        }
        #expect(PageText.html(name).hasPrefix("<bdi>"), "isolated too")
    }

    @Test("Markup and quotes in a name are escaped in content and attributes", arguments: [
        ("<script>alert('x')</script>", "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;"),
        ("a & \"b\"", "a &amp; &quot;b&quot;"),
    ])
    func markupEscaped(_ name: String, escaped: String) {
        #expect(PageText.attribute(name) == escaped)
        #expect(PageText.html(name) == "<bdi>\(escaped)</bdi>")
    }

    @Test("Letters of any script, emoji without joiners and accents are shown as themselves")
    func ordinaryTextKept() {
        for name in ["שלום", "مرحبا", "café", "cafe\u{301}", "日本語", "🚀"] {
            #expect(PageText.html(name) == "<bdi>\(name)</bdi>", "\(name)")
        }
    }

    @Test("Regression (issue 33): a 10,000-character name is shortened on the page, whole in its tooltip")
    func longNameShortened() throws {
        let name = String(repeating: "W", count: 10_000)
        let shown = PageText.html(name, limit: 80)
        let tooltip = try #require(shown.firstMatch(of: /title="([^"]*)"/)).1
        #expect(tooltip.utf8.elementsEqual(name.utf8))
        let visible = shown.replacing(/<[^>]*>/, with: "")
        #expect(visible.unicodeScalars.count == 80 && visible.hasSuffix("…"), "\(visible.count)")
        // Combining marks stacked on one letter are one character but many scalars: the limit counts scalars.
        let stacked = "a" + String(repeating: "\u{301}", count: 5_000)
        #expect(PageText.html(stacked, limit: 80).replacing(/<[^>]*>/, with: "").unicodeScalars.count == 80)
        #expect(!PageText.html("short").contains("title="))
    }

    @Test("Amounts show grouped thousands and two decimals, rounded half away from zero", arguments: [
        ("19343.8", "19,343.80"), ("18977.19", "18,977.19"), ("0", "0.00"), ("1", "1.00"), ("0.004", "0.00"),
        ("999.995", "1,000.00"), ("1234567.005", "1,234,567.01"), ("-1234.5", "-1,234.50"), ("100", "100.00"),
    ])
    func amountFormat(_ value: String, shown: String) throws {
        #expect(PageNumber.amount(try #require(Decimal(string: value))) == shown)
    }

    @Test("Counts show grouped thousands", arguments: [
        (0, "0"), (7, "7"), (999, "999"), (1000, "1,000"), (12_345, "12,345"), (1_234_567, "1,234,567"),
        (-4200, "-4,200"),
    ])
    func countFormat(_ value: Int, shown: String) {
        #expect(PageNumber.count(value) == shown)
    }

    @Test("Regression (issue 33): --report r.HTML wrote JSON; the .html suffix is matched in any ASCII case",
          arguments: [
        ("r.html", true), ("r.HTML", true), ("r.Html", true), ("dir.x/r.hTmL", true), (".html", true),
        ("r.htm", false), ("r.json", false), ("rhtml", false), ("html", false), ("r.html.json", false),
        ("r.\u{FF48}tml", false),  // FULLWIDTH LATIN SMALL LETTER H
        ("r.htm\u{2113}", false),  // SCRIPT SMALL L
    ])
    func htmlSuffix(_ path: String, isPage: Bool) {
        #expect(RunReport.isPage(path) == isPage)
    }

    @Test("An invalid reason's legend names every rule that gives its code, with the catalogue's summary")
    func codeLegendFromCatalogue() throws {
        for code in AttributionError.Code.itemCodes {
            let meaning = try #require(ReportLegend.code(explaining: code.rawValue), "\(code)")
            let rules = RuleID.allCases.filter { $0.code == code }
            for rule in rules {
                #expect(meaning.contains("\(rule.rawValue) (\(rule.appliesTo)): \(rule.summary)"), "\(code)")
            }
            if rules.isEmpty {
                #expect(code == .ruleWarning)
                for rule in RuleID.allCases where rule.isWarning { #expect(meaning.contains(rule.rawValue)) }
            }
        }
        #expect(ReportLegend.code(explaining: "not-a-code") == nil)
        #expect(ReportLegend.rule(explaining: "T1")?.contains(RuleID.t1.summary) == true)
        // A rule ID is matched by its code points: a fullwidth T is no rule.
        #expect(ReportLegend.rule(explaining: "\u{FF34}1") == nil)
        #expect((0..<4).allSatisfy { ReportLegend.tier($0) != nil } && ReportLegend.tier(4) == nil)
    }

    /// A one-app schema whose fine values 0-9 mean `first` and 10-19 `second`, revenue 1.25 each.
    static func schema(events first: String, _ second: String) throws -> ConversionSchema {
        let text = """
            {"schema-version": 1, "apps": [{"advertised-item-identifier": 7, "valid-from": "2024-01-01",
              "currency": "EUR", "campaigns": {"12": "Brand"},
              "windows": {"1": {"fine": {
                "0-9": {"events": ["install", "\(first)", "\(first)"], "revenue": {"low": 1.25, "high": 1.25}},
                "10-19": {"events": ["install", "\(second)"], "revenue": {"low": 1.25, "high": 1.25}}}}}}]}
            """
        return try ConversionSchema(parsing: Array(text.utf8))
    }

    static func facts(app: UInt64 = 7, fine: Int) -> ConversionFacts {
        ConversionFacts(environment: .production, advertisedItemIdentifier: app, sourceIdentifier: "12",
                        postbackSequenceIndex: 0, fineValue: fine, coarseValue: nil, valuesAreSigned: false, tier: 2)
    }

    @Test("Event names that only look alike are counted apart; an event named twice in one value counts once")
    func eventsByCodePoints() throws {
        let schema = try Self.schema(events: "caf\u{E9}", "cafe\u{301}")
        #expect("caf\u{E9}" == "cafe\u{301}", "canonically equivalent, or this test proves nothing")
        var report = RunReport()
        let arrival = Date(timeIntervalSince1970: 1_795_608_000)
        for fine in [1, 2, 15] { report.count(Self.facts(fine: fine), decoded: schema.decode(Self.facts(fine: fine),
                                                                                            arrival: arrival)) }
        let events = try #require(report.eventsByApp.first).events
        #expect(events.count == 3)
        #expect(events.first { $0.name.utf8.elementsEqual("caf\u{E9}".utf8) }?.count == 2)
        #expect(events.first { $0.name.utf8.elementsEqual("cafe\u{301}".utf8) }?.count == 1)
        #expect(events.first { $0.name == "install" }?.count == 3)
        let totals = report.totals
        #expect(totals.postbacks == 3 && totals.windows == [3, 0, 0] && totals.withRevenue == 3)
        #expect(totals.revenue.sums.count == 1 && totals.revenue.sums.first?.low == Decimal(string: "3.75"))
    }

    @Test("Regression (issue 33): an app not in the schema says so in words, not a bare 0 of revenue")
    func appNotInSchemaInWords() throws {
        let schema = try Self.schema(events: "a", "b")
        var report = RunReport()
        let facts = Self.facts(app: 99, fine: 1)
        report.count(facts, decoded: schema.decode(facts, arrival: Date()))
        let row = try #require(report.sortedCampaigns.first)
        #expect(row.totals.appNotInSchema == 1)
        let html = ReportPage.campaignTable(report)
        #expect(html.contains("not in the schema"))
        #expect(!html.contains("campaign-0-revenue-low"), "no revenue number for an app the schema lacks")
    }

    @Test("App and network names from the schema are shown escaped, their controls as markers")
    func appAndNetworkNames() throws {
        let schema = try Self.schema(events: "a", "b")
        var report = RunReport()
        let facts = Self.facts(fine: 1)
        report.count(facts, decoded: schema.decode(facts, arrival: Date()))
        var rows = report.sortedCampaigns
        rows[0].totals.appName = "Game\u{202E}<b>"
        rows[0].totals.networkName = "Net\u{2067}work"
        let html = ReportPage.campaignRows(rows, showsNetwork: true)
        #expect(html.contains("Game<span class=\"cf\" dir=\"ltr\">\\u{202E}</span>&lt;b&gt;"))
        #expect(html.contains("Net<span class=\"cf\" dir=\"ltr\">\\u{2067}</span>work"))
        #expect(!html.unicodeScalars.contains("\u{202E}") && !html.unicodeScalars.contains("\u{2067}"))
    }
}
