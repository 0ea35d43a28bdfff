import Foundation

extension RunReport {
    /// Writes the report to `path` (`--report`): a self-contained HTML page when the path ends in `.html` in any
    /// case (``isPage(_:)``), JSON otherwise; replaced whole (written beside it, then renamed), never left half
    /// written.
    func write(to path: String, summary: RunSummary, context: ReportContext) throws {
        let bytes = Self.isPage(path)
            ? ReportPage.render(self, summary: summary, context: context)
            : json(summary: summary, context: context)
        try Data(bytes).write(to: URL(fileURLWithPath: path), options: .atomic)
    }

    /// True when `path` ends in `.html`, its letters in either case (`r.HTML`, `r.Html`), compared as ASCII bytes:
    /// a case mapping of Unicode (`İ`, `K` KELVIN SIGN) could make another name end in "html".
    static func isPage(_ path: String) -> Bool {
        let suffix = Array(".html".utf8)
        let tail = path.utf8.suffix(suffix.count)
        guard tail.count == suffix.count else { return false }
        return zip(tail, suffix).allSatisfy { byte, expected in
            let lowered = (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte | 0x20 : byte
            return lowered == expected
        }
    }
}
