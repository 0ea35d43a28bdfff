import Attribution

/// Renders one result in the chosen output format; `Sendable`, so workers render in parallel.
struct RecordRenderer: Sendable {
    let format: CommandLineOptions.Format
    let text: TextRecord
    /// `--explain`: JSON Lines records add `"signed-string"` (text records get it from ``TextRecord/explain``).
    var explain = false

    func callAsFunction(_ result: VerificationResult, source: String, line: Int) -> String {
        switch format {
        case .jsonl: JSONLinesRecord.render(result, source: source, line: line, explain: explain)
        case .text: text.render(result, source: source, line: line)
        }
    }
}
