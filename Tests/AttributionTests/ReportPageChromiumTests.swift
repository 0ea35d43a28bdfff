import Foundation
import Testing

/// Issue 24 item 3: the HTML report as a person sees it. Headless Chromium renders the page of a fixture run,
/// takes a screenshot, and the numbers in its DOM are checked against the JSON report of the same run.
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

    /// Every element's id and text, as `id="…">text<` finds them in the DOM Chromium built.
    static func numbers(_ dom: String) -> [String: String] {
        var found: [String: String] = [:]
        for match in dom.matches(of: /id="([^"]+)">([^<]*)</) {
            found[String(match.1)] = String(match.2)
        }
        return found
    }

    @Test("The page Chromium renders shows the JSON report's numbers, and a screenshot is taken",
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
        let shot = scratch.url("report.png")
        _ = try Self.chromium(["--screenshot=\(shot.path)", "--window-size=1200,1600"], page: page,
                              profile: scratch.url("profile"))
        let png = try Data(contentsOf: shot)
        #expect(png.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]), "a PNG")
        #expect(png.count > 20_000, "a page with something on it (\(png.count) bytes)")

        let shown = Self.numbers(try Self.chromium(["--dump-dom"], page: page, profile: scratch.url("profile")))
        for name in ["items", "valid", "invalid", "duplicates", "warnings"] {
            #expect(shown["count-\(name)"] == (report[name] as? Int).map(String.init), "\(name)")
        }
        let environments = try #require(report["valid-by-environment"] as? [String: Int])
        #expect(shown["count-development"] == environments["development"].map(String.init))
        for (prefix, member) in [("reason", "invalid-reasons"), ("rule", "warnings-by-rule"),
                                 ("environment", "valid-by-environment"), ("tier", "tiers"),
                                 ("coarse", "coarse-values")] {
            let counts = try #require(report[member] as? [String: Int], "\(member)")
            #expect(!counts.isEmpty, "\(member)")
            for (name, count) in counts {
                #expect(shown["\(prefix)-\(name)"] == String(count), "\(member) \(name)")
            }
        }
        for (index, window) in try #require(report["windows"] as? [[String: Any]]).enumerated() {
            let number = index + 1
            #expect(shown["window-\(number)-postbacks"] == (window["postbacks"] as? Int).map(String.init))
            #expect(shown["window-\(number)-without-value"] == (window["without-value"] as? Int).map(String.init))
            let rate = try #require(window["null-rate"] as? Double)
            let text = try #require(shown["window-\(number)-null-rate"])
            let percent = try #require(Double(text.dropLast()), "\(text)")
            #expect(text.hasSuffix("%") && abs(percent - rate * 100) <= 0.05, "window \(number): \(text)")
        }
        for (value, count) in try #require(report["fine-values"] as? [Int]).enumerated() {
            #expect(shown["fine-\(value)"] == (count > 0 ? String(count) : nil), "fine value \(value)")
        }
        let campaigns = try #require(report["campaigns"] as? [[String: Any]])
        #expect(!campaigns.isEmpty)
        for (row, campaign) in campaigns.enumerated() {
            #expect(shown["campaign-\(row)-postbacks"] == (campaign["postbacks"] as? Int).map(String.init))
            #expect(shown["campaign-\(row)-window-1"] == (campaign["window-1-postbacks"] as? Int).map(String.init))
            for bound in ["low", "high"] {
                let onPage = try #require(shown["campaign-\(row)-revenue-\(bound)"].flatMap(Double.init))
                let inJSON = try #require(campaign["revenue-\(bound)"] as? NSNumber).doubleValue
                #expect(abs(onPage - inJSON) < 0.000001, "campaign \(row) revenue \(bound)")
            }
            // A name with markup in it (the example schema's "Retargeting <lapsed>") reads as text on the page.
            let name = (campaign["campaign"] as? String) ?? "(unnamed)"
            #expect(shown["campaign-\(row)-name"].map { $0.replacingOccurrences(of: "&lt;", with: "<")
                .replacingOccurrences(of: "&gt;", with: ">") } == name, "campaign \(row) name")
        }
    }
}
