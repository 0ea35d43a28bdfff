import Foundation
import Testing
@_spi(CommandLine) @_spi(Servers) @_spi(Stores) @testable import Attribution
@testable import postback_verify

/// Issue 24 item 3 and issue 33 item 3: the HTML report as a person sees it. Headless Chromium renders the page
/// of a fixture run, takes a screenshot, and lays the page out in a frame of a test page whose script reads back
/// every numbered element's text and place, the page's width, and the order on screen of the letters of every
/// text: the numbers are checked against the JSON report of the same run, the layout against the window.
///
/// Skipped, with the reason, when Chromium is not installed, unless `POSTBACK_VERIFY_REQUIRE_CHROMIUM=1`
/// (`.ci/run` sets it, and installs Debian's `chromium`): then it fails.
@Suite("The HTML report in headless Chromium", .serialized)
struct ReportPageChromiumTests {
    static let chromium: String? = {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for directory in path.split(separator: ":") {
            for name in ["chromium", "chromium-browser"] {
                let candidate = "\(directory)/\(name)"
                if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            }
        }
        return nil
    }()

    static let required = ProcessInfo.processInfo.environment["POSTBACK_VERIFY_REQUIRE_CHROMIUM"] == "1"

    /// The width of the frame the page is laid out in, and of the screenshot's window.
    static let width = 1200

    /// Runs Chromium headless on `arguments` plus the page; its standard output, within two minutes.
    static func chromium(_ arguments: [String], page: URL, profile: URL) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try #require(chromium))
        process.arguments = ["--headless", "--no-sandbox", "--disable-gpu", "--user-data-dir=\(profile.path)"]
            + arguments + [page.absoluteString]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let timer = DispatchWorkItem { process.terminate() }
        DispatchQueue.global().asyncAfter(deadline: .now() + 120, execute: timer)
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        timer.cancel()
        #expect(process.terminationStatus == 0, "chromium \(arguments) ended with \(process.terminationStatus)")
        return text
    }

    /// What the test page's script read from the report laid out in its frame.
    struct Layout {
        struct Element {
            let text: String
            let left: Double, right: Double, width: Double, height: Double
            /// The tooltip of the element or of the first element inside it that has one.
            let title: String?
        }

        /// The report document's width (wider than the frame when something pushes past it), and the frame's
        /// (less its scroll bar).
        let scrollWidth: Double
        let viewport: Double
        let elements: [String: Element]
        /// Texts in which two letters or digits, next to each other in the text and shown on one line, appear in
        /// reverse order: what a bidirectional override leaking out of a name does to the text after it.
        let reversed: [String]

        func text(_ id: String) -> String? { elements[id]?.text }

        /// The number an element shows, its grouping commas removed.
        func number(_ id: String) -> Double? {
            elements[id].flatMap { Double($0.text.replacingOccurrences(of: ",", with: "")) }
        }
    }

    /// The test page: the report in a frame `width` pixels wide, and a script that writes what it measures into
    /// `<pre id="out">` as JSON once everything is loaded (the report itself runs no script: its policy forbids it).
    static let harness = """
        <!DOCTYPE html><html><body style="margin:0">
        <iframe id="page" src="REPORT" style="width:WIDTHpx;height:1600px;border:0"></iframe><pre id="out"></pre>
        <script>
        window.addEventListener('load', () => {
          const result = {reversed: []};
          try {
            const frame = document.getElementById('page'), d = frame.contentDocument;
            result.scrollWidth = d.documentElement.scrollWidth;
            result.viewport = d.documentElement.clientWidth;
            result.elements = {};
            for (const e of d.querySelectorAll('[id]')) {
              const r = e.getBoundingClientRect(), titled = e.hasAttribute('title') ? e : e.querySelector('[title]');
              result.elements[e.id] = {text: e.textContent, left: r.left, right: r.right, width: r.width,
                                       height: r.height, title: titled ? titled.getAttribute('title') : null};
            }
            const walker = d.createTreeWalker(d.body, NodeFilter.SHOW_TEXT);
            for (let node; (node = walker.nextNode());) {
              let previous = null;
              for (let i = 0; i < node.data.length; i++) {
                if (!/[A-Za-z0-9]/.test(node.data[i])) { previous = null; continue; }
                const range = d.createRange();
                range.setStart(node, i);
                range.setEnd(node, i + 1);
                const rects = range.getClientRects();
                if (rects.length !== 1 || rects[0].width === 0) { previous = null; continue; }
                const rect = rects[0];
                if (previous && Math.abs(previous.top - rect.top) < 2 && rect.left < previous.left - 0.5) {
                  result.reversed.push(node.data);
                  break;
                }
                previous = rect;
              }
            }
          } catch (error) { result.error = String(error); }
          document.getElementById('out').textContent = JSON.stringify(result);
        });
        </script></body></html>
        """

    /// Lays `page` out in Chromium and reads it back (``Layout``).
    static func layout(of page: URL, scratch: CommandLineScratch) throws -> Layout {
        let test = scratch.url("harness-\(UUID().uuidString).html")
        try Data(harness.replacingOccurrences(of: "REPORT", with: page.lastPathComponent)
            .replacingOccurrences(of: "WIDTH", with: String(width)).utf8).write(to: test)
        let dom = try chromium(["--allow-file-access-from-files", "--dump-dom"], page: test,
                               profile: scratch.url("profile"))
        let output = try #require(dom.firstMatch(of: /<pre id="out">([^<]*)<\/pre>/),
                                  "no output in \(dom.prefix(300))")
        let text = String(output.1).replacingOccurrences(of: "&lt;", with: "<")
            .replacingOccurrences(of: "&gt;", with: ">").replacingOccurrences(of: "&nbsp;", with: "\u{A0}")
            .replacingOccurrences(of: "&amp;", with: "&")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        #expect(json["error"] == nil, "\(json["error"] ?? "")")
        var elements: [String: Layout.Element] = [:]
        for (id, value) in try #require(json["elements"] as? [String: [String: Any]]) {
            elements[id] = Layout.Element(
                text: value["text"] as? String ?? "", left: value["left"] as? Double ?? 0,
                right: value["right"] as? Double ?? 0, width: value["width"] as? Double ?? 0,
                height: value["height"] as? Double ?? 0,
                title: value["title"] as? String)
        }
        return Layout(scrollWidth: try #require(json["scrollWidth"] as? Double),
                      viewport: try #require(json["viewport"] as? Double), elements: elements,
                      reversed: json["reversed"] as? [String] ?? [])
    }

    /// Takes a screenshot of `page` and checks it is a picture with something on it.
    static func screenshot(_ page: URL, scratch: CommandLineScratch, height: Int = 1600) throws {
        let shot = scratch.url("screenshot-\(UUID().uuidString).png")
        _ = try chromium(["--screenshot=\(shot.path)", "--window-size=\(width),\(height)"], page: page,
                         profile: scratch.url("profile"))
        let png = try Data(contentsOf: shot)
        #expect(png.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]), "a PNG")
        #expect(png.count > 20_000, "a page with something on it (\(png.count) bytes)")
    }

    /// Checks what every page must be: as wide as the window at most, every number inside it, no text reversed.
    static func expectReadable(_ layout: Layout, _ comment: Comment) {
        #expect(layout.viewport > Double(width) - 30 && layout.viewport <= Double(width), comment)
        #expect(layout.scrollWidth <= layout.viewport, "the page is wider than the window: \(comment)")
        for (id, element) in layout.elements where id.hasPrefix("campaign") || id.hasPrefix("count-") {
            #expect(element.right <= layout.viewport, "\(id) is off-screen at \(element.right): \(comment)")
        }
        #expect(layout.reversed.isEmpty, "text shown in reverse order: \(layout.reversed): \(comment)")
    }

    @Test("The page Chromium renders shows the JSON report's numbers, totals, events and legends, and fits",
          .enabled(if: chromium != nil || required,
                   "Chromium is not installed (apt-get install chromium); POSTBACK_VERIFY_REQUIRE_CHROMIUM=1 fails"))
    func pageShowsTheReport() throws {
        try #require(Self.chromium != nil, "Chromium is required (POSTBACK_VERIFY_REQUIRE_CHROMIUM=1) but missing")
        let scratch = try CommandLineScratch()
        let page = scratch.url("report.html"), json = scratch.url("report.json")
        for report in [page, json] {
            let run = try RunReportCommandLineTests.run(
                ["--format", "jsonl", "--allow-development", "--schema", RunReportCommandLineTests.schema,
                 "--report", report.path] + RunReportCommandLineTests.inputs)
            #expect(run.status == 1, "\(run.stderr)")
        }
        let report = try RunReportCommandLineTests.json(json)
        try Self.screenshot(page, scratch: scratch)
        let shown = try Self.layout(of: page, scratch: scratch)
        Self.expectReadable(shown, "the fixture run")

        // The header names the paths read; no standard input was read, so no label.
        let inputs = try #require(shown.text("inputs"))
        for path in RunReportCommandLineTests.inputs { #expect(inputs.contains(path), "\(inputs)") }
        #expect(shown.text("label") == nil && !inputs.contains("standard input"), "\(inputs)")
        #expect(report["inputs"] as? [String] == RunReportCommandLineTests.inputs)

        for name in ["items", "valid", "invalid", "duplicates", "warnings"] {
            #expect(shown.number("count-\(name)") == (report[name] as? Int).map(Double.init), "\(name)")
        }
        let environments = try #require(report["valid-by-environment"] as? [String: Int])
        #expect(shown.number("count-development") == environments["development"].map(Double.init))
        for (prefix, member) in [("reason", "invalid-reasons"), ("rule", "warnings-by-rule"),
                                 ("environment", "valid-by-environment"), ("tier", "tiers"),
                                 ("coarse", "coarse-values")] {
            let counts = try #require(report[member] as? [String: Int], "\(member)")
            #expect(!counts.isEmpty, "\(member)")
            for (name, count) in counts {
                #expect(shown.number("\(prefix)-\(name)") == Double(count), "\(member) \(name)")
            }
        }
        // Every code and tier shown is explained with the words of its one definition.
        for code in try #require(report["invalid-reasons"] as? [String: Int]).keys {
            let meaning = try #require(shown.text("reason-\(code)-meaning"), "\(code)")
            for rule in RuleID.allCases where rule.code.map({ $0.rawValue.utf8.elementsEqual(code.utf8) }) == true {
                #expect(meaning.contains(rule.summary), "\(code): \(meaning)")
            }
            #expect(!meaning.isEmpty, "\(code)")
        }
        for rule in try #require(report["warnings-by-rule"] as? [String: Int]).keys {
            let summary = try #require(ReportLegend.rule(rule)).summary
            #expect(shown.text("rule-\(rule)-meaning")?.contains(summary) == true, "\(rule)")
        }
        for tier in 0..<4 {
            #expect(shown.text("tier-\(tier)-meaning") == ReportLegend.tier(tier), "tier \(tier)")
        }
        for (index, window) in try #require(report["windows"] as? [[String: Any]]).enumerated() {
            let number = index + 1
            #expect(shown.number("window-\(number)-postbacks") == (window["postbacks"] as? Int).map(Double.init))
            #expect(shown.number("window-\(number)-without-value")
                == (window["without-value"] as? Int).map(Double.init))
            let rate = try #require(window["null-rate"] as? Double)
            let text = try #require(shown.text("window-\(number)-null-rate"))
            let percent = try #require(Double(text.dropLast()), "\(text)")
            #expect(text.hasSuffix("%") && abs(percent - rate * 100) <= 0.05, "window \(number): \(text)")
        }
        // Every fine value's count is in the grid, where it can be read (a label per bar ran together).
        let fine = try #require(report["fine-values"] as? [Int])
        #expect(fine.contains { $0 > 0 })
        for (value, count) in fine.enumerated() {
            #expect(shown.number("fine-\(value)") == Double(count), "fine value \(value)")
            #expect((shown.elements["fine-\(value)"]?.width ?? 0) > 0, "fine value \(value) is visible")
        }
        try Self.expectCampaigns(report, shown)
    }

    /// The campaign table, its totals row, the totals at the top and the events table against the JSON report.
    static func expectCampaigns(_ report: [String: Any], _ shown: Layout) throws {
        let campaigns = try #require(report["campaigns"] as? [[String: Any]])
        #expect(!campaigns.isEmpty)
        var outsideSchema = 0, withoutRevenue = 0
        for (row, campaign) in campaigns.enumerated() {
            let id = "campaign-\(row)"
            #expect(shown.number("\(id)-postbacks") == (campaign["postbacks"] as? Int).map(Double.init))
            for window in 1...3 {
                #expect(shown.number("\(id)-window-\(window)")
                    == (campaign["window-\(window)-postbacks"] as? Int).map(Double.init), "\(id) window \(window)")
            }
            #expect(shown.number("\(id)-decoded") == (campaign["decoded-values"] as? Int).map(Double.init))
            let postbacks = try #require(campaign["postbacks"] as? Int)
            if campaign["app-not-in-schema"] as? Int == postbacks {
                outsideSchema += 1
                #expect(shown.text("\(id)-app-unknown") == "not in the schema", "\(id)")
                #expect(shown.elements["\(id)-revenue-low"] == nil, "\(id): no revenue for an app not in the schema")
            } else if campaign["with-revenue"] as? Int == 0 {
                withoutRevenue += 1
                #expect(shown.elements["\(id)-revenue-low"] == nil, "\(id)")
            } else {
                for bound in ["low", "high"] {
                    let onPage = try #require(shown.number("\(id)-revenue-\(bound)"), "\(id) revenue \(bound)")
                    let inJSON = try #require(campaign["revenue-\(bound)"] as? NSNumber).doubleValue
                    #expect(abs(onPage - inJSON) < 0.005, "\(id) revenue \(bound)")
                    let text = try #require(shown.text("\(id)-revenue-\(bound)"))
                    #expect(text.wholeMatch(of: /\d{1,3}(,\d{3})*\.\d\d/) != nil, "fixed decimals: \(text)")
                }
            }
            // A name with markup in it (the example schema's "Retargeting <lapsed>") reads as text on the page.
            let name = (campaign["campaign"] as? String) ?? "(unnamed)"
            #expect(shown.text("\(id)-name") == name, "\(id) name")
            let events = try #require(campaign["events"] as? [String: Int])
            for position in 0..<min(events.count, ReportPage.eventsPerRow) {
                let eventName = try #require(shown.text("\(id)-event-\(position)-name"))
                #expect(shown.number("\(id)-event-\(position)") == events[eventName].map(Double.init),
                        "\(id) event \(eventName)")
            }
        }
        #expect(outsideSchema > 0 && withoutRevenue > 0, "the fixtures show both kinds of row without revenue")

        let totals = try #require(report["totals"] as? [String: Any])
        #expect(shown.number("campaigns-total-postbacks") == (totals["postbacks"] as? Int).map(Double.init))
        #expect(shown.number("total-postbacks") == (totals["postbacks"] as? Int).map(Double.init))
        #expect(totals["postbacks"] as? Int == campaigns.compactMap { $0["postbacks"] as? Int }.reduce(0, +))
        for window in 1...3 {
            #expect(shown.number("campaigns-total-window-\(window)")
                == (totals["window-\(window)-postbacks"] as? Int).map(Double.init))
        }
        let revenue = try #require(totals["revenue"] as? [[String: Any]])
        #expect(revenue.count == 2, "the fixtures' apps count in USD and EUR")
        for (position, sum) in revenue.enumerated() {
            for bound in ["low", "high"] {
                let inJSON = try #require(sum["revenue-\(bound)"] as? NSNumber).doubleValue
                for prefix in ["campaigns-total-revenue", "total-revenue"] {
                    let onPage = try #require(shown.number("\(prefix)-\(position)-\(bound)"), "\(prefix)")
                    #expect(abs(onPage - inJSON) < 0.005, "\(prefix) \(position) \(bound)")
                }
            }
        }

        let apps = try #require(report["events"] as? [[String: Any]])
        #expect(!apps.isEmpty)
        for (position, app) in apps.enumerated() {
            let events = try #require(app["events"] as? [String: Int])
            for row in 0..<events.count {
                let name = try #require(shown.text("event-\(position)-\(row)-name"), "app \(position) event \(row)")
                #expect(shown.number("event-\(position)-\(row)") == events[name].map(Double.init), "\(name)")
            }
            #expect(shown.elements["event-\(position)-\(events.count)"] == nil)
        }
    }

    /// The example schema with hostile campaign and event names.
    static func hostileSchema(_ scratch: CommandLineScratch, names: [String: String], event: String) throws -> String {
        var schema = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: TestPaths.packageRoot
            .appendingPathComponent(RunReportCommandLineTests.schema))) as? [String: Any])
        var apps = try #require(schema["apps"] as? [[String: Any]])
        var campaigns = try #require(apps[0]["campaigns"] as? [String: String])
        for (source, name) in names { campaigns[source] = name }
        apps[0]["campaigns"] = campaigns
        var windows = try #require(apps[0]["windows"] as? [String: Any])
        var first = try #require(windows["1"] as? [String: Any])
        var fine = try #require(first["fine"] as? [String: Any])
        fine["24-47"] = ["events": ["install", event], "revenue": ["low": 0.99, "high": 9.99]]
        first["fine"] = fine
        windows["1"] = first
        apps[0]["windows"] = windows
        schema["apps"] = apps
        let path = scratch.url("hostile-schema.json")
        try JSONSerialization.data(withJSONObject: schema).write(to: path)
        return path.path
    }

    @Test("Regression (issue 33): U+202E in a name or --label reversed later text; a long name widened the page",
          .enabled(if: chromium != nil || required,
                   "Chromium is not installed (apt-get install chromium); POSTBACK_VERIFY_REQUIRE_CHROMIUM=1 fails"))
    func hostileNamesCannotReorderOrWiden() throws {
        try #require(Self.chromium != nil, "Chromium is required (POSTBACK_VERIFY_REQUIRE_CHROMIUM=1) but missing")
        let scratch = try CommandLineScratch()
        let override = "Evil\u{202E}gnp.exe after", long = String(repeating: "W", count: 10_000)
        let label = "upload\u{202E}evil after"
        let schema = try Self.hostileSchema(
            scratch, names: ["12": override, "1234": long, "123": "x\u{2067}\u{200B}y"], event: "pur\u{202E}chase")
        let stdin = String(decoding: try TestPaths.bytes(TestPaths.packageRoot
            .appendingPathComponent("Fixtures/valid/postback/compact-one-line-body.json")), as: UTF8.self)
        let page = scratch.url("hostile.HTML")
        let run = try RunReportCommandLineTests.run(
            ["--format", "jsonl", "--allow-development", "--schema", schema, "--label", label,
             "--report", page.path, "-", "Fixtures/valid"], stdin: stdin)
        // 1: the postback on standard input is in Fixtures/valid too, so that copy is a duplicate.
        #expect(run.status == 1, "\(run.stderr)")
        let bytes = try Data(contentsOf: page)
        #expect(bytes.starts(with: Data("<!DOCTYPE html>".utf8)), "r.HTML is a page")
        let html = String(decoding: bytes, as: UTF8.self)
        for scalar: Unicode.Scalar in ["\u{202E}", "\u{2067}", "\u{200B}"] {
            #expect(!html.unicodeScalars.contains(scalar), "U+\(String(scalar.value, radix: 16)) reached the page raw")
        }
        try Self.screenshot(page, scratch: scratch)
        let shown = try Self.layout(of: page, scratch: scratch)
        Self.expectReadable(shown, "hostile names")

        // The header names standard input under its label, the override shown, and the path after it.
        #expect(shown.text("label") == "upload\\u{202E}evil after")
        let header = try #require(shown.elements["header"]?.text)
        #expect(header.contains("standard input, labelled upload\\u{202E}evil after, Fixtures/valid (2 paths"),
                "\(header)")
        let rows = (0..<40).map { "campaign-\($0)" }.filter { shown.elements["\($0)-name"] != nil }
        let overrideRow = try #require(rows.first { shown.text("\($0)-name") == "Evil\\u{202E}gnp.exe after" },
                                       "\(rows.map { shown.text("\($0)-name") ?? "" })")
        #expect((shown.elements["\(overrideRow)-postbacks"]?.width ?? 0) > 0)
        #expect(rows.contains { shown.text("\($0)-name") == "x\\u{2067}\\u{200B}y" })
        let longRow = try #require(rows.first { shown.elements["\($0)-name"]?.title?.count == 10_000 })
        #expect(shown.elements["\(longRow)-name"]?.title?.utf8.elementsEqual(long.utf8) == true)
        #expect((shown.text("\(longRow)-name")?.unicodeScalars.count ?? .max) <= PageText.defaultLimit)
        #expect((shown.elements["\(longRow)-name"]?.height ?? .infinity) < 300, "a few lines, not a column of W")
        let postbacks = try #require(shown.elements["\(longRow)-postbacks"])
        #expect(postbacks.width > 0 && postbacks.right <= shown.viewport, "the long name's numbers are on screen")
        #expect(html.contains("pur<span class=\"cf\" dir=\"ltr\">\\u{202E}</span>chase"), "the event name's too")
    }
}
