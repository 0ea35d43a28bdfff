import Attribution
import Foundation

/// One request's postback as the receiver keeps it: the bytes received, where and when, the verdict, and the JSON
/// Lines record (the command line's record, with the request id as its `source`).
struct ReceivedPostback: Sendable {
    /// The body exactly as received.
    let body: [UInt8]
    /// The request's id: the record's `source`, and what a later duplicate's `duplicate-of-source` names.
    let requestID: String
    let route: ReceiverRoute
    /// When the request arrived, in whole milliseconds since 1970 (UTC).
    let receivedMilliseconds: Int64
    /// The verdict: the verifier's, then marked duplicate if the store has seen the postback already.
    var result: VerificationResult
    /// `--schema`: what decodes a valid postback's conversion (``decoded``).
    let schema: ConversionSchema?

    init(body: [UInt8], requestID: String, route: ReceiverRoute, receivedMilliseconds: Int64,
         result: VerificationResult, schema: ConversionSchema? = nil) {
        self.body = body
        self.requestID = requestID
        self.route = route
        self.receivedMilliseconds = receivedMilliseconds
        self.result = result
        self.schema = schema
    }

    /// When it arrived, as a `Date`.
    var received: Date { Date(timeIntervalSince1970: Double(receivedMilliseconds) / 1000) }

    /// The JSON Lines record of its (final) result; with a schema, a valid AdAttributionKit postback's record has
    /// `decoded`, as of its arrival (as the command line's has, as of the run's start).
    var record: [UInt8] {
        let record = JSONLinesRecord.render(result, sourceLabel: requestID)
        return decoded.map { $0.adding(to: record) } ?? record
    }

    /// Its conversion as the schema reads it: nil without a schema, and for anything but a valid (so not
    /// duplicate) AdAttributionKit postback.
    var decoded: DecodedConversion? {
        guard let schema, result.verdict == .valid, let facts = ConversionFacts(result) else { return nil }
        return schema.decode(facts, arrival: received)
    }
}
