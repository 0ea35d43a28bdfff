import Testing
@_spi(CommandLine) @_spi(Servers) @_spi(Stores) @testable import Attribution

/// The fast path held to the general path, item by item.
enum FastPathComparison {
    /// Checks one item both ways; returns whether the fast path answered.
    @discardableResult
    static func compare(_ bytes: ArraySlice<UInt8>, verifier: AttributionVerifier, source: String = "item.json",
                        line: Int = 1, expectAnswer: Bool? = nil,
                        sourceLocation: SourceLocation = #_sourceLocation) -> Bool {
        let fast = FastPostbackPath(verifier)
        var record: [UInt8] = []
        let identifier = fast.appendRecord(for: bytes, source: source, line: line, to: &record)
        if let expectAnswer {
            #expect((identifier != nil) == expectAnswer, sourceLocation: sourceLocation)
        }
        guard let identifier else {
            #expect(record.isEmpty, "a declined item must leave the record untouched", sourceLocation: sourceLocation)
            return false
        }
        let general = verifier.verify(bytes)
        #expect(general.verdict == .valid, "\(general.errors)", sourceLocation: sourceLocation)
        #expect(general.warnings.isEmpty, "\(general.warnings)", sourceLocation: sourceLocation)
        #expect(ExactString(identifier) == general.deduplicationKey, sourceLocation: sourceLocation)
        // D2 compares what the fast path saw with what the general path saw: the same fingerprint, byte for byte.
        if var prepared = fast.prepare(bytes, source: source, line: line) {
            fast.checkSignature(&prepared)
            #expect(fast.record(of: prepared)?.content == ContentFingerprint(general), sourceLocation: sourceLocation)
        }
        let expected = JSONLinesRecord.render(general, source: source, line: line)
        #expect(record == expected, """
            fast:    \(String(decoding: record, as: UTF8.self))
            general: \(String(decoding: expected, as: UTF8.self))
            """, sourceLocation: sourceLocation)
        return true
    }
}
