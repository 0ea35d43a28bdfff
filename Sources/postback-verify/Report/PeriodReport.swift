@_spi(CommandLine) import Attribution
import Foundation

/// `export --report FILE`: the run report of the received postbacks export reads, counted from their stored
/// records (``StoredRecord``) as a run counts the items it verifies; with `--schema`, each valid postback decoded
/// as of the time it was received, as the receiver decoded it; and, per UTC day of receipt, the trend.
struct PeriodReport {
    private(set) var summary = RunSummary()
    private(set) var report = RunReport(countsDays: true)
    let schema: ConversionSchema?
    /// Rows whose record is not one the report can read (not an object with a verdict): named in the summary
    /// line, never counted as an item.
    private(set) var unreadable = 0

    init(schema: ConversionSchema?) {
        self.schema = schema
    }

    /// Counts one exported row's record, received at `received`.
    mutating func count(_ record: JSONValue, received: Date) {
        guard let stored = StoredRecord(record) else {
            unreadable += 1
            return
        }
        summary.count(stored)
        let decoded = stored.facts.flatMap { schema?.decode($0, arrival: received) }
        if let facts = stored.facts {
            report.count(facts, decoded: decoded)
        }
        report.count(receivedAt: received, verdict: stored.verdict, decoded: decoded)
    }
}
