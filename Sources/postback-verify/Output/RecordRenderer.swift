import Attribution

/// Renders one result in the chosen output format; `Sendable`, so workers render in parallel.
struct RecordRenderer: Sendable {
    let format: CommandLineOptions.Format
    let text: TextRecord
    /// `--explain`: JSON Lines records add `"signed-string"` (text records get it from ``TextRecord/explain``).
    var explain = false

    /// The record as UTF-8 bytes, without its line terminator.
    func callAsFunction(_ result: VerificationResult, source: String, line: Int) -> [UInt8] {
        switch format {
        case .jsonl: JSONLinesRecord.render(result, source: source, line: line, explain: explain)
        case .text: Array(text.render(result, source: source, line: line).utf8)
        }
    }
}
