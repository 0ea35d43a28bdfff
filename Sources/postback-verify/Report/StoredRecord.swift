@_spi(CommandLine) import Attribution
import Foundation

/// A record as a receiver stored it (an exported row's `record`), read back for the run report of a period
/// (`export --report`): what the summary and the report count, taken from the record's own members, as the
/// command line counts the items it verifies. Words are matched by their exact bytes (`ExactlySpelled`).
struct StoredRecord {
    let verdict: Verdict
    /// The first error's code (`""` for an error without one); nil when valid.
    let firstErrorCode: String?
    /// The rules of the warnings, in the record's order.
    let warningRules: [String]
    /// The environment of the key that verified a valid item.
    let environment: KeyEnvironment?
    /// True when the first error is D1's `duplicate`.
    let isDuplicate: Bool
    /// A valid postback's conversion facts (``ConversionFacts``), from its `fields`, `unsigned` and `tier`, as
    /// ``ConversionFacts/init(_:)`` reads them from a result; nil for anything else.
    let facts: ConversionFacts?

    /// Nil when `record` is not an object with a `verdict` of `valid` or `invalid`.
    init?(_ record: JSONValue) {
        guard let object = record.objectValue,
              let verdictText = object["verdict"]?.stringValue,
              let verdict = Verdict(exactly: verdictText) else { return nil }
        self.verdict = verdict
        let errors = object["errors"].flatMap(Self.array) ?? []
        let firstCode = errors.first.map { $0.objectValue?["code"]?.stringValue ?? "" }
        firstErrorCode = verdict == .valid ? nil : (firstCode ?? "")
        isDuplicate = firstCode.map { $0.utf8.elementsEqual(AttributionError.Code.duplicate.rawValue.utf8) } ?? false
        warningRules = (object["warnings"].flatMap(Self.array) ?? []).compactMap { $0.objectValue?["rule"]?.stringValue }
        environment = object["environment"]?.stringValue.flatMap { KeyEnvironment(exactly: $0) }
        facts = verdict == .valid ? Self.facts(object, environment: environment) : nil
    }

    private static func facts(_ record: JSONObject, environment: KeyEnvironment?) -> ConversionFacts? {
        guard let kind = record["kind"]?.stringValue.flatMap({ ItemKind(exactly: $0) }),
              let fields = record["fields"]?.objectValue else { return nil }
        let unsigned = record["unsigned"]?.objectValue
        let fine = unsigned?["conversion-value"]?.numberValue?.int64Value.map { Int($0) }
        let coarse = unsigned?["coarse-conversion-value"]?.stringValue.flatMap { CoarseConversionValue(exactly: $0) }
        switch kind {
        case .postback:
            guard let app = fields["advertised-item-identifier"]?.numberValue?.uint64Value,
                  let source = fields["source-identifier"]?.stringValue,
                  let index = fields["postback-sequence-index"]?.numberValue?.int64Value else { return nil }
            let tier = record["tier"]?.numberValue?.int64Value.map { Int($0) }
            return ConversionFacts(environment: environment, advertisedItemIdentifier: app, sourceIdentifier: source,
                                   postbackSequenceIndex: Int(index), fineValue: fine, coarseValue: coarse,
                                   valuesAreSigned: false, tier: tier,
                                   adNetworkIdentifier: fields["ad-network-identifier"]?.stringValue
                                       .map(ExactString.init))
        case .skadnetwork:
            // The signed members as verified (1.0 has no `version`; before 4.0 no index, and a campaign id).
            let version = fields["version"].map { $0.stringValue.flatMap { SKAdNetworkVersion(exactly: $0) } }
                ?? .v1_0
            guard let version, let app = fields["app-id"]?.numberValue?.uint64Value else { return nil }
            let source = fields["source-identifier"]?.stringValue
            let campaign = source == nil ? fields["campaign-id"]?.numberValue?.uint64Value : nil
            guard source != nil || campaign != nil else { return nil }
            let index = fields["postback-sequence-index"]?.numberValue?.int64Value ?? 0
            return ConversionFacts(environment: environment, advertisedItemIdentifier: app, sourceIdentifier: source,
                                   postbackSequenceIndex: Int(index), fineValue: fine, coarseValue: coarse,
                                   valuesAreSigned: false, tier: nil, campaignID: campaign,
                                   skAdNetworkVersion: version,
                                   adNetworkIdentifier: fields["ad-network-id"]?.stringValue.map(ExactString.init))
        case .impression, .unknown:
            return nil
        }
    }

    private static func array(_ value: JSONValue) -> [JSONValue]? {
        if case .array(let elements) = value { return elements }
        return nil
    }
}

extension RunSummary {
    /// Counts one stored record, as ``count(_:environment:expectation:)`` counts an item verified now.
    mutating func count(_ record: StoredRecord) {
        count(verdict: record.verdict, firstErrorCode: record.firstErrorCode, warningRules: record.warningRules,
              environment: record.environment, isDuplicate: record.isDuplicate, expectation: nil)
    }
}

extension RawRepresentable where Self: CaseIterable, RawValue == String {
    /// The case whose raw value has exactly these Unicode scalars: compared by code points, since the synthesised
    /// `init(rawValue:)` compares with `String ==`, which accepts canonically equivalent spellings a writer never
    /// wrote.
    fileprivate init?(exactly text: String) {
        guard let match = Self.allCases.first(where: { $0.rawValue.utf8.elementsEqual(text.utf8) }) else { return nil }
        self = match
    }
}
