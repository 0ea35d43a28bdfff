import Foundation

/// A valid postback's conversion as a schema reads it (docs/schema.md): its window, the install times its
/// arrival allows, and, when the schema has the app, its campaign and what its value means.
public struct DecodedConversion: Sendable {
    /// The conversion window the postback closes.
    @_spi(CommandLine) @_spi(Servers) public let window: ConversionWindow
    /// The time the estimate starts from: when the postback arrived (the command line: when the run started).
    public let arrival: Date
    /// The first-launch times consistent with the arrival (``ConversionFacts/installRange(sentAt:)``).
    public let install: ClosedRange<Date>
    /// True when the install range comes from SKAdNetwork 1.0-3.0's timer, not from the window's delays.
    let usesSKAdNetworkTimer: Bool
    /// The values decoded, as the postback carries them.
    public let fineValue: Int?
    /// The coarse value decoded, as the postback carries it.
    public let coarseValue: CoarseConversionValue?
    /// False when the values are not covered by the signature (every AdAttributionKit postback's are not).
    public let valuesAreSigned: Bool
    /// True when the schema has the app for the arrival's date.
    public let appKnown: Bool
    /// The campaign name of the postback's `source-identifier` (SKAdNetwork 1.0-3.0: `campaign-id`), when the
    /// schema names it.
    public let campaign: String?
    /// What the value means: the fine value's meaning when the postback has a fine value the schema maps, else the
    /// coarse value's; nil when neither is mapped (or the postback carries no value).
    @_spi(CommandLine) @_spi(Servers) public let meaning: ConversionSchema.Meaning?
    /// The events the value stands for, in the schema's order (those of `meaning`); empty when the schema maps
    /// neither the fine nor the coarse value.
    public var events: [String] { meaning?.events ?? [] }
    /// The currency of the revenue, when the schema gives one.
    public let currency: String?
    /// The display name the schema gives the postback's signed ad network in the app's entry (version 2); nil
    /// when the entry does not name the network.
    public let network: String?
    /// The app's display name in the schema (version 2), when given.
    public let appName: String?
    /// True when the schema is version 2 or later: `decoded` then ends with `network` and `app-name`, null or
    /// not, while a version 1 schema's records keep their bytes.
    let namesNetworks: Bool
}

extension ConversionSchema {
    /// Decodes a valid postback's facts, as of `arrival` (which also picks the app's schema by its validity
    /// period, and a dated campaign by its days). Nil only when the facts name no conversion window.
    ///
    /// - Parameters:
    ///   - facts: the valid postback's facts (``ConversionFacts``).
    ///   - arrival: when the postback arrived (the command line: when the run started).
    /// - Returns: the decoded conversion, or nil when the facts name no window.
    public func decode(_ facts: ConversionFacts, arrival: Date) -> DecodedConversion? {
        guard let window = facts.window, let install = facts.installRange(sentAt: arrival) else { return nil }
        let app = self.app(facts.advertisedItemIdentifier, at: arrival)
        let meanings = app?.windows[window.number - 1]
        let meaning = facts.fineValue.flatMap { meanings?.fine[$0] }
            ?? facts.coarseValue.flatMap { meanings?.coarse[$0] }
        // An entry without networks (every version 1 entry) skips hashing the identifier.
        let network = app?.networks.isEmpty == false ? facts.adNetworkIdentifier.flatMap { app?.network($0) } : nil
        return DecodedConversion(
            window: window, arrival: arrival, install: install, usesSKAdNetworkTimer: facts.usesSKAdNetworkTimer,
            fineValue: facts.fineValue, coarseValue: facts.coarseValue, valuesAreSigned: facts.valuesAreSigned,
            appKnown: app != nil, campaign: app?.campaign(of: facts, network: network, at: arrival),
            meaning: meaning, currency: app?.currency, network: network?.name, appName: app?.name,
            namesNetworks: version >= 2)
    }
}

extension DecodedConversion {
    /// `,"decoded":{…}`: the member a valid record gains with a schema (docs/cli.md section 3), written before the
    /// record's closing brace. `times`, made once for the arrival, saves writing the same three times per record.
    /// - Parameters:
    ///   - out: the record's bytes so far, without its closing brace.
    ///   - times: the arrival's time members, made once; used only when made for this conversion's arrival.
    @_spi(CommandLine) @_spi(Servers) public func appendJSONMember(to out: inout [UInt8], times: DecodedTimes? = nil) {
        JSONLinesRecord.appendLiteral(#","decoded":{"window":"#, to: &out)
        JSONLinesRecord.appendDecimal(window.number, to: &out)
        if let times, times.arrival == arrival, !usesSKAdNetworkTimer,
           times.members.indices.contains(window.number - 1) {
            out.append(contentsOf: times.members[window.number - 1])
        } else {
            DecodedTimes.appendMembers(arrival: arrival, install: install, to: &out)
        }
        JSONLinesRecord.appendLiteral(#","fine-value":"#, to: &out)
        if let fineValue { JSONLinesRecord.appendDecimal(fineValue, to: &out) } else { null(&out) }
        JSONLinesRecord.appendLiteral(#","coarse-value":"#, to: &out)
        if let coarseValue { JSONValue.appendQuoted(coarseValue.rawValue, to: &out) } else { null(&out) }
        JSONLinesRecord.appendLiteral(#","values-signed":"#, to: &out)
        JSONLinesRecord.appendLiteral(valuesAreSigned ? "true" : "false", to: &out)
        JSONLinesRecord.appendLiteral(#","app-known":"#, to: &out)
        JSONLinesRecord.appendLiteral(appKnown ? "true" : "false", to: &out)
        JSONLinesRecord.appendLiteral(#","campaign":"#, to: &out)
        if let campaign { JSONValue.appendQuoted(campaign, to: &out) } else { null(&out) }
        JSONLinesRecord.appendLiteral(#","events":"#, to: &out)
        if let meaning {
            out.append(UInt8(ascii: "["))
            for (position, event) in meaning.events.enumerated() {
                if position > 0 { out.append(UInt8(ascii: ",")) }
                JSONValue.appendQuoted(event, to: &out)
            }
            out.append(UInt8(ascii: "]"))
        } else {
            null(&out)
        }
        JSONLinesRecord.appendLiteral(#","revenue":"#, to: &out)
        if let revenue = meaning?.revenue {
            JSONLinesRecord.appendLiteral(#"{"low":"#, to: &out)
            out.append(contentsOf: revenue.low.description.utf8)
            JSONLinesRecord.appendLiteral(#","high":"#, to: &out)
            out.append(contentsOf: revenue.high.description.utf8)
            JSONLinesRecord.appendLiteral(#","currency":"#, to: &out)
            if let currency { JSONValue.appendQuoted(currency, to: &out) } else { null(&out) }
            out.append(UInt8(ascii: "}"))
        } else {
            null(&out)
        }
        if namesNetworks {
            JSONLinesRecord.appendLiteral(#","network":"#, to: &out)
            if let network { JSONValue.appendQuoted(network, to: &out) } else { null(&out) }
            JSONLinesRecord.appendLiteral(#","app-name":"#, to: &out)
            if let appName { JSONValue.appendQuoted(appName, to: &out) } else { null(&out) }
        }
        out.append(UInt8(ascii: "}"))
    }

    private func null(_ out: inout [UInt8]) {
        JSONLinesRecord.appendLiteral("null", to: &out)
    }

    /// `record` (a whole JSON Lines record, `{…}`) with this member added before its closing brace.
    /// - Parameters:
    ///   - record: a whole JSON Lines record.
    ///   - times: the arrival's time members, made once; used only when made for this conversion's arrival.
    /// - Returns: the record with `decoded`; the record unchanged when it does not end with `}`.
    @_spi(CommandLine) @_spi(Servers) public func adding(to record: [UInt8], times: DecodedTimes? = nil) -> [UInt8] {
        var out = record
        guard out.last == UInt8(ascii: "}") else { return record }
        out.reserveCapacity(record.count + 512)
        out.removeLast()
        appendJSONMember(to: &out, times: times)
        out.append(UInt8(ascii: "}"))
        return out
    }
}

/// The time members of `decoded` (`,"arrival":…,"install-earliest":…,"install-latest":…`) for one arrival time,
/// written once per window: a run decodes every postback as of the same time, so these differ only by window.
@_spi(CommandLine) @_spi(Servers) public struct DecodedTimes: Sendable {
    /// The arrival time the members are written for.
    public let arrival: Date
    /// By window (1, 2, 3 at 0, 1, 2).
    let members: [[UInt8]]

    /// The three windows' time members for `arrival`.
    /// - Parameter arrival: the time every postback of the run is decoded as of.
    public init(arrival: Date) {
        self.arrival = arrival
        members = ConversionWindow.all.map { window in
            var out: [UInt8] = []
            Self.appendMembers(arrival: arrival, install: window.installRange(sentAt: arrival), to: &out)
            return out
        }
    }

    static func appendMembers(arrival: Date, install: ClosedRange<Date>, to out: inout [UInt8]) {
        JSONLinesRecord.appendLiteral(#","arrival":"#, to: &out)
        JSONValue.appendQuoted(RFC3339Timestamp.string(arrival), to: &out)
        JSONLinesRecord.appendLiteral(#","install-earliest":"#, to: &out)
        JSONValue.appendQuoted(RFC3339Timestamp.string(install.lowerBound), to: &out)
        JSONLinesRecord.appendLiteral(#","install-latest":"#, to: &out)
        JSONValue.appendQuoted(RFC3339Timestamp.string(install.upperBound), to: &out)
    }
}
