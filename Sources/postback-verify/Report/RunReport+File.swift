import Foundation

extension RunReport {
    /// Writes the report to `path` (`--report`): a self-contained HTML page when the path ends in `.html`, JSON
    /// otherwise; replaced whole (written beside it, then renamed), never left half written.
    func write(to path: String, summary: RunSummary, context: ReportContext) throws {
        let bytes = path.utf8.reversed().starts(with: ".html".utf8.reversed())
            ? ReportPage.render(self, summary: summary, context: context)
            : json(summary: summary, context: context)
        try Data(bytes).write(to: URL(fileURLWithPath: path), options: .atomic)
    }
}
